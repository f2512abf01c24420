package handlertest

import (
	"errors"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// failedText is the status message of a task whose agent broke: the
// agent's own words never reach a caller.
const failedText = "The agent could not complete the task."

// A blocking send answers the task as its run settled it: completed, the
// agent's chunks merged into one text part of one artifact, the message
// in the history with the task's ids; the agent was asked as the owner,
// in the owner's own context id.
func testSendBlocking(t *testing.T, e *env) {
	e.agent.PlayAlways(Text("Hel"), Text("lo"), Status(protocol.StateWorking, "thinking"), Text("!"))
	task := e.sendTask(alice, sendParams(userMessage("m-1", "hi"), true))
	if task.Status.State != protocol.StateCompleted {
		t.Fatalf("state %s, want completed", task.Status.State)
	}
	if len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != 1 || partsText(task.Artifacts[0].Parts) != "Hello!" {
		t.Fatalf("artifacts %+v, want one of one part, Hello!", task.Artifacts)
	}
	if !isUUID(task.ID) || !isUUID(task.ContextID) || task.ID == task.ContextID {
		t.Fatalf("ids %q %q are not distinct uuids", task.ID, task.ContextID)
	}
	if len(task.History) != 1 {
		t.Fatalf("history %+v, want the one message", task.History)
	}
	if m := task.History[0]; m.ID != "m-1" || m.TaskID != task.ID || m.ContextID != task.ContextID ||
		m.Role != protocol.RoleUser || partsText(m.Parts) != "hi" {
		t.Fatalf("history message %+v", m)
	}
	req := e.agent.Request(t)
	if req.TaskID != task.ID || req.User != alice || req.Message.ID != "m-1" || len(req.History) != 0 ||
		req.ContextID != AgentContextID(e.key, alice, task.ContextID) {
		t.Fatalf("the agent was asked %+v", req)
	}
	got := e.getTask(alice, task.ID)
	if got.Status.State != protocol.StateCompleted || len(got.Artifacts) != 1 || partsText(got.Artifacts[0].Parts) != "Hello!" ||
		got.Artifacts[0].ID != task.Artifacts[0].ID {
		t.Fatalf("GetTask %+v differs from the send's answer", got)
	}
}

// A non-blocking send answers the task as created, submitted, while its
// run goes on; GetTask sees it working, then completed.
func testSendNonBlocking(t *testing.T, e *env) {
	task := e.sendTask(alice, sendParams(userMessage("m-1", "hi"), false))
	if task.Status.State != protocol.StateSubmitted {
		t.Fatalf("state %s, want submitted", task.Status.State)
	}
	run := e.agent.Next(t)
	if run.Req.TaskID != task.ID || run.Req.User != alice {
		t.Fatalf("the agent was asked %+v", run.Req)
	}
	if got := e.getTask(alice, task.ID); got.Status.State != protocol.StateWorking {
		t.Fatalf("GetTask while running: %s, want working", got.Status.State)
	}
	run.Send(t, Text("done"))
	run.End()
	done := e.waitState(alice, task.ID, protocol.StateCompleted)
	if len(done.Artifacts) != 1 || partsText(done.Artifacts[0].Parts) != "done" {
		t.Fatalf("artifacts %+v", done.Artifacts)
	}
}

// sendAnswer is what a send made in the background answered.
type sendAnswer struct {
	ev   *protocol.Event
	perr *protocol.Error
}

// sendAsync sends p as owner in the background.
func (e *env) sendAsync(owner string, p *protocol.SendParams) <-chan sendAnswer {
	ch := make(chan sendAnswer, 1)
	ctx := e.ctx()
	go func() {
		ev, perr := e.c.Send(ctx, owner, p)
		ch <- sendAnswer{ev, perr}
	}()
	return ch
}

// answered waits for a background send's Task.
func answered(t *testing.T, ch <-chan sendAnswer) *protocol.Task {
	t.Helper()
	ev := answeredEvent(t, ch)
	if ev.Task == nil {
		t.Fatalf("send answered %+v, want a Task", ev)
	}
	return ev.Task
}

// answeredEvent waits for a background send's answer.
func answeredEvent(t *testing.T, ch <-chan sendAnswer) *protocol.Event {
	t.Helper()
	select {
	case a := <-ch:
		if a.perr != nil {
			t.Fatalf("send: %v", a.perr)
		}
		if a.ev == nil {
			t.Fatal("send answered nothing")
		}
		return a.ev
	case <-time.After(waitTimeout):
		t.Fatal("the send did not answer")
		return nil
	}
}

// Multi-turn: a blocking send returns at input-required with the agent's
// question; the caller continues the task by its id, the agent sees the
// earlier turns in the same context id, a message while it runs is
// refused, and the task completes.
func testSendMultiTurn(t *testing.T, e *env) {
	first := e.sendAsync(alice, sendParams(userMessage("m-1", "Weather?"), true))
	run := e.agent.Next(t)
	if len(run.Req.History) != 0 {
		t.Fatalf("the first turn has history %+v", run.Req.History)
	}
	agentCtx := run.Req.ContextID
	run.Send(t, Status(protocol.StateInputRequired, "Which city?"))
	task := answered(t, first)
	if task.Status.State != protocol.StateInputRequired {
		t.Fatalf("state %s, want input-required", task.Status.State)
	}
	if m := task.Status.Message; m == nil || m.Role != protocol.RoleAgent || partsText(m.Parts) != "Which city?" {
		t.Fatalf("status message %+v", task.Status.Message)
	}
	if agentCtx != AgentContextID(e.key, alice, task.ContextID) || agentCtx == task.ContextID {
		t.Fatalf("agent context %q for the caller's %q", agentCtx, task.ContextID)
	}

	m := continueMessage("m-2", "Paris", task.ID)
	m.ContextID = task.ContextID
	second := e.sendAsync(alice, sendParams(m, true))
	run = e.agent.Next(t)
	if run.Req.TaskID != task.ID || run.Req.ContextID != agentCtx || run.Req.Message.ID != "m-2" {
		t.Fatalf("the second turn was asked %+v", run.Req)
	}
	if h := run.Req.History; len(h) != 2 || h[0].ID != "m-1" || h[1].Role != protocol.RoleAgent || partsText(h[1].Parts) != "Which city?" {
		t.Fatalf("the second turn's history %+v", run.Req.History)
	}
	_, perr := e.c.Send(e.ctx(), alice, sendParams(continueMessage("m-x", "again", task.ID), true))
	wantError(t, "a message to a running task", perr, protocol.CodeUnsupportedOperation)

	run.Send(t, Text("Sunny in Paris"))
	run.End()
	done := answered(t, second)
	if done.Status.State != protocol.StateCompleted || done.ID != task.ID || done.ContextID != task.ContextID {
		t.Fatalf("the second turn answered %s %s %s", done.Status.State, done.ID, done.ContextID)
	}
	if got := roles(done.History); got != "user,agent,user" {
		t.Fatalf("history roles %s", got)
	}
	if len(done.Artifacts) != 1 || partsText(done.Artifacts[0].Parts) != "Sunny in Paris" {
		t.Fatalf("artifacts %+v", done.Artifacts)
	}
}

// askOrAnswer asks for input when the message says "ask" and answers "ok"
// otherwise.
func askOrAnswer(req *upstream.RunRequest) []Step {
	if partsText(req.Message.Parts) == "ask" {
		return []Step{Status(protocol.StateInputRequired, "?")}
	}
	return []Step{Text("ok")}
}

// A send the service refuses changes nothing: to a settled task -32004,
// to an unknown one or another owner's -32001, a contextId that is not
// the task's or a message without parts -32602.
func testSendRefusals(t *testing.T, e *env) {
	e.agent.Play(askOrAnswer)
	done := e.sendTask(alice, sendParams(userMessage("m-1", "hi"), true))
	waiting := e.sendTask(alice, sendParams(userMessage("m-2", "ask"), true))
	if done.Status.State != protocol.StateCompleted || waiting.Status.State != protocol.StateInputRequired {
		t.Fatalf("states %s %s", done.Status.State, waiting.Status.State)
	}
	otherContext := continueMessage("m-5", "x", waiting.ID)
	otherContext.ContextID = "not-the-tasks"
	noParts := userMessage("m-6", "x")
	noParts.Parts = nil
	for _, tc := range []struct {
		name  string
		owner string
		m     protocol.Message
		code  int
	}{
		{"to a completed task", alice, continueMessage("m-3", "x", done.ID), protocol.CodeUnsupportedOperation},
		{"to an unknown task", alice, continueMessage("m-4", "x", "no-such-task"), protocol.CodeTaskNotFound},
		{"to another owner's task", bob, continueMessage("m-4", "x", waiting.ID), protocol.CodeTaskNotFound},
		{"anonymous to an owner's task", "", continueMessage("m-4", "x", waiting.ID), protocol.CodeTaskNotFound},
		{"another context", alice, otherContext, protocol.CodeInvalidParams},
		{"no parts", alice, noParts, protocol.CodeInvalidParams},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, perr := e.c.Send(e.ctx(), tc.owner, sendParams(tc.m, true))
			wantError(t, "send", perr, tc.code)
		})
	}
	if got := e.getTask(alice, waiting.ID); got.Status.State != protocol.StateInputRequired || len(got.History) != 2 {
		t.Fatalf("a refused send changed the task: %s, %d messages", got.Status.State, len(got.History))
	}
}

// An agent that cannot be called or breaks fails its task with the generic message (its
// words stay in the log); one that fails or rejects the task itself says
// why in its own words.
func testSendAgentFails(t *testing.T, e *env) {
	e.agent.Play(func(req *upstream.RunRequest) []Step {
		switch partsText(req.Message.Parts) {
		case "refuse":
			return []Step{refuse(errors.New("dial tcp 10.0.0.7:80: connection refused"))}
		case "break":
			return []Step{Text("partial"), fail(errors.New("unexpected EOF from 10.0.0.7"))}
		case "fail":
			return []Step{{Event: upstream.Event{Kind: upstream.EventStatus, State: protocol.StateFailed, Detail: "secret stack trace"}}}
		case "quota":
			return []Step{Status(protocol.StateFailed, "Quota exceeded")}
		}
		return []Step{Status(protocol.StateRejected, "No.")}
	})
	for _, tc := range []struct {
		say   string
		state protocol.TaskState
		words string
	}{
		{"refuse", protocol.StateFailed, failedText},
		{"break", protocol.StateFailed, failedText},
		{"fail", protocol.StateFailed, failedText},
		{"quota", protocol.StateFailed, "Quota exceeded"},
		{"reject", protocol.StateRejected, "No."},
	} {
		t.Run(tc.say, func(t *testing.T) {
			task := e.sendTask(alice, sendParams(userMessage("m-"+tc.say, tc.say), true))
			if task.Status.State != tc.state {
				t.Fatalf("state %s, want %s", task.Status.State, tc.state)
			}
			if m := task.Status.Message; m == nil || m.Role != protocol.RoleAgent || partsText(m.Parts) != tc.words {
				t.Fatalf("status message %+v, want %q", task.Status.Message, tc.words)
			}
		})
	}
}

// historyLength cuts the history a task is answered with to its newest
// messages, 0 to none, on GetTask and on a send alike.
func testHistoryLength(t *testing.T, e *env) {
	e.agent.PlayAlways(Status(protocol.StateInputRequired, "more?"))
	task := e.sendTask(alice, sendParams(userMessage("m-1", "a"), true))
	e.sendTask(alice, sendParams(continueMessage("m-2", "b", task.ID), true))
	n := func(v int) *int { return &v }
	for _, tc := range []struct {
		name   string
		length *int
		want   string
		first  string
	}{
		{"unset", nil, "user,agent,user,agent", "m-1"},
		{"2", n(2), "user,agent", "m-2"},
		{"0", n(0), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, perr := e.c.GetTask(e.ctx(), alice, &protocol.GetTaskParams{ID: task.ID, HistoryLength: tc.length})
			if perr != nil {
				t.Fatal(perr)
			}
			if roles(got.History) != tc.want || (tc.first != "" && got.History[0].ID != tc.first) {
				t.Fatalf("history %s (%+v), want %s from %s", roles(got.History), got.History, tc.want, tc.first)
			}
		})
	}
	p := sendParams(continueMessage("m-3", "c", task.ID), true)
	p.HistoryLength = n(1)
	if got := e.sendTask(alice, p); len(got.History) != 1 || got.History[0].Role != protocol.RoleAgent {
		t.Fatalf("a send with historyLength 1 answered history %+v", got.History)
	}
}

// What the agent makes becomes the task's artifacts: text chunks merged
// into one text part until a part of another kind comes (a text part
// the agent gives whole extends the text after it), in order, in the
// main artifact; an artifact of its own is a second artifact, under the
// agent's name and an id of the service's.
func testSendArtifacts(t *testing.T, e *env) {
	plain := Step{Event: upstream.Event{Kind: upstream.EventParts, Parts: []protocol.Part{{Kind: protocol.PartText, Text: "C"}}}}
	own := Step{Event: upstream.Event{Kind: upstream.EventArtifact, Artifact: &protocol.Artifact{ID: "agent-chosen", Name: "report",
		Parts: []protocol.Part{{Kind: protocol.PartText, Text: "r"}}}}}
	e.agent.Play(func(req *upstream.RunRequest) []Step {
		if partsText(req.Message.Parts) == "merge" {
			return []Step{Text("a"), Text("b"), data(`{"n":1}`), Text("x"), Text("y"), plain, Text("D")}
		}
		return []Step{Text("a"), data(`{"k":1}`), Text("b"), own}
	})
	merged := e.sendTask(alice, sendParams(userMessage("m-1", "merge"), true))
	if len(merged.Artifacts) != 1 || len(merged.Artifacts[0].Parts) != 4 || partsText(merged.Artifacts[0].Parts) != `ab|{"n":1}|xy|CD` {
		t.Fatalf("merged artifacts %+v, want one of ab, the data, xy, CD", merged.Artifacts)
	}
	task := e.sendTask(alice, sendParams(userMessage("m-2", "two"), true))
	if len(task.Artifacts) != 2 {
		t.Fatalf("artifacts %+v, want the main one and the agent's", task.Artifacts)
	}
	main, report := task.Artifacts[0], task.Artifacts[1]
	if partsText(main.Parts) != `a|{"k":1}|b` || main.Parts[1].Kind != protocol.PartData || !sameJSON(main.Parts[1].Data, []byte(`{"k":1}`)) {
		t.Fatalf("main artifact %+v", main)
	}
	if report.Name != "report" || partsText(report.Parts) != "r" || report.ID == "agent-chosen" || report.ID == "" || report.ID == main.ID {
		t.Fatalf("the agent's artifact %+v (main %s)", report, main.ID)
	}
}

// A blocking send whose config is unloaded while it waits answers the
// task as it is then, working; its run goes on and completes it.
func testSendUnload(t *testing.T, e *env) {
	first := e.sendAsync(alice, sendParams(userMessage("m-1", "hi"), true))
	run := e.agent.Next(t)
	e.unload()
	task := answered(t, first)
	if task.Status.State != protocol.StateWorking {
		t.Fatalf("the send answered %s, want working", task.Status.State)
	}
	run.Send(t, Text("still"))
	run.End()
	if done := e.waitState(alice, task.ID, protocol.StateCompleted); partsText(done.Artifacts[0].Parts) != "still" {
		t.Fatalf("artifacts %+v", done.Artifacts)
	}
}

package handlertest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// Exactly-once sends: a send its owner made before, under the same
// messageId, is answered from the first send's task and never reaches the
// agent; another message under the id is -32602; another owner's id is
// its own.

// sendsRetried: retries of a send while its run goes on and after it
// ended, blocking, non-blocking and streaming, get the one task.
func testSendsRetried(t *testing.T, e *env) {
	m := userMessage("m-1", "hi")
	first := e.sendAsync(alice, sendParams(m, true))
	run := e.agent.Next(t)
	// A non-blocking retry answers the task as it is: running.
	task := e.sendTask(alice, sendParams(m, false))
	if task.ID != run.Req.TaskID || task.Status.State != protocol.StateWorking {
		t.Fatalf("a non-blocking retry answered %s (%s), want %s working", task.ID, task.Status.State, run.Req.TaskID)
	}
	// A blocking retry waits for the run, as the first send does.
	second := e.sendAsync(alice, sendParams(m, true))
	// A streaming retry is the task's stream from now on.
	evs := e.stream(alice, sendParams(m, false))
	if ev := next(t, evs); ev.Task == nil || ev.Task.ID != task.ID || ev.Task.Status.State != protocol.StateWorking {
		t.Fatalf("a streaming retry opened with %s, want task(working) %s", shape(ev), task.ID)
	}
	notAnswered(t, second, "a blocking retry", "while the first send's run goes on")
	run.Send(t, Text("Hel"))
	run.Send(t, Text("lo"))
	run.End()
	want := answered(t, first)
	for _, got := range []*protocol.Task{answered(t, second), e.sendTask(alice, sendParams(m, true))} {
		if got.ID != want.ID || got.Status.State != protocol.StateCompleted || len(got.Artifacts) != 1 ||
			partsText(got.Artifacts[0].Parts) != "Hello" || got.Artifacts[0].ID != want.Artifacts[0].ID {
			t.Fatalf("a retry answered %s %+v, want the first send's completed task %s", got.ID, got, want.ID)
		}
	}
	if _, got := restClean(t, evs); got != `artifact("Hel",append=false,last=false) artifact("lo",append=true,last=false) `+
		`artifact("",append=true,last=true) status(completed)` {
		t.Fatalf("the streaming retry's events: %s", got)
	}
	// Settled: a streaming retry is the Task alone.
	if _, got := restClean(t, e.stream(alice, sendParams(m, false))); got != "task(completed)" {
		t.Fatalf("a streaming retry of a completed task: %s", got)
	}
	e.wantCalls(t, 1)
	if h := want.History; len(h) != 1 || h[0].ID != "m-1" {
		t.Fatalf("history %+v: the retries added to it", h)
	}
}

// sendsConcurrent: twenty sends of one message at once run the agent
// once, and every one answers the same completed task.
func testSendsConcurrent(t *testing.T, e *env) {
	e.agent.PlayAlways(Text("once"))
	m := userMessage("m-1", "hi")
	var id string
	for _, ev := range e.sendTwenty(t, alice, sendParams(m, true)) {
		task := ev.Task
		if id == "" {
			id = task.ID
		}
		if task == nil || task.ID != id || task.Status.State != protocol.StateCompleted || partsText(task.Artifacts[0].Parts) != "once" {
			t.Fatalf("a send answered %s (%s), want %s completed", task.ID, task.Status.State, id)
		}
	}
	e.wantCalls(t, 1)
	e.wantTasks(t, alice, 1)
}

// sendsReusedID: another message under a used messageId is -32602 and
// runs nothing; only what the message says counts, so the same message
// with another configuration (history length, blocking) is a retry.
// Another owner's messageId is its own: the same id makes bob a task.
func testSendsReusedID(t *testing.T, e *env) {
	e.agent.PlayAlways(Text("ok"))
	m := userMessage("m-1", "hi")
	task := e.sendTask(alice, sendParams(m, true))
	other := m
	other.Parts = []protocol.Part{{Kind: protocol.PartText, Text: "hi!"}}
	_, perr := e.c.Send(e.ctx(), alice, sendParams(other, true))
	wantError(t, "another message under a used messageId", perr, protocol.CodeInvalidParams)
	_, perr = e.c.Stream(e.ctx(), alice, sendParams(other, false))
	wantError(t, "another message streamed under a used messageId", perr, protocol.CodeInvalidParams)
	same := sendParams(m, false)
	hl := 0
	same.HistoryLength = &hl
	if got := e.sendTask(alice, same); got.ID != task.ID || len(got.History) != 0 {
		t.Fatalf("a retry with historyLength 0 answered %s with %d messages, want %s with none", got.ID, len(got.History), task.ID)
	}
	bobs := e.sendTask(bob, sendParams(m, true))
	if bobs.ID == task.ID || bobs.Status.State != protocol.StateCompleted {
		t.Fatalf("bob's send of alice's messageId answered %s (%s), want a task of his own", bobs.ID, bobs.Status.State)
	}
	e.wantCalls(t, 2)
	e.wantTasks(t, alice, 1)
	e.wantTasks(t, bob, 1)
}

// sendsRetriedTurn: the message that continues a task runs its turn
// once: a retry while the turn runs waits for it, one after it is
// answered from the task, where a new message would be refused (-32004),
// and the turn's message is in the history once.
func testSendsRetriedTurn(t *testing.T, e *env) {
	first := e.sendAsync(alice, sendParams(userMessage("m-1", "Weather?"), true))
	run := e.agent.Next(t)
	run.Send(t, Status(protocol.StateInputRequired, "Which city?"))
	task := answered(t, first)
	m := continueMessage("m-2", "Paris", task.ID)
	turn := e.sendAsync(alice, sendParams(m, true))
	run = e.agent.Next(t)
	retry := e.sendAsync(alice, sendParams(m, true))
	notAnswered(t, retry, "a retry of the turn", "while it runs")
	run.Send(t, Text("Sunny"))
	run.End()
	want := answered(t, turn)
	for _, got := range []*protocol.Task{answered(t, retry), e.sendTask(alice, sendParams(m, true))} {
		if got.ID != task.ID || got.Status.State != protocol.StateCompleted || partsText(got.Artifacts[0].Parts) != "Sunny" {
			t.Fatalf("a retry of the turn answered %s (%s), want %s completed", got.ID, got.Status.State, task.ID)
		}
	}
	n := 0
	for _, h := range want.History {
		if h.ID == "m-2" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the turn's message is %d times in the history", n)
	}
	_, perr := e.c.Send(e.ctx(), alice, sendParams(continueMessage("m-3", "Paris", task.ID), true))
	wantError(t, "a new message to the completed task", perr, protocol.CodeUnsupportedOperation)
	e.wantCalls(t, 2)
	if ids := historyIDs(e.getTask(alice, task.ID)); !slices.Equal(ids, []string{"m-1", "", "m-2"}) {
		t.Fatalf("history ids %v", ids)
	}
}

// notAnswered fails t if the background send ch answers within a moment:
// what is waiting, and should be while (the reason).
func notAnswered(t *testing.T, ch <-chan sendAnswer, what, while string) {
	t.Helper()
	select {
	case a := <-ch:
		t.Fatalf("%s answered %+v %s", what, a, while)
	case <-time.After(30 * time.Millisecond):
	}
}

// wantCalls waits for the runs to end and fails t unless the agent was
// called n times in all.
func (e *env) wantCalls(t *testing.T, n int) {
	t.Helper()
	e.waitIdle()
	if got := e.agent.calls.Load(); got != int64(n) {
		t.Fatalf("the agent was called %d times, want %d", got, n)
	}
}

// historyIDs are the ids of task's user messages, "" for each agent
// message (whose ids the server makes).
func historyIDs(task *protocol.Task) []string {
	var ids []string
	for _, m := range task.History {
		if m.Role == protocol.RoleAgent {
			ids = append(ids, "")
			continue
		}
		ids = append(ids, m.ID)
	}
	return ids
}

// repliesRetried (message replies): a retry while the agent answers the
// first send waits for it and gets the same Message, as does one after,
// blocking, not, or streaming; another message under the id is -32602;
// twenty at once call the agent once; a reply that failed is run again.
func testRepliesRetried(t *testing.T, e *env) {
	m := userMessage("m-1", "hi")
	first := e.sendAsync(alice, sendParams(m, true))
	run := e.agent.Next(t)
	retry := e.sendAsync(alice, sendParams(m, false))
	notAnswered(t, retry, "a retry", "while the first send's agent answers")
	run.Send(t, Text("Hel"))
	run.Send(t, Text("lo"))
	run.End()
	want := repliedMessage(t, first)
	if got := repliedMessage(t, retry); got.ID != want.ID || partsText(got.Parts) != "Hello" || got.ContextID != want.ContextID {
		t.Fatalf("the retry answered %+v, want the first send's %+v", got, want)
	}
	got, sh := restClean(t, e.stream(alice, sendParams(m, true)))
	if sh != `message("Hello")` || got[0].Message.ID != want.ID {
		t.Fatalf("a streaming retry: %s, want the first send's message", sh)
	}
	other := m
	other.Parts = []protocol.Part{{Kind: protocol.PartText, Text: "hi!"}}
	_, perr := e.c.Send(e.ctx(), alice, sendParams(other, true))
	wantError(t, "another message under a used messageId", perr, protocol.CodeInvalidParams)
	e.wantCalls(t, 1)

	e.agent.PlayAlways(Text("once"))
	m20 := userMessage("m-2", "hi")
	var id string
	for _, ev := range e.sendTwenty(t, alice, sendParams(m20, true)) {
		got := ev.Message
		if got == nil {
			t.Fatalf("a send of twenty answered %+v, want a Message", ev)
		}
		if id == "" {
			id = got.ID
		}
		if got.ID != id || partsText(got.Parts) != "once" {
			t.Fatalf("a send of twenty answered %+v", got)
		}
	}
	e.wantCalls(t, 2)
	if ev, perr := e.c.Send(e.ctx(), bob, sendParams(m20, true)); perr != nil || ev.Message == nil || ev.Message.ID == id {
		t.Fatalf("bob's send of alice's messageId: %+v %v", ev, perr)
	}
	e.wantCalls(t, 3)

	e.agent.PlayAlways(fail(errors.New("broken")))
	mf := userMessage("m-3", "hi")
	_, perr = e.c.Send(e.ctx(), alice, sendParams(mf, true))
	wantError(t, "a failed reply", perr, protocol.CodeInternal)
	e.agent.PlayAlways(Text("again"))
	if ev, perr := e.c.Send(e.ctx(), alice, sendParams(mf, true)); perr != nil || ev.Message == nil || partsText(ev.Message.Parts) != "again" {
		t.Fatalf("the retry of a failed reply: %+v %v, want it run again", ev, perr)
	}
	e.wantCalls(t, 5)
	e.wantTasks(t, alice, 0)
}

// directRetried (ReplyAuto): a retry of a turn answered directly gets the
// same Message, one of a turn that made a task gets the task, and twenty
// sends at once of either call the agent once.
func testDirectRetried(t *testing.T, e *env) {
	e.agent.Play(func(req *upstream.RunRequest) []Step {
		if partsText(req.Message.Parts) == "chat" {
			return []Step{messageMark, Text("hello")}
		}
		return []Step{Text("a task")}
	})
	for i, text := range []string{"chat", "work"} {
		m := userMessage("m-"+text, text)
		evs := e.sendTwenty(t, alice, sendParams(m, true))
		first := evs[0]
		for _, ev := range evs {
			switch {
			case text == "chat" && (ev.Message == nil || first.Message == nil || ev.Message.ID != first.Message.ID || partsText(ev.Message.Parts) != "hello"):
				t.Fatalf("a direct answer's retry: %+v, want the message %+v", ev, first.Message)
			case text == "work" && (ev.Task == nil || first.Task == nil || ev.Task.ID != first.Task.ID || ev.Task.Status.State != protocol.StateCompleted):
				t.Fatalf("a task turn's retry: %+v, want the task %+v", ev, first.Task)
			}
		}
		e.wantCalls(t, i+1)
		ev := next(t, e.stream(alice, sendParams(m, true)))
		if (text == "chat" && (ev.Message == nil || ev.Message.ID != first.Message.ID)) || (text == "work" && (ev.Task == nil || ev.Task.ID != first.Task.ID)) {
			t.Fatalf("a streaming retry of %s: %s", text, shape(ev))
		}
	}
	e.wantTasks(t, alice, 1)
}

// repliedMessage waits for a background send's Message.
func repliedMessage(t *testing.T, ch <-chan sendAnswer) *protocol.Message {
	t.Helper()
	ev := answeredEvent(t, ch)
	if ev.Message == nil {
		t.Fatalf("send answered %+v, want a Message", ev)
	}
	return ev.Message
}

// sendTwenty sends p as owner twenty times at once and returns what each
// answered, failing t on an error.
func (e *env) sendTwenty(t *testing.T, owner string, p *protocol.SendParams) []*protocol.Event {
	t.Helper()
	var answers []<-chan sendAnswer
	for range 20 {
		answers = append(answers, e.sendAsync(owner, p))
	}
	evs := make([]*protocol.Event, len(answers))
	for i, ch := range answers {
		evs[i] = answeredEvent(t, ch)
	}
	return evs
}

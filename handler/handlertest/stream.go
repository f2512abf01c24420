package handlertest

import (
	"fmt"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// A streaming send yields the Task, the working status, each chunk as the
// agent makes it (before the agent's next step: nothing is buffered), the
// chunk that closes the artifact, and the terminal status, then ends.
func testStreamOrder(t *testing.T, e *env) {
	evs := e.stream(alice, sendParams(userMessage("m-1", "hi"), true))
	first := next(t, evs)
	if first.Task == nil || first.Task.Status.State != protocol.StateSubmitted || len(first.Task.History) != 1 ||
		first.Task.History[0].ID != "m-1" {
		t.Fatalf("the stream opened with %s", shape(first))
	}
	id, ctxID := first.Task.ID, first.Task.ContextID
	run := e.agent.Next(t)
	if ev := next(t, evs); shape(ev) != "status(working)" || ev.Status.TaskID != id || ev.Status.ContextID != ctxID {
		t.Fatalf("second event %s (%+v)", shape(ev), ev.Status)
	}
	var artifactID string
	for i, chunk := range []string{"Hel", "lo"} {
		run.Send(t, Text(chunk))
		ev := next(t, evs)
		if want := fmt.Sprintf("artifact(%q,append=%v,last=false)", chunk, i > 0); shape(ev) != want || ev.Artifact.TaskID != id {
			t.Fatalf("chunk %d: %s (task %s), want %s", i, shape(ev), ev.Artifact.TaskID, want)
		}
		if i == 0 {
			artifactID = ev.Artifact.Artifact.ID
		} else if ev.Artifact.Artifact.ID != artifactID {
			t.Fatalf("chunk %d is of artifact %s, the first of %s", i, ev.Artifact.Artifact.ID, artifactID)
		}
	}
	run.End()
	got, sh := restClean(t, evs)
	if sh != `artifact("",append=true,last=true) status(completed)` {
		t.Fatalf("the stream's end: %s", sh)
	}
	if got[0].Artifact.Artifact.ID != artifactID || got[1].Status.TaskID != id {
		t.Fatalf("the closing chunk is of artifact %s, the status of task %s", got[0].Artifact.Artifact.ID, got[1].Status.TaskID)
	}
	if task := e.getTask(alice, id); task.Status.State != protocol.StateCompleted || partsText(task.Artifacts[0].Parts) != "Hello" {
		t.Fatalf("GetTask after the stream: %s %+v", task.Status.State, task.Artifacts)
	}
}

// A send's stream ends with its turn: at input-required, the agent's
// question its last event. The stream of the send that continues the
// task opens with the task as continued, then carries that turn.
func testStreamEndsWithTurn(t *testing.T, e *env) {
	e.agent.Play(func(req *upstream.RunRequest) []Step {
		if len(req.History) == 0 {
			return []Step{Text("a"), Status(protocol.StateInputRequired, "more?")}
		}
		return []Step{Text("b")}
	})
	got, sh := restClean(t, e.stream(alice, sendParams(userMessage("m-1", "hi"), true)))
	if want := `task(submitted) status(working) artifact("a",append=false,last=false) artifact("",append=true,last=true) status(input-required)`; sh != want {
		t.Fatalf("the first turn's stream: %s, want %s", sh, want)
	}
	if m := got[len(got)-1].Status.Status.Message; m == nil || partsText(m.Parts) != "more?" {
		t.Fatalf("the question: %+v", m)
	}
	id := got[0].Task.ID
	got, sh = restClean(t, e.stream(alice, sendParams(continueMessage("m-2", "go on", id), true)))
	if want := `task(working) artifact("b",append=false,last=false) artifact("",append=true,last=true) status(completed)`; sh != want {
		t.Fatalf("the second turn's stream: %s, want %s", sh, want)
	}
	if task := got[0].Task; task.ID != id || roles(task.History) != "user,agent,user" {
		t.Fatalf("the second stream opened with task %s, history %s", task.ID, roles(task.History))
	}
}

// auth-required keeps a send's stream open (credentials arrive out of
// band): the turn that continues the task arrives on it.
func testStreamAuthRequired(t *testing.T, e *env) {
	evs := e.stream(alice, sendParams(userMessage("m-1", "hi"), true))
	first := next(t, evs)
	run := e.agent.Next(t)
	if ev := next(t, evs); shape(ev) != "status(working)" {
		t.Fatalf("second event %s", shape(ev))
	}
	run.Send(t, Status(protocol.StateAuthRequired, "Sign in at https://e.x"))
	if ev := next(t, evs); shape(ev) != "status(auth-required)" || partsText(ev.Status.Status.Message.Parts) != "Sign in at https://e.x" {
		t.Fatalf("third event %s", shape(ev))
	}
	cont := e.sendTask(alice, sendParams(continueMessage("m-2", "signed in", first.Task.ID), false))
	if cont.Status.State != protocol.StateWorking {
		t.Fatalf("the continuation answered %s, want working", cont.Status.State)
	}
	e.agent.Next(t).End()
	if _, sh := restClean(t, evs); sh != "status(working) status(completed)" {
		t.Fatalf("the stream after the continuation: %s", sh)
	}
}

// A subscription to a running task opens with the task as it is (what
// the run wrote so far in it), then carries the rest of the run and ends
// at its terminal state.
func testSubscribeRunning(t *testing.T, e *env) {
	task := e.sendTask(alice, sendParams(userMessage("m-1", "hi"), false))
	run := e.agent.Next(t)
	run.Send(t, Text("one"))
	e.waitTask(alice, task.ID, "holding the first chunk", func(task *protocol.Task) bool {
		return len(task.Artifacts) == 1 && partsText(task.Artifacts[0].Parts) == "one"
	})
	sub := e.subscribe(alice, task.ID, "")
	first := next(t, sub)
	if first.Task == nil || first.Task.ID != task.ID || first.Task.Status.State != protocol.StateWorking ||
		len(first.Task.Artifacts) != 1 || partsText(first.Task.Artifacts[0].Parts) != "one" {
		t.Fatalf("the subscription opened with %s", shape(first))
	}
	run.Send(t, Text("two"))
	run.End()
	if _, sh := restClean(t, sub); sh != `artifact("two",append=true,last=false) artifact("",append=true,last=true) status(completed)` {
		t.Fatalf("the subscription: %s", sh)
	}
}

// A subscription to a task waiting for input goes on past its turns,
// an interrupted state again included, and ends at the terminal state
// only (A2A 1.0 §3.1.6); a send's stream still ends with its own turn,
// at input-required.
func testSubscribeInterrupted(t *testing.T, e *env) {
	// Each turn of the task asks again, but the fourth, which answers.
	e.agent.Play(func(req *upstream.RunRequest) []Step {
		if len(req.History) < 6 {
			return []Step{Status(protocol.StateInputRequired, "and then?")}
		}
		return []Step{Text("done")}
	})
	task := e.sendTask(alice, sendParams(userMessage("m-1", "a"), true))
	if _, sh := restClean(t, e.stream(alice, sendParams(continueMessage("m-2", "b", task.ID), true))); sh != "task(working) status(input-required)" {
		t.Fatalf("the second turn's stream: %s", sh)
	}
	sub := e.subscribe(alice, task.ID, "")
	if first := next(t, sub); shape(first) != "task(input-required)" || first.Task.ID != task.ID {
		t.Fatalf("the subscription opened with %s", shape(first))
	}
	for _, turn := range []struct {
		id   string
		want protocol.TaskState
	}{{"m-3", protocol.StateInputRequired}, {"m-4", protocol.StateCompleted}} {
		if got := e.sendTask(alice, sendParams(continueMessage(turn.id, "c", task.ID), true)); got.Status.State != turn.want {
			t.Fatalf("turn %s: %s, want %s", turn.id, got.Status.State, turn.want)
		}
	}
	want := `status(working) status(input-required) status(working) artifact("done",append=false,last=false) artifact("",append=true,last=true) status(completed)`
	if _, sh := restClean(t, sub); sh != want {
		t.Fatalf("the subscription: %s, want %s", sh, want)
	}
}

// What a subscription refuses before it opens: a terminal task -32004
// (nothing more will happen to it), an unknown one -32001, a
// Last-Event-ID that is no event id of the task -32602.
func testSubscribeRefusals(t *testing.T, e *env) {
	e.agent.Play(askOrAnswer)
	done := e.sendTask(alice, sendParams(userMessage("m-1", "hi"), true))
	waiting := e.sendTask(alice, sendParams(userMessage("m-2", "ask"), true))
	for _, tc := range []struct {
		name, id, last string
		code           int
	}{
		{"completed task", done.ID, "", protocol.CodeUnsupportedOperation},
		{"unknown task", "no-such-task", "", protocol.CodeTaskNotFound},
		{"bad Last-Event-ID", waiting.ID, "not-an-id", protocol.CodeInvalidParams},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, perr := e.c.Subscribe(e.ctx(), alice, tc.id, tc.last)
			wantError(t, "Subscribe", perr, tc.code)
		})
	}
}

// A Last-Event-ID past the end of the task's log is not a position to
// replay from: the subscription opens with the task as it is and tails
// from there.
func testSubscribePastEnd(t *testing.T, e *env) {
	task := e.sendTask(alice, sendParams(userMessage("m-1", "hi"), false))
	run := e.agent.Next(t)
	sub := e.subscribe(alice, task.ID, "999")
	if first := next(t, sub); shape(first) != "task(working)" {
		t.Fatalf("the subscription opened with %s", shape(first))
	}
	run.End()
	if _, sh := restClean(t, sub); sh != "status(completed)" {
		t.Fatalf("the subscription: %s", sh)
	}
}

// Without streaming, both streaming calls are -32004; the others work.
func testStreamingOff(t *testing.T, e *env) {
	e.agent.PlayAlways(Status(protocol.StateInputRequired, "?"))
	task := e.sendTask(alice, sendParams(userMessage("m-1", "hi"), true))
	_, perr := e.c.Stream(e.ctx(), alice, sendParams(userMessage("m-2", "hi"), true))
	wantError(t, "Stream", perr, protocol.CodeUnsupportedOperation)
	_, perr = e.c.Subscribe(e.ctx(), alice, task.ID, "")
	wantError(t, "Subscribe", perr, protocol.CodeUnsupportedOperation)
}

package handlertest

import (
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// A cancel of a running task answers it canceled, ends the agent's run
// (its context is canceled), and the run does not write over it; a second
// cancel is -32002.
func testCancelRunning(t *testing.T, e *env) {
	task := e.sendTask(alice, sendParams(userMessage("m-1", "hi"), false))
	run := e.agent.Next(t)
	run.Send(t, Text("partial"))
	canceled, perr := e.c.CancelTask(e.ctx(), alice, task.ID)
	if perr != nil {
		t.Fatal(perr)
	}
	if canceled.ID != task.ID || canceled.Status.State != protocol.StateCanceled {
		t.Fatalf("cancel answered %s %s, want %s canceled", canceled.ID, canceled.Status.State, task.ID)
	}
	run.Canceled(t)
	e.waitIdle()
	if got := e.getTask(alice, task.ID); got.Status.State != protocol.StateCanceled {
		t.Fatalf("after the run ended the task is %s", got.Status.State)
	}
	e.canceledLast(task.ID)
	_, perr = e.c.CancelTask(e.ctx(), alice, task.ID)
	wantError(t, "a second cancel", perr, protocol.CodeTaskNotCancelable)
}

// A task waiting for input has no run to end: the cancel alone settles
// it.
func testCancelInputRequired(t *testing.T, e *env) {
	e.agent.PlayAlways(Status(protocol.StateInputRequired, "?"))
	task := e.sendTask(alice, sendParams(userMessage("m-1", "hi"), true))
	canceled, perr := e.c.CancelTask(e.ctx(), alice, task.ID)
	if perr != nil {
		t.Fatal(perr)
	}
	if canceled.Status.State != protocol.StateCanceled {
		t.Fatalf("cancel answered %s", canceled.Status.State)
	}
	if got := e.getTask(alice, task.ID); got.Status.State != protocol.StateCanceled {
		t.Fatalf("GetTask after the cancel: %s", got.Status.State)
	}
}

// A task in a terminal state cannot be canceled: -32002, and it stays as
// it was.
func testCancelSettled(t *testing.T, e *env) {
	e.agent.PlayAlways(Text("ok"))
	task := e.sendTask(alice, sendParams(userMessage("m-1", "hi"), true))
	_, perr := e.c.CancelTask(e.ctx(), alice, task.ID)
	wantError(t, "cancel of a completed task", perr, protocol.CodeTaskNotCancelable)
	if got := e.getTask(alice, task.ID); got.Status.State != protocol.StateCompleted {
		t.Fatalf("the refused cancel left the task %s", got.Status.State)
	}
}

// A cancel while the task streams ends every open stream of it, the one
// the send opened and a subscriber's, with the canceled status as the
// last event; the agent's run is ended.
func testCancelWhileStreaming(t *testing.T, e *env) {
	started := e.stream(alice, sendParams(userMessage("m-1", "hi"), true))
	first := next(t, started)
	if first.Task == nil {
		t.Fatalf("the stream opened with %s", shape(first))
	}
	run := e.agent.Next(t)
	run.Send(t, Text("partial"))
	if got := shape(next(t, started), next(t, started)); got != `status(working) artifact("partial",append=false,last=false)` {
		t.Fatalf("the stream before the cancel: %s", got)
	}
	sub := e.subscribe(alice, first.Task.ID, "")
	if ev := next(t, sub); ev.Task == nil || ev.Task.Status.State != protocol.StateWorking {
		t.Fatalf("the subscription opened with %s", shape(ev))
	}
	if _, perr := e.c.CancelTask(e.ctx(), alice, first.Task.ID); perr != nil {
		t.Fatal(perr)
	}
	run.Canceled(t)
	for _, s := range []struct {
		name string
		evs  Events
	}{{"the send's stream", started}, {"the subscription", sub}} {
		if _, got := restClean(t, s.evs); got != "status(canceled)" {
			t.Fatalf("%s after the cancel: %s, want status(canceled)", s.name, got)
		}
	}
	e.waitIdle()
	if got := e.getTask(alice, first.Task.ID); got.Status.State != protocol.StateCanceled {
		t.Fatalf("GetTask after the cancel: %s", got.Status.State)
	}
	e.canceledLast(first.Task.ID)
}

// canceledLast fails the scenario unless the last event of task id's log
// is the cancel's final status: a run that lost to the cancel wrote
// nothing after it, so no stream replays anything past it.
func (e *env) canceledLast(id string) {
	e.t.Helper()
	evs, err := e.store.Events(e.ctx(), id, "", false)
	if err != nil {
		e.t.Fatal(err)
	}
	if last := evs[len(evs)-1].Event.Status; last == nil || last.Status.State != protocol.StateCanceled || !last.Final {
		e.t.Fatalf("the log's last event is %s, want the final canceled status", shape(evs[len(evs)-1].Event))
	}
}

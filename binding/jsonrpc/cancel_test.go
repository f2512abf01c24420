package jsonrpc

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store/memory"
)

func TestCancelAbortsUpstream(t *testing.T) {
	for _, tc := range []struct{ v, send, cancel, state string }{
		{"1.0", sendV10("SendMessage", "m", "", `{"returnImmediately":true}`), "CancelTask", "TASK_STATE_CANCELED"},
		{"", sendV03("message/send", "m", "", `{"blocking":false}`), "tasks/cancel", "canceled"},
	} {
		t.Run(tc.cancel, func(t *testing.T) {
			agent := controlledAgent()
			h := newHarness(t, agent)
			resp := h.rpc(req{version: tc.v, owner: "alice", body: tc.send})
			task := at(t, resp, "result")
			if tc.v == "1.0" {
				task = at(t, task, "task")
			}
			id := str(t, task, "id")
			run := agent.next(t)
			run.send(t, text("partial"))

			resp = h.rpc(req{version: tc.v, owner: "alice", body: rpcCall(tc.cancel, `{"id":"`+id+`"}`)})
			if got := str(t, resp, "result", "status", "state"); got != tc.state {
				t.Fatalf("cancel answered state %s", got)
			}
			select {
			case <-run.ctx.Done():
				if !errors.Is(run.ctx.Err(), context.Canceled) {
					t.Fatalf("agent ctx ended with %v", run.ctx.Err())
				}
			case <-time.After(waitTimeout):
				t.Fatal("cancel did not abort the upstream call")
			}
			// The run must not overwrite the canceled state: wait until the
			// runner is idle, then read.
			waitFor(t, "run to end", func() bool { return runnerIdle(h.runner) })
			resp = h.rpc(req{version: "1.0", owner: "alice", body: rpcCall("GetTask", `{"id":"`+id+`"}`)})
			if got := str(t, resp, "result", "status", "state"); got != "TASK_STATE_CANCELED" {
				t.Fatalf("task state after cancel %s", got)
			}
			// Canceling again: terminal now.
			resp = h.rpc(req{version: "1.0", owner: "alice", body: rpcCall("CancelTask", `{"id":"`+id+`"}`)})
			wantError(t, resp, -32002, 3, true, "TASK_NOT_CANCELABLE")
		})
	}
}

func TestCancelInputRequired(t *testing.T) {
	h := newHarness(t, scriptAgent(status(6 /* input-required */, "?")))
	resp := h.rpc(req{version: "1.0", body: sendV10("SendMessage", "m", "", "")})
	id := str(t, resp, "result", "task", "id")
	resp = h.rpc(req{version: "1.0", body: rpcCall("CancelTask", `{"id":"`+id+`"}`)})
	if got := str(t, resp, "result", "status", "state"); got != "TASK_STATE_CANCELED" {
		t.Fatalf("state %s", got)
	}
}

// runnerIdle reports whether no run is going.
func runnerIdle(r *handler.Runner) bool { return r.Running() == 0 }

func TestRunnerCloseEndsRuns(t *testing.T) {
	agent := controlledAgent()
	h := newHarness(t, agent)
	resp := h.rpc(req{version: "1.0", body: sendV10("SendMessage", "m", "", `{"returnImmediately":true}`)})
	id := str(t, resp, "result", "task", "id")
	run := agent.next(t)
	if err := h.runner.Close(); err != nil {
		t.Fatal(err)
	}
	if run.ctx.Err() == nil {
		t.Fatal("Close returned while the run's upstream call was still going")
	}
	rec, err := h.store.Get(context.Background(), "", id)
	if err != nil {
		t.Fatal(err)
	}
	if st := rec.Task.Status.State; st != 4 /* failed */ {
		t.Fatalf("state after runner close %v", st)
	}
	// A send after Close is refused and leaves no task behind running.
	resp = h.rpc(req{version: "1.0", body: sendV10("SendMessage", "m2", "", "")})
	wantError(t, resp, -32603, 7, true, "")
}

func TestCancelRacesChunks(t *testing.T) {
	// An agent that produces chunks as fast as the run takes them, then
	// waits: 5000 of them, half the store's log bound, since a fast run
	// reaches the bound before a cancel arrives on a busy machine (the
	// task would then fail, and a cancel of it is rightly refused).
	agent := &fakeAgent{runs: make(chan *fakeRun, 1)}
	h := newHarness(t, agent)
	id, run := startTask(t, h, agent)
	go func() {
		for range 5000 {
			select {
			case run.steps <- text("x"):
			case <-run.ctx.Done():
				return
			}
		}
	}()
	waitFor(t, "some chunks", func() bool {
		evs, _ := h.store.Events(context.Background(), id, "", false)
		return len(evs) > 10
	})
	resp := h.rpc(req{version: "1.0", owner: "alice", body: rpcCall("CancelTask", `{"id":"`+id+`"}`)})
	if got := str(t, resp, "result", "status", "state"); got != "TASK_STATE_CANCELED" {
		t.Fatalf("cancel answered %s", got)
	}
	<-run.ctx.Done()
	waitFor(t, "run to end", func() bool { return runnerIdle(h.runner) })
	evs, err := h.store.Events(context.Background(), id, "", false)
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1].Event.Status
	if last == nil || last.Status.State != protocol.StateCanceled || !last.Final {
		t.Fatalf("the canceled status must be the last event; got %+v", evs[len(evs)-1].Event)
	}
}

func TestEventLogBoundFailsTask(t *testing.T) {
	steps := make([]step, 50)
	for i := range steps {
		steps[i] = text("x")
	}
	// A store with a small log bound.
	small := memory.New(memory.Options{MaxEventsPerTask: 10})
	defer small.Close()
	h := newHarness(t, scriptAgent(steps...), func(o *handler.Options) { o.Store = small })
	resp := h.rpc(req{version: "1.0", body: sendV10("SendMessage", "m", "", "")})
	task := at(t, resp, "result", "task")
	if str(t, task, "status", "state") != "TASK_STATE_FAILED" || str(t, task, "status", "message", "parts", 0, "text") != failedText {
		t.Fatalf("task %v", task)
	}
}

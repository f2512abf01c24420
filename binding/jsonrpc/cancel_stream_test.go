package jsonrpc

import (
	"context"
	"testing"
	"time"
)

// TestCancelWhileStreaming: a cancel aborts the upstream call, and every
// open stream of the task (the one that started it and a subscriber, in
// both versions) receives the canceled status as its last frame and
// closes; GetTask confirms it.
func TestCancelWhileStreaming(t *testing.T) {
	agent := controlledAgent()
	h := newHarness(t, agent)
	started := h.openStream(t, req{version: "1.0", owner: "alice", body: sendV10("SendStreamingMessage", "m-1", "", "")})
	_, m := started.event(t)
	id := str(t, m, "result", "task", "id")
	run := agent.next(t)
	run.send(t, text("partial"))

	sub10 := h.openStream(t, req{version: "1.0", owner: "alice", body: rpcCall("SubscribeToTask", `{"id":"`+id+`"}`)})
	sub03 := h.openStream(t, req{owner: "alice", body: rpcCall("tasks/resubscribe", `{"id":"`+id+`"}`)})
	for _, s := range []*sseReader{sub10, sub03} {
		if _, m := s.event(t); kindOf(t, m) != "task" {
			t.Fatalf("subscribe opens with %v", m)
		}
	}

	resp := h.rpc(req{version: "1.0", owner: "alice", body: rpcCall("CancelTask", `{"id":"`+id+`"}`)})
	if got := str(t, resp, "result", "status", "state"); got != "TASK_STATE_CANCELED" {
		t.Fatalf("cancel answered %s", got)
	}
	select {
	case <-run.ctx.Done():
	case <-time.After(waitTimeout):
		t.Fatal("cancel did not abort the upstream call")
	}

	// lastState is the state of a closing status frame in either version
	// ("" for any other frame, or a 0.3 status without final:true).
	lastState := func(m map[string]any) string {
		switch kindOf(t, m) {
		case "statusUpdate":
			return str(t, m, "result", "statusUpdate", "status", "state")
		case "status-update":
			if at(t, m, "result", "final") == true {
				return str(t, m, "result", "status", "state")
			}
		}
		return ""
	}
	for _, tc := range []struct {
		name string
		s    *sseReader
		want string
	}{
		{"starting stream", started, "TASK_STATE_CANCELED"},
		{"1.0 subscriber", sub10, "TASK_STATE_CANCELED"},
		{"0.3 subscriber", sub03, "canceled"},
	} {
		// rest reads to the end: a stream that stays open fails the test
		// through the request's deadline.
		_, ms := tc.s.rest(t)
		if len(ms) == 0 {
			t.Fatalf("%s: closed without the canceled status", tc.name)
		}
		if got := lastState(ms[len(ms)-1]); got != tc.want {
			t.Fatalf("%s: last frame state %q, want %s (%v)", tc.name, got, tc.want, ms)
		}
	}

	waitFor(t, "run to end", func() bool { return runnerIdle(h.runner) })
	resp = h.rpc(req{version: "1.0", owner: "alice", body: rpcCall("GetTask", `{"id":"`+id+`"}`)})
	if got := str(t, resp, "result", "status", "state"); got != "TASK_STATE_CANCELED" {
		t.Fatalf("GetTask after cancel: %s", got)
	}
	evs, err := h.store.Events(context.Background(), id, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if last := evs[len(evs)-1].Event.Status; last == nil || !last.Final {
		t.Fatalf("the canceled status is not the log's last event: %+v", evs[len(evs)-1].Event)
	}
}

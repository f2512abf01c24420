package jsonrpc

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// flakyStore lets the first skip Updates through, then fails the next
// fail ones, then works again: a backend with a passing outage.
type flakyStore struct {
	store.Store
	skip, fail atomic.Int32
}

func (s *flakyStore) Update(ctx context.Context, id string, v uint64, t *protocol.Task, evs ...protocol.Event) (uint64, string, error) {
	if s.skip.Add(-1) < 0 && s.fail.Add(-1) >= 0 {
		return 0, "", errors.New("store: connection reset")
	}
	return s.Store.Update(ctx, id, v, t, evs...)
}

// A run whose store write fails does not leave its task working forever:
// it records the task as failed once the store answers again.
func TestRunRecordsFailureAfterStoreOutage(t *testing.T) {
	for _, tc := range []struct {
		name       string
		skip, fail int32
		steps      []step
	}{
		// A send's task is created working: the run's first Update is
		// the agent's first output.
		{"first chunk lost, and the first retry", 0, 2, []step{text("lost chunk")}},
		{"chunk lost", 0, 1, []step{text("lost chunk"), text("more")}},
		{"final status lost", 1, 3, []step{text("kept"), status(protocol.StateCompleted, "done")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := &flakyStore{}
			fs.skip.Store(tc.skip)
			fs.fail.Store(tc.fail)
			h := newHarness(t, scriptAgent(tc.steps...), func(o *handler.Options) { fs.Store = o.Store; o.Store = fs })
			start := time.Now()
			resp := h.rpc(req{version: "1.0", body: sendV10("SendMessage", "m", "", "")})
			task := at(t, resp, "result", "task")
			wantFailed(t, task)
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("recording the failure took %v", d)
			}
			// What the store never took is not in the task.
			arts, _ := task.(map[string]any)["artifacts"].([]any)
			for _, a := range arts {
				for _, p := range a.(map[string]any)["parts"].([]any) {
					if p.(map[string]any)["text"] == "lost chunk" {
						t.Fatalf("an unwritten chunk is in the task: %v", task)
					}
				}
			}
			evs, err := h.store.Events(context.Background(), str(t, task, "id"), "", false)
			if err != nil {
				t.Fatal(err)
			}
			last := evs[len(evs)-1].Event.Status
			if last == nil || last.Status.State != protocol.StateFailed || !last.Final {
				t.Fatalf("the log does not end with the failure: %+v", evs[len(evs)-1].Event)
			}
		})
	}
}

// A store that stays broken: the run gives up after its retries (about
// 3s of backoff) and ends; the task stays as last written (working: the
// send created it so).
func TestRunGivesUpOnBrokenStore(t *testing.T) {
	fs := &flakyStore{}
	fs.fail.Store(1 << 30)
	h := newHarness(t, scriptAgent(text("x")), func(o *handler.Options) { fs.Store = o.Store; o.Store = fs })
	resp := h.rpc(req{version: "1.0", body: sendV10("SendMessage", "m", "", `{"returnImmediately":true}`)})
	id := str(t, resp, "result", "task", "id")
	waitFor(t, "the run to give up", func() bool { return runnerIdle(h.runner) })
	resp = h.rpc(req{version: "1.0", body: rpcCall("GetTask", `{"id":"`+id+`"}`)})
	if s := str(t, resp, "result", "status", "state"); s != "TASK_STATE_WORKING" {
		t.Fatalf("state %s", s)
	}
}

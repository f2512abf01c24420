package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// A context key that lives in a shared store is fetched by the sends that
// need it: while the store cannot give it the send fails -32603 before
// anything is written, and once it does every turn's context id is made
// under it.
func TestContextKeyFetchedWhenFirstNeeded(t *testing.T) {
	key := handler.NewContextKey()
	var calls atomic.Int32
	var down atomic.Bool
	down.Store(true)
	contexts := make(chan string, 4)
	agent := &fakeAgent{script: func(req *upstream.RunRequest) []step {
		contexts <- req.ContextID
		return []step{text("ok")}
	}}
	h := newHarness(t, agent, func(o *handler.Options) {
		o.ContextKeyFunc = func(context.Context) ([]byte, error) {
			calls.Add(1)
			if down.Load() {
				return nil, errors.New("store: connection refused")
			}
			return key, nil
		}
	})
	send := func() map[string]any {
		return h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m", `,"contextId":"c1"`, "")})
	}
	resp := send()
	if code := fmt.Sprint(at(t, resp, "error", "code")); code != "-32603" {
		t.Fatalf("with the key unavailable: %v", resp)
	}
	page, err := h.store.List(context.Background(), "alice", store.ListQuery{})
	if err != nil || len(page.Tasks) != 0 {
		t.Fatalf("a failed send left tasks: %+v %v", page, err)
	}
	down.Store(false)
	for range 2 {
		resp = send()
		if s := str(t, resp, "result", "task", "status", "state"); s != "TASK_STATE_COMPLETED" {
			t.Fatalf("state %s: %v", s, resp)
		}
		if got, want := <-contexts, agentContextID(key, "alice", "c1"); got != want {
			t.Fatalf("agent context %s, want %s (under the fetched key)", got, want)
		}
	}
	// Every send asks for the key, before and after the write that
	// starts its turn (a shared store keeps it once known, and gives the
	// one its processes agreed on if it lost it): the failed send asked
	// once, each later one twice.
	if n := calls.Load(); n != 5 {
		t.Fatalf("the key was asked for %d times, want 5", n)
	}
}

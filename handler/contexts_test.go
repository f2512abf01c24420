package handler

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// contextAgent answers "ok" and hands the test every run's context id.
type contextAgent chan string

func (a contextAgent) Run(ctx context.Context, req *upstream.RunRequest) (upstream.Stream, error) {
	a <- req.ContextID
	return stepsAgent{text("ok")}.Run(ctx, req)
}

// A context key that lives in a shared store is fetched by the sends that
// need it: while the store cannot give it the send fails -32603 before
// anything is written, and once it does every turn's context id is made
// under it.
func TestContextKeyFetchedWhenFirstNeeded(t *testing.T) {
	key := NewContextKey()
	var calls atomic.Int32
	var down atomic.Bool
	down.Store(true)
	contexts := make(contextAgent, 4)
	svc := newTestService(t, contexts, func(o *Options) {
		o.ContextKeyFunc = func(context.Context) ([]byte, error) {
			calls.Add(1)
			if down.Load() {
				return nil, errors.New("store: connection refused")
			}
			return key, nil
		}
	})
	alice := Caller{Owner: "alice"}
	send := func(id string) (protocol.Event, *protocol.Error) {
		m := userMessage(id, "hello")
		m.ContextID = "c1"
		return svc.SendMessage(context.Background(), alice, &protocol.SendParams{Message: m, Blocking: true})
	}
	if _, perr := send("m-0"); perr == nil || perr.Code != protocol.CodeInternal {
		t.Fatalf("with the key unavailable: %v, want -32603", perr)
	}
	page, err := svc.opts.Store.List(context.Background(), "alice", store.ListQuery{})
	if err != nil || len(page.Tasks) != 0 {
		t.Fatalf("a failed send left tasks: %+v %v", page, err)
	}
	down.Store(false)
	for _, id := range []string{"m-1", "m-2"} {
		ev, perr := send(id)
		if perr != nil || ev.Task.Status.State != protocol.StateCompleted {
			t.Fatalf("send: %+v, %v", ev.Task, perr)
		}
		// contextIDUnder's output is pinned on its own by handlertest,
		// which derives it apart: here it is the key that is checked.
		if got, want := <-contexts, contextIDUnder(key, "alice", "c1"); got != want {
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

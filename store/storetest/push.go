package storetest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// Push configs: owner-scoped like the task, put in order, replaced by id,
// bounded, deleted idempotently, and kept once the task is finished.
func testPushConfigs(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	tk := newTask("p1", "c", protocol.StateWorking, base)
	v, err := s.Create(ctx, "alice", tk)
	if err != nil {
		t.Fatal(err)
	}
	put := func(owner, id, data string, max int) error {
		return s.PutPushConfig(ctx, owner, "p1", store.PushConfig{ID: id, Data: []byte(data)}, max)
	}
	ids := func() string {
		cfgs, err := s.PushConfigs(ctx, "alice", "p1")
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, c := range cfgs {
			out += c.ID + "=" + string(c.Data) + ";"
		}
		return out
	}
	if got := ids(); got != "" {
		t.Fatalf("a new task's configs: %q", got)
	}
	for _, c := range []struct{ id, data string }{{"a", "1"}, {"b", "2"}, {"a", "3"}} {
		if err := put("alice", c.id, c.data, 2); err != nil {
			t.Fatalf("put %s: %v", c.id, err)
		}
	}
	if got := ids(); got != "a=3;b=2;" {
		t.Fatalf("configs %q, want a replaced in place", got)
	}
	if err := put("alice", "c", "4", 2); !errors.Is(err, store.ErrTooManyPushConfigs) {
		t.Fatalf("a third config with max 2: %v", err)
	}
	data := []byte("5")
	if err := s.PutPushConfig(ctx, "alice", "p1", store.PushConfig{ID: "b", Data: data}, 2); err != nil {
		t.Fatal(err)
	}
	data[0] = 'X' // the store keeps its own bytes
	if got := ids(); got != "a=3;b=5;" {
		t.Fatalf("configs %q after the caller changed its bytes", got)
	}
	// Another owner, or no task: not found, and nothing changes.
	if err := put("bob", "z", "9", 5); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("bob's put: %v", err)
	}
	if _, err := s.PushConfigs(ctx, "bob", "p1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("bob's list: %v", err)
	}
	if err := s.DeletePushConfig(ctx, "bob", "p1", "a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("bob's delete: %v", err)
	}
	if _, err := s.PushConfigs(ctx, "alice", "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an unknown task: %v", err)
	}
	for range 2 {
		if err := s.DeletePushConfig(ctx, "alice", "p1", "a"); err != nil {
			t.Fatalf("delete: %v", err)
		}
	}
	if got := ids(); got != "b=5;" {
		t.Fatalf("configs %q after delete", got)
	}
	// A finished task keeps its configs.
	done := *tk
	done.Status.State = protocol.StateCompleted
	if _, _, err := s.Update(ctx, "p1", v, &done); err != nil {
		t.Fatal(err)
	}
	if got := ids(); got != "b=5;" {
		t.Fatalf("configs %q of the finished task", got)
	}
}

// A delivery is claimed exactly once, however many try at once.
func testClaimDelivery(t *testing.T, s store.Store) {
	ctx := ctxT(t)
	if _, err := s.Create(ctx, "alice", newTask("d1", "c", protocol.StateWorking, base)); err != nil {
		t.Fatal(err)
	}
	for k := range 3 {
		key := fmt.Sprintf("cfg|%d", k)
		var wins atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				ok, err := s.ClaimDelivery(ctx, "d1", key)
				if err != nil {
					t.Error(err)
				}
				if ok {
					wins.Add(1)
				}
			})
		}
		wg.Wait()
		if n := wins.Load(); n != 1 {
			t.Fatalf("key %s claimed %d times", key, n)
		}
	}
	if _, err := s.ClaimDelivery(ctx, "nope", "k"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a claim on an unknown task: %v", err)
	}
}

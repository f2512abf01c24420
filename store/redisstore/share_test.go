package redisstore

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// Two shares on one server and prefix never meet: neither reads, lists,
// tails, cancels or claims the other's tasks, and each has its own
// secrets. A store without a share keeps the keys it always had.
func TestSharesSeparate(t *testing.T) {
	url, _ := startRedis(t)
	prefix := newPrefix()
	one := newStore(t, url, Options{KeyPrefix: prefix, Share: "one", Lease: time.Second})
	two := newStore(t, url, Options{KeyPrefix: prefix, Share: "two", Lease: time.Second})
	plain := newStore(t, url, Options{KeyPrefix: prefix, Lease: time.Second})
	ctx := context.Background()
	running := &protocol.Task{ID: "t1", ContextID: "c", Status: protocol.TaskStatus{State: protocol.StateWorking}}
	if _, err := one.Create(ctx, "alice", running, chunk("a")); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*Store{"two": two, "plain": plain} {
		if _, err := s.Get(ctx, "alice", "t1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s Get: %v, want not found", name, err)
		}
		if page, err := s.List(ctx, "alice", store.ListQuery{}); err != nil || len(page.Tasks) != 0 || page.TotalSize != 0 {
			t.Errorf("%s List: %+v %v, want nothing", name, page, err)
		}
		if err := s.SignalCancel(ctx, "t1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s SignalCancel: %v, want not found", name, err)
		}
		if _, err := s.Events(ctx, "t1", "", false); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s Events: %v, want not found", name, err)
		}
	}
	// A share of its own: the same id is another task.
	if _, err := two.Create(ctx, "alice", running); err != nil {
		t.Fatalf("the same id in another share: %v", err)
	}
	if r, err := one.Get(ctx, "alice", "t1"); err != nil || r.LastEventID != "1" {
		t.Fatalf("the first share's task after the second's create: %+v %v", r, err)
	}
	// The plain store's keys are the prefix's, as before shares.
	if _, err := plain.Create(ctx, "alice", running); err != nil {
		t.Fatal(err)
	}
	n, err := plain.cli().Do(ctx, plain.cli().B().Exists().Key("{"+prefix+"}t:t1:h", "{"+prefix+"}o:alice:ix").Build()).AsInt64()
	if err != nil || n != 2 {
		t.Fatalf("the plain store's keys: %d of 2 (%v)", n, err)
	}
	// Secrets (the agent's context key) are the scope's.
	s1, err := one.Secret(ctx, "k", 16)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := two.Secret(ctx, "k", 16)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(s1, s2) {
		t.Error("two shares got one secret")
	}
	// A closed store's orphans are found in its own share only.
	one.Close()
	two.Close()
	time.Sleep(1500 * time.Millisecond)
	one2 := newStore(t, url, Options{KeyPrefix: prefix, Share: "one", Lease: time.Second})
	got, err := one2.Orphans(ctx)
	if err != nil || len(got) != 1 || got[0].ID != "t1" {
		t.Fatalf("orphans of share one: %+v %v", got, err)
	}
	if got, err := plain.Orphans(ctx); err != nil || len(got) != 0 {
		t.Fatalf("orphans of the plain store: %+v %v", got, err)
	}
}

// A share name is part of the hash tag: one with a brace would end it.
func TestShareNameChecked(t *testing.T) {
	for _, share := range []string{"a}b", "a{b"} {
		if _, err := New(Options{URL: "redis://127.0.0.1:1", Share: share}); err == nil {
			t.Errorf("share %q accepted", share)
		}
	}
}

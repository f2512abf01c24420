package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

func closed(ch <-chan struct{}, within time.Duration) bool {
	select {
	case <-ch:
		return true
	case <-time.After(within):
		return false
	}
}

func testCancel(t *testing.T, s store.Store) {
	mustCreate(t, s, "alice", newTask("t1", "c1", protocol.StateWorking, base))
	mustCreate(t, s, "alice", newTask("t2", "c1", protocol.StateWorking, base))
	before := s.CancelSignal(ctxT(t), "t1")
	forever := s.CancelSignal(context.Background(), "t1")
	if closed(before, notYet) || closed(forever, 0) {
		t.Fatal("cancel channel closed before any signal")
	}
	other := s.CancelSignal(ctxT(t), "t2")
	if err := s.SignalCancel(ctxT(t), "t1"); err != nil {
		t.Fatal(err)
	}
	if !closed(before, 5*time.Second) || !closed(forever, 5*time.Second) {
		t.Fatal("watcher registered before the signal not woken")
	}
	if !closed(s.CancelSignal(ctxT(t), "t1"), 5*time.Second) {
		t.Error("watcher registered after the signal not closed")
	}
	if closed(other, notYet) {
		t.Error("signal of t1 reached t2's watcher")
	}
	if err := s.SignalCancel(ctxT(t), "t1"); err != nil {
		t.Errorf("second signal: %v", err)
	}
	if err := s.SignalCancel(ctxT(t), "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("signal of a missing task: %v, want ErrNotFound", err)
	}
}

// testCancelCtx: a watcher whose ctx ended may never be woken (the store
// may have dropped its interest), but it must not keep later watchers from
// the signal.
func testCancelCtx(t *testing.T, s store.Store) {
	mustCreate(t, s, "alice", newTask("t1", "c1", protocol.StateWorking, base))
	ctx, cancel := context.WithCancel(ctxT(t))
	ch := s.CancelSignal(ctx, "t1")
	if closed(ch, notYet) {
		t.Fatal("closed before any signal")
	}
	cancel()
	if err := s.SignalCancel(ctxT(t), "t1"); err != nil {
		t.Fatal(err)
	}
	if !closed(s.CancelSignal(ctxT(t), "t1"), 5*time.Second) {
		t.Error("watcher after the signal not closed")
	}
	if ch := s.CancelSignal(ctx, "t1"); !closed(ch, 5*time.Second) {
		t.Error("CancelSignal with an ended ctx must return a closed channel, not block forever")
	}
}

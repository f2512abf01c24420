package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/internal/pgtest"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// The run of a task this store created running watches its cancel
// without reading the task's row, a cancel signalled before the watch
// included; a task created elsewhere, or one created before the
// listener's connection was made again, is read once.
func TestFreshTaskWatchedWithoutRead(t *testing.T) {
	dsn := pgtest.Start(t).DSN()
	share := newShare()
	a := newStore(t, dsn, Options{Share: share})
	b := newStore(t, dsn, Options{Share: share})
	ctx := context.Background()
	create := func(s *Store, id string) {
		t.Helper()
		if _, err := s.Create(ctx, "o", &protocol.Task{ID: id, Status: protocol.TaskStatus{State: protocol.StateWorking}}); err != nil {
			t.Fatal(err)
		}
	}
	fired := func(ch <-chan struct{}, want bool) {
		t.Helper()
		wait := 50 * time.Millisecond
		if want {
			wait = 2 * time.Second
		}
		select {
		case <-ch:
			if !want {
				t.Fatal("the watch fired")
			}
		case <-time.After(wait):
			if want {
				t.Fatal("the watch did not fire")
			}
		}
	}
	for deadline := time.Now().Add(5 * time.Second); !a.lis.up.Load(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the listener never listened")
		}
	}
	// Cancelled on the other replica before the watch.
	create(a, "early")
	if err := b.SignalCancel(ctx, "early"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the notification is heard before the watch
	fired(a.CancelSignal(ctx, "early"), true)
	// Cancelled after the watch.
	create(a, "late")
	sig := a.CancelSignal(ctx, "late")
	if n := a.cancelReads.Load(); n != 0 {
		t.Fatalf("%d reads for fresh tasks' watches, want 0", n)
	}
	fired(sig, false)
	if err := b.SignalCancel(ctx, "late"); err != nil {
		t.Fatal(err)
	}
	fired(sig, true)
	// Created by the other replica: read once.
	create(b, "theirs")
	fired(a.CancelSignal(ctx, "theirs"), false)
	if n := a.cancelReads.Load(); n != 1 {
		t.Fatalf("%d reads for a task created elsewhere, want 1", n)
	}
	// The connection was made again since the creation: read once.
	create(a, "reconnected")
	a.lis.mu.Lock()
	a.lis.epoch++
	a.lis.mu.Unlock()
	if err := b.SignalCancel(ctx, "reconnected"); err != nil {
		t.Fatal(err)
	}
	fired(a.CancelSignal(ctx, "reconnected"), true)
	if n := a.cancelReads.Load(); n != 2 {
		t.Fatalf("%d reads after a reconnect, want 2", n)
	}
	// Nothing fresh is left behind, settled or watched.
	create(a, "settled")
	if _, _, err := a.Update(ctx, "settled", 1, &protocol.Task{ID: "settled", Status: protocol.TaskStatus{State: protocol.StateCompleted}}); err != nil {
		t.Fatal(err)
	}
	a.lis.mu.Lock()
	n := len(a.lis.fresh)
	a.lis.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d fresh tasks left", n)
	}
}

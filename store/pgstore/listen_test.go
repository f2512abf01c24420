package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/internal/pgtest"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// The LISTEN connection alone is cut (the server stays up): its waiters
// wake, it reconnects by itself, and a cancel signalled meanwhile still
// reaches its watcher (heard, or found by the re-check of the flags).
func TestListenerReconnects(t *testing.T) {
	dsn := pgtest.Start(t).DSN()
	share := newShare()
	a := newStore(t, dsn, Options{Share: share})
	b := newStore(t, dsn, Options{Share: share})
	ctx := ctx5(t)
	_, err := a.Create(ctx, "alice", task("t1", protocol.StateWorking), chunk("x"))
	if err != nil {
		t.Fatal(err)
	}
	ready, err := a.EventsReady("t1", "1")
	if err != nil {
		t.Fatal(err)
	}
	watch := a.CancelSignal(ctx, "t1")
	var n int
	if err := b.pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE query LIKE 'LISTEN %' || $1 || '%' AND pid <> pg_backend_pid()`, a.channel).Scan(&n); err != nil || n != 2 {
		t.Fatalf("terminated %d LISTEN connections (%v), want a's and b's", n, err)
	}
	if err := b.SignalCancel(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(ready, 5*time.Second) {
		t.Fatal("a waiter was not woken when the LISTEN connection dropped")
	}
	if !closedWithin(watch, 5*time.Second) {
		t.Fatal("a cancel signalled while the LISTEN connection was down did not reach the watcher")
	}
	// Back and listening: an append on b wakes a wait on a again.
	eventually(t, 5*time.Second, "a wait woken after the reconnect", func() error {
		r, err := a.Get(ctx, "alice", "t1")
		if err != nil {
			return err
		}
		ready, err := a.EventsReady("t1", r.LastEventID)
		if err != nil {
			return err
		}
		if _, _, err = b.Update(ctx, "t1", r.Version, task("t1", protocol.StateWorking), chunk("y")); err != nil {
			return err
		}
		if !closedWithin(ready, time.Second) {
			return context.DeadlineExceeded
		}
		return nil
	})
}

// PushHints: a write learns whether the task has push configs; the
// write that ends the task here drops the hint.
func TestPushHints(t *testing.T) {
	s := newStore(t, pgtest.Start(t).DSN(), Options{Share: newShare()})
	ctx := ctx5(t)
	v, err := s.Create(ctx, "alice", task("t1", protocol.StateWorking))
	if err != nil {
		t.Fatal(err)
	}
	if s.MayHavePushConfigs("t1", false) {
		t.Fatal("a new task may have push configs")
	}
	if err := s.PutPushConfig(ctx, "alice", "t1", store.PushConfig{ID: "p", Data: []byte("d")}, 5); err != nil {
		t.Fatal(err)
	}
	if v, _, err = s.Update(ctx, "t1", v, task("t1", protocol.StateWorking), chunk("x")); err != nil {
		t.Fatal(err)
	}
	if !s.MayHavePushConfigs("t1", false) {
		t.Fatal("the write after a put found no push configs")
	}
	if !s.MayHavePushConfigs("t1", true) || s.MayHavePushConfigs("t1", false) {
		t.Fatal("the last write's hint was not dropped")
	}
}

package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// A running task's lease is renewed while its store lives; once that
// store is gone the lease lapses and another store claims the task once.
// Settled tasks and tasks still renewed are never orphans.
func TestLeases(t *testing.T) {
	url, _ := startRedis(t)
	a := newStore(t, url, Options{KeyPrefix: "l:", Lease: time.Second})
	b := newStore(t, url, Options{KeyPrefix: "l:", Lease: time.Second})
	ctx := context.Background()
	task := func(id string, st protocol.TaskState) *protocol.Task {
		return &protocol.Task{ID: id, ContextID: "c", Status: protocol.TaskStatus{State: st, Timestamp: time.Now().UTC()}}
	}
	if _, err := a.Create(ctx, "o", task("run", protocol.StateWorking)); err != nil {
		t.Fatal(err)
	}
	v, err := a.Create(ctx, "o", task("done", protocol.StateWorking))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Update(ctx, "done", v, task("done", protocol.StateCompleted)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Create(ctx, "o", task("live", protocol.StateWorking)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if got, err := b.Orphans(ctx); err != nil || len(got) != 0 {
		t.Fatalf("orphans while every store renews: %+v %v", got, err)
	}
	a.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := b.Orphans(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 1 {
			if got[0].ID != "run" || got[0].Owner != "o" {
				t.Fatalf("orphan %+v", got[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the closed store's running task never lapsed")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got, _ := b.Orphans(ctx); len(got) != 0 {
		t.Fatalf("claimed twice: %+v", got)
	}
}

// A cancel watch's subscription goes when its last watcher's ctx ends,
// not a sweep later: every run watches its task, and thousands of runs
// a second would otherwise keep as many channels.
func TestCancelSubscriptionDropped(t *testing.T) {
	url, _ := startRedis(t)
	s := newStore(t, url, Options{KeyPrefix: "cs:"})
	ctx := context.Background()
	if _, err := s.Create(ctx, "o", &protocol.Task{ID: "t1", Status: protocol.TaskStatus{State: protocol.StateWorking}}); err != nil {
		t.Fatal(err)
	}
	channels := func() int {
		n, err := s.client.Do(ctx, s.client.B().PubsubNumsub().Channel(s.sub.cancelChannel("t1")).Build()).ToArray()
		if err != nil || len(n) != 2 {
			t.Fatalf("PUBSUB NUMSUB: %v %v", n, err)
		}
		v, _ := n[1].AsInt64()
		return int(v)
	}
	wctx, cancel := context.WithCancel(ctx)
	_ = s.CancelSignal(wctx, "t1")
	if n := channels(); n != 1 {
		t.Fatalf("%d subscriptions while watched", n)
	}
	cancel()
	deadline := time.Now().Add(2 * time.Second)
	for channels() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the subscription outlived its watcher")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// Many waiting streams share the store's connections: 400 waits on 40
// tasks add no connection to the server, and one append per task wakes
// every wait.
func TestWaitsShareConnections(t *testing.T) {
	url, srv := startRedis(t)
	s := newStore(t, url, Options{KeyPrefix: newPrefix()})
	raw, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{fmt.Sprintf("127.0.0.1:%d", srv.Port)}, DisableCache: true, ForceSingleClient: true})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	clients := func() int {
		out, err := raw.Do(context.Background(), raw.B().ClientList().Build()).ToString()
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(out, "\n")
	}
	ctx := ctx5(t)
	const tasks, perTask = 40, 10
	versions := make([]uint64, tasks)
	for i := range tasks {
		if versions[i], err = s.Create(ctx, "alice", task(fmt.Sprint("f", i), protocol.StateWorking)); err != nil {
			t.Fatal(err)
		}
	}
	before := clients()
	var wg sync.WaitGroup
	errs := make(chan error, tasks*perTask)
	for i := range tasks {
		for range perTask {
			wg.Go(func() {
				evs, err := s.Events(ctx, fmt.Sprint("f", i), "", true)
				if err == nil && len(evs) != 1 {
					err = fmt.Errorf("%d events", len(evs))
				}
				errs <- err
			})
		}
	}
	time.Sleep(200 * time.Millisecond)
	if during := clients(); during > before {
		t.Errorf("%d connections while %d streams wait, %d before", during, tasks*perTask, before)
	}
	for i := range tasks {
		if _, _, err := s.Update(ctx, fmt.Sprint("f", i), versions[i], task(fmt.Sprint("f", i), protocol.StateWorking), chunk("x")); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// A stream waiting through EventsReady on a task that expires is woken by
// the sweep and finds the task gone.
func TestSweepWakesExpired(t *testing.T) {
	old := sweepEvery
	sweepEvery = 200 * time.Millisecond
	t.Cleanup(func() { sweepEvery = old })
	url, _ := startRedis(t)
	s := newStore(t, url, Options{KeyPrefix: newPrefix(), IdleTTL: 100 * time.Millisecond})
	ctx := ctx5(t)
	if _, err := s.Create(ctx, "alice", task("t1", protocol.StateInputRequired)); err != nil {
		t.Fatal(err)
	}
	ready, err := s.EventsReady("t1", "")
	if err != nil {
		t.Fatal(err)
	}
	if !closedWithin(ready, 2*time.Second) {
		t.Fatal("the expired task's waiter not woken")
	}
	if _, err := s.Events(ctx, "t1", "", false); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Events after the wake: %v, want ErrNotFound", err)
	}
}

// A cancel watch whose ctx never ends goes once its task is gone (it
// never had a subscription of its own: cancels come through the pattern).
func TestSweepDropsGoneWatches(t *testing.T) {
	old := sweepEvery
	sweepEvery = 100 * time.Millisecond
	t.Cleanup(func() { sweepEvery = old })
	url, _ := startRedis(t)
	s := newStore(t, url, Options{KeyPrefix: newPrefix(), TTL: 50 * time.Millisecond})
	ctx := ctx5(t)
	if _, err := s.Create(ctx, "alice", task("t1", protocol.StateCompleted)); err != nil {
		t.Fatal(err)
	}
	_ = s.CancelSignal(context.Background(), "t1")
	held := func() (watches, subs int) {
		s.sub.mu.Lock()
		defer s.sub.mu.Unlock()
		return len(s.sub.cancels), len(s.sub.subs)
	}
	if w, n := held(); w != 1 || n != 0 {
		t.Fatalf("after CancelSignal: %d watches, %d subscriptions", w, n)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		if w, n := held(); w == 0 && n == 0 {
			break
		}
		if time.Now().After(deadline) {
			w, n := held()
			t.Fatalf("after expiry: %d watches, %d subscriptions", w, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

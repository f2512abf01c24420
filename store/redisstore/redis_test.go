package redisstore

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/storetest"
)

// prefixes numbers the key prefixes of the tests' stores, so that every
// store a test makes on a shared server starts empty.
var prefixes atomic.Int64

func newPrefix() string { return fmt.Sprintf("t%d:", prefixes.Add(1)) }

// newStore opens a store on url with opts and closes it with the test.
func newStore(t testing.TB, url string, opts Options) *Store {
	t.Helper()
	opts.URL = url
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	url, _ := startRedis(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		return newStore(t, url, Options{KeyPrefix: newPrefix()})
	})
}

// The same conformance suite on a Redis Cluster of three shards, with
// prefixes whose slots fall on every shard (the client reaches the
// others through the first node).
func TestConformanceCluster(t *testing.T) {
	url := startCluster(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		return newStore(t, url, Options{KeyPrefix: newPrefix(), Cluster: true})
	})
}

// Two stores of one prefix reached through different nodes of a Cluster
// behave as one: a task made through one is read through the other, a
// wait there is woken by an append here, and a cancel signalled there
// fires the watch here (pub/sub crosses the cluster bus).
func TestClusterReplicas(t *testing.T) {
	url := startCluster(t)
	prefix := newPrefix()
	a := newStore(t, url, Options{KeyPrefix: prefix, Cluster: true})
	// b's URL names a seed that is down first, then a live one (?addr=).
	seeds := fmt.Sprintf("redis://127.0.0.1:%d?addr=%s", freePort(t), strings.TrimPrefix(url, "redis://"))
	b := newStore(t, seeds, Options{KeyPrefix: prefix, Cluster: true})
	ctx := ctx5(t)
	v, err := a.Create(ctx, "alice", task("t1", protocol.StateWorking))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := b.Get(ctx, "alice", "t1"); err != nil || r.Version != v {
		t.Fatalf("Get through the other store: %+v %v", r, err)
	}
	woken := make(chan []store.StoredEvent, 1)
	go func() {
		evs, _ := b.Events(ctx, "t1", "", true)
		woken <- evs
	}()
	time.Sleep(100 * time.Millisecond)
	if _, _, err := a.Update(ctx, "t1", v, task("t1", protocol.StateWorking), chunk("x")); err != nil {
		t.Fatal(err)
	}
	select {
	case evs := <-woken:
		if len(evs) != 1 {
			t.Fatalf("the wait got %d events", len(evs))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the wait through the other store was not woken")
	}
	sig := a.CancelSignal(ctx, "t1")
	if err := b.SignalCancel(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sig:
	case <-time.After(5 * time.Second):
		t.Fatal("the cancel did not cross the cluster")
	}
	page, err := b.List(ctx, "alice", store.ListQuery{})
	if err != nil || len(page.Tasks) != 1 {
		t.Fatalf("List through the other store: %+v %v", page, err)
	}
}

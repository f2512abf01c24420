package redisstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
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

// Cancel watches cost no subscription each: every run watches its task,
// and a SUBSCRIBE and UNSUBSCRIBE per run were a third of a send's
// commands. One pattern subscription per store hears every cancel of the
// prefix, from any replica, and a watcher gone leaves nothing behind.
func TestCancelWatchesShareOnePattern(t *testing.T) {
	url, _ := startRedis(t)
	prefix := newPrefix()
	a := newStore(t, url, Options{KeyPrefix: prefix})
	b := newStore(t, url, Options{KeyPrefix: prefix})
	other := newStore(t, url, Options{KeyPrefix: newPrefix()})
	ctx := context.Background()
	const n = 50
	wctx, cancel := context.WithCancel(ctx)
	sigs := make([]<-chan struct{}, n)
	for i := range n {
		id := fmt.Sprintf("t%d", i)
		if _, err := a.Create(ctx, "o", &protocol.Task{ID: id, Status: protocol.TaskStatus{State: protocol.StateWorking}}); err != nil {
			t.Fatal(err)
		}
		sigs[i] = a.CancelSignal(wctx, id)
		if o := other.CancelSignal(wctx, id); o != wctx.Done() {
			t.Fatal("a store of another prefix watches a task it cannot see")
		}
	}
	r, err := a.cli().Do(ctx, a.cli().B().PubsubNumsub().Channel(a.sub.cancelChannel("t0"), a.sub.cancelChannel("t1")).Build()).ToArray()
	if err != nil || len(r) != 4 {
		t.Fatalf("PUBSUB NUMSUB: %v %v", r, err)
	}
	for _, i := range []int{1, 3} {
		if v, _ := r[i].AsInt64(); v != 0 {
			t.Fatalf("a cancel channel has %d subscribers, want 0", v)
		}
	}
	// Signalled on the other replica: the watch here fires, its
	// neighbours do not.
	if err := b.SignalCancel(ctx, "t7"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sigs[7]:
	case <-time.After(2 * time.Second):
		t.Fatal("the cancel signalled on another replica did not arrive")
	}
	select {
	case <-sigs[8]:
		t.Fatal("another task's watch fired")
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	deadline := time.Now().Add(2 * time.Second)
	for {
		a.sub.mu.Lock()
		w := len(a.sub.cancels)
		a.sub.mu.Unlock()
		if w == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d watches outlived their watchers", w)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// hmgets is how many HMGET commands the server has run.
func hmgets(t *testing.T, s *Store) int { return serverCount(t, s, "hmget") }

// The run of a task this store created running watches its cancel
// without reading the task, a cancel signalled before the watch included;
// a task created elsewhere, or one created while the subscription has
// since reconnected, is read once.
func TestFreshTaskWatchedWithoutRead(t *testing.T) {
	url, _ := startRedis(t)
	prefix := newPrefix()
	a := newStore(t, url, Options{KeyPrefix: prefix})
	b := newStore(t, url, Options{KeyPrefix: prefix})
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
	// A store just made connects its subscriber in the background; until
	// then its tasks are read.
	a.sub.mu.Lock()
	up := a.sub.up
	a.sub.mu.Unlock()
	<-up
	// Cancelled on the other replica before the watch.
	create(a, "early")
	if err := b.SignalCancel(ctx, "early"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the message is heard before the watch
	before := hmgets(t, a)
	fired(a.CancelSignal(ctx, "early"), true)
	// Cancelled after the watch.
	create(a, "late")
	sig := a.CancelSignal(ctx, "late")
	if n := hmgets(t, a); n != before {
		t.Fatalf("%d reads for fresh tasks' watches, want 0", n-before)
	}
	fired(sig, false)
	if err := b.SignalCancel(ctx, "late"); err != nil {
		t.Fatal(err)
	}
	fired(sig, true)
	// Created by the other replica: read once.
	create(b, "theirs")
	fired(a.CancelSignal(ctx, "theirs"), false)
	if n := hmgets(t, a); n != before+1 {
		t.Fatalf("%d reads for a task created elsewhere, want 1", n-before)
	}
	// The subscription reconnected since the creation: read once.
	create(a, "reconnected")
	a.sub.mu.Lock()
	a.sub.epoch++
	a.sub.mu.Unlock()
	if err := b.SignalCancel(ctx, "reconnected"); err != nil {
		t.Fatal(err)
	}
	fired(a.CancelSignal(ctx, "reconnected"), true)
	if n := hmgets(t, a); n != before+2 {
		t.Fatalf("%d reads after a reconnect, want 2", n-before)
	}
	// Nothing fresh is left behind, settled or watched.
	create(a, "settled")
	if _, _, err := a.Update(ctx, "settled", 1, &protocol.Task{ID: "settled", Status: protocol.TaskStatus{State: protocol.StateCompleted}}); err != nil {
		t.Fatal(err)
	}
	a.sub.mu.Lock()
	n := len(a.sub.fresh)
	a.sub.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d fresh tasks left", n)
	}
}

// The anonymous owner's tasks are kept, read and expired like any, but
// not indexed: no owner keys exist for them and their list is empty.
func TestAnonymousTasksNotIndexed(t *testing.T) {
	url, _ := startRedis(t)
	prefix := newPrefix()
	s := newStore(t, url, Options{KeyPrefix: prefix, TTL: time.Hour})
	ctx := context.Background()
	v, err := s.Create(ctx, "", &protocol.Task{ID: "t1", Status: protocol.TaskStatus{State: protocol.StateWorking}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Update(ctx, "t1", v, &protocol.Task{ID: "t1", Status: protocol.TaskStatus{State: protocol.StateCompleted}}); err != nil {
		t.Fatal(err)
	}
	if r, err := s.Get(ctx, "", "t1"); err != nil || r.Task.Status.State != protocol.StateCompleted {
		t.Fatalf("Get: %+v %v", r, err)
	}
	ix := ownerKeys(prefix, "")
	n, err := s.cli().Do(ctx, s.cli().B().Exists().Key(ix[0], ix[1]).Build()).AsInt64()
	if err != nil || n != 0 {
		t.Fatalf("%d owner index keys for the anonymous owner (%v)", n, err)
	}
	ttl, err := s.cli().Do(ctx, s.cli().B().Pttl().Key(taskKeys(prefix, "t1")[0]).Build()).AsInt64()
	if err != nil || ttl <= 0 {
		t.Fatalf("the finished anonymous task's expiry: %d %v", ttl, err)
	}
	page, err := s.List(ctx, "", store.ListQuery{})
	if err != nil || len(page.Tasks) != 0 {
		t.Fatalf("List of the anonymous owner: %+v %v", page, err)
	}
}

// A task's push configs and delivery claims expire with it, and stop
// expiring with it when it runs again, though a write that finds neither
// touches only the task's own two keys.
func TestPushAndClaimsFollowTheTaskExpiry(t *testing.T) {
	url, _ := startRedis(t)
	prefix := newPrefix()
	s := newStore(t, url, Options{KeyPrefix: prefix, TTL: time.Hour, IdleTTL: time.Hour})
	ctx := context.Background()
	write := func(v uint64, st protocol.TaskState) uint64 {
		t.Helper()
		v, _, err := s.Update(ctx, "t1", v, &protocol.Task{ID: "t1", Status: protocol.TaskStatus{State: st}})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	pttl := func(i int) int64 {
		t.Helper()
		n, err := s.cli().Do(ctx, s.cli().B().Pttl().Key(taskKeys(prefix, "t1")[i]).Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	v, err := s.Create(ctx, "o", &protocol.Task{ID: "t1", Status: protocol.TaskStatus{State: protocol.StateWorking}}, chunk("a"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutPushConfig(ctx, "o", "t1", store.PushConfig{ID: "p", Data: []byte("{}")}, 10); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.ClaimDelivery(ctx, "t1", "k"); err != nil || !ok {
		t.Fatalf("ClaimDelivery: %v %v", ok, err)
	}
	v = write(v, protocol.StateInputRequired)
	for i := range len(taskKeys(prefix, "t1")) {
		if n := pttl(i); n <= 0 {
			t.Fatalf("key %d of an interrupted task: PTTL %d, want an expiry", i, n)
		}
	}
	v = write(v, protocol.StateWorking)
	for i := range len(taskKeys(prefix, "t1")) {
		if n := pttl(i); n != -1 {
			t.Fatalf("key %d of a running task: PTTL %d, want none (-1)", i, n)
		}
	}
	write(v, protocol.StateCompleted)
	for i := range len(taskKeys(prefix, "t1")) {
		if n := pttl(i); n <= 0 {
			t.Fatalf("key %d of a finished task: PTTL %d, want an expiry", i, n)
		}
	}
}

// A run that ends without settling its task abandons the lease: it is no
// longer renewed, lapses and is claimed; abandoning a version the task no
// longer has here (a later turn wrote it) keeps the renewals going.
func TestAbandonedLeaseLapses(t *testing.T) {
	url, _ := startRedis(t)
	prefix := newPrefix()
	a := newStore(t, url, Options{KeyPrefix: prefix, Lease: time.Second})
	b := newStore(t, url, Options{KeyPrefix: prefix, Lease: time.Second})
	ctx := context.Background()
	task := func(id string) *protocol.Task {
		return &protocol.Task{ID: id, ContextID: "c", Status: protocol.TaskStatus{State: protocol.StateWorking, Timestamp: time.Now().UTC()}}
	}
	vGone, err := a.Create(ctx, "o", task("gone"))
	if err != nil {
		t.Fatal(err)
	}
	a.Abandon("gone", vGone)
	v, err := a.Create(ctx, "o", task("kept"))
	if err != nil {
		t.Fatal(err)
	}
	v2, _, err := a.Update(ctx, "kept", v, task("kept"))
	if err != nil {
		t.Fatal(err)
	}
	a.Abandon("kept", v) // the run of version v ended; v2's goes on
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := b.Orphans(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 1 {
			if got[0].ID != "gone" {
				t.Fatalf("orphan %+v, want the abandoned task", got[0])
			}
			failed := task("gone")
			failed.Status.State = protocol.StateFailed
			if _, _, err := b.Update(ctx, "gone", vGone, failed); err != nil {
				t.Fatal(err)
			}
			break
		}
		if len(got) > 1 {
			t.Fatalf("orphans %+v, want the abandoned task alone", got)
		}
		if time.Now().After(deadline) {
			t.Fatal("the abandoned lease never lapsed")
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond)
	if got, err := b.Orphans(ctx); err != nil || len(got) != 0 {
		t.Fatalf("orphans after a stale Abandon: %+v %v (version %d renewed)", got, err, v2)
	}
}

// An orphan whose claimant records nothing (its write refused: Redis at
// maxmemory; or it died) is not lost: the claim lapses like a lease and
// the next pass, of any store, claims the task again. A task gone from
// Redis (expired, evicted) leaves the leases instead.
func TestOrphanClaimLapses(t *testing.T) {
	url, _ := startRedis(t)
	prefix := newPrefix()
	dead := newStore(t, url, Options{KeyPrefix: prefix, Lease: time.Second})
	b := newStore(t, url, Options{KeyPrefix: prefix, Lease: time.Second})
	c := newStore(t, url, Options{KeyPrefix: prefix, Lease: time.Second})
	ctx := context.Background()
	for _, id := range []string{"t1", "t2"} {
		if _, err := dead.Create(ctx, "o", &protocol.Task{ID: id, Status: protocol.TaskStatus{State: protocol.StateWorking}}); err != nil {
			t.Fatal(err)
		}
	}
	dead.Close()
	// t2 is gone by the time the lease lapses.
	if err := b.cli().Do(ctx, b.cli().B().Del().Key(taskKeys(prefix, "t2")[0]).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	claim := func(s *Store, within time.Duration) []store.Orphan {
		t.Helper()
		deadline := time.Now().Add(within)
		for {
			got, err := s.Orphans(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) > 0 || time.Now().After(deadline) {
				return got
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	want := []store.Orphan{{ID: "t1", Owner: "o"}}
	if got := claim(b, 5*time.Second); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("first claim: %+v, want %+v", got, want)
	}
	// Claimed: no other pass gets it while the claim holds.
	if got, err := c.Orphans(ctx); err != nil || len(got) != 0 {
		t.Fatalf("a second claimant at once: %+v %v", got, err)
	}
	// b records nothing; once its claim lapses, c claims the task.
	if got := claim(c, 5*time.Second); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the claim lapsed: %+v, want %+v", got, want)
	}
	n, err := b.cli().Do(ctx, b.cli().B().Zcard().Key(b.runsKey()).Build()).AsInt64()
	if err != nil || n != 1 {
		t.Fatalf("%d leases left (%v), want t1's alone", n, err)
	}
}

package pgstore

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/internal/pgtest"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// Two stores on one database and share are two replicas: each sees the
// other's tasks, events, waits and cancels.
func TestTwoReplicas(t *testing.T) {
	dsn := pgtest.Start(t).DSN()
	share := newShare()
	a := newStore(t, dsn, Options{Share: share})
	b := newStore(t, dsn, Options{Share: share})
	ctx := ctx5(t)

	v, err := a.Create(ctx, "alice", task("t1", protocol.StateWorking), chunk("one"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.Get(ctx, "alice", "t1")
	if err != nil || r.Version != v || r.LastEventID != "1" {
		t.Fatalf("B's Get of A's task: %+v, %v", r, err)
	}

	// Paging continues on the other replica: a token of A's is B's.
	for i := range 4 {
		tk := task(fmt.Sprint("p", i), protocol.StateWorking)
		tk.Status.Timestamp = tk.Status.Timestamp.Add(time.Duration(i) * time.Second)
		if _, err := a.Create(ctx, "pager", tk); err != nil {
			t.Fatal(err)
		}
	}
	var paged []string
	q := store.ListQuery{PageSize: 3}
	for i, s := range []*Store{a, b} {
		p, err := s.List(ctx, "pager", q)
		if err != nil || p.TotalSize != 4 || (i == 0) != (p.NextPageToken != "") {
			t.Fatalf("page %d: %+v, %v", i, p, err)
		}
		for _, tk := range p.Tasks {
			paged = append(paged, tk.ID)
		}
		q.PageToken = p.NextPageToken
	}
	if !reflect.DeepEqual(paged, []string{"p3", "p2", "p1", "p0"}) {
		t.Fatalf("paged across replicas: %q", paged)
	}

	// A stream on B waits; A appends; B wakes with the event, and the id
	// A returned is the id B reads.
	got := make(chan []store.StoredEvent, 1)
	go func() {
		evs, err := b.Events(ctx, "t1", r.LastEventID, true)
		if err != nil {
			t.Error(err)
		}
		got <- evs
	}()
	ready, err := b.EventsReady("t1", r.LastEventID)
	if err != nil || closedWithin(ready, 30*time.Millisecond) {
		t.Fatalf("EventsReady on B before the append: %v", err)
	}
	v, last, err := a.Update(ctx, "t1", v, task("t1", protocol.StateWorking), chunk("two"))
	if err != nil || last != "2" {
		t.Fatalf("A's Update: last %q, %v", last, err)
	}
	select {
	case evs := <-got:
		if len(evs) != 1 || evs[0].ID != "2" || text(evs[0].Event) != "two" {
			t.Fatalf("B's wait returned %+v, want event 2 \"two\"", evs)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("B's wait not woken by A's append")
	}
	if !closedWithin(ready, 5*time.Second) {
		t.Fatal("B's EventsReady not woken by A's append")
	}

	// A client that read event 1 on A resumes on B with Last-Event-ID 1.
	if _, _, err := a.Update(ctx, "t1", v, task("t1", protocol.StateWorking), chunk("three")); err != nil {
		t.Fatal(err)
	}
	evs, err := b.Events(ctx, "t1", "1", false)
	if err != nil || len(evs) != 2 || evs[0].ID != "2" || text(evs[0].Event) != "two" || evs[1].ID != "3" || text(evs[1].Event) != "three" {
		t.Fatalf("resume on B after 1: %+v, %v", evs, err)
	}

	// A watches for a cancel, B signals it.
	watch := a.CancelSignal(ctx, "t1")
	if closedWithin(watch, 30*time.Millisecond) {
		t.Fatal("cancel channel closed before the signal")
	}
	if err := b.SignalCancel(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(watch, 5*time.Second) {
		t.Fatal("A's watcher not woken by B's cancel")
	}
	if !closedWithin(b.CancelSignal(ctx, "t1"), time.Second) {
		t.Fatal("a watcher registered on B after the cancel not closed")
	}

	// A compare-and-set across replicas: B's stale version loses.
	if _, _, err := b.Update(ctx, "t1", v, task("t1", protocol.StateCompleted)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("B's stale Update: %v, want ErrConflict", err)
	}
	claims := 0
	for _, s := range []*Store{a, b, a} {
		if ok, err := s.ClaimDelivery(ctx, "t1", "cfg|ev"); err != nil {
			t.Fatal(err)
		} else if ok {
			claims++
		}
	}
	if claims != 1 {
		t.Fatalf("%d claims of one delivery across replicas", claims)
	}
}

// A continuation races on two replicas from one version: exactly one
// wins, and the log holds the winner's events only.
func TestContinuationRace(t *testing.T) {
	dsn := pgtest.Start(t).DSN()
	share := newShare()
	stores := []*Store{newStore(t, dsn, Options{Share: share}), newStore(t, dsn, Options{Share: share})}
	ctx := ctx5(t)
	v, err := stores[0].Create(ctx, "alice", task("t1", protocol.StateInputRequired), chunk("q"))
	if err != nil {
		t.Fatal(err)
	}
	for round := range 20 {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		vers := make([]uint64, 2)
		for i, s := range stores {
			wg.Go(func() {
				vers[i], _, errs[i] = s.Update(ctx, "t1", v, task("t1", protocol.StateInputRequired), chunk(fmt.Sprint(round, "/", i)))
			})
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: both replicas won", round)
			case err == nil:
				winner = i
			case !errors.Is(err, store.ErrConflict):
				t.Fatalf("round %d, replica %d: %v", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no replica won", round)
		}
		v = vers[winner]
		evs, err := stores[1-winner].Events(ctx, "t1", fmt.Sprint(round+1), false)
		if err != nil || len(evs) != 1 || evs[0].ID != fmt.Sprint(round+2) || text(evs[0].Event) != fmt.Sprint(round, "/", winner) {
			t.Fatalf("round %d: log after %d: %+v %v", round, round+1, evs, err)
		}
	}
}

// Two shares in one schema, and two schemas, share nothing; a secret is
// the scope's.
func TestScopesSeparate(t *testing.T) {
	dsn := pgtest.Start(t).DSN()
	share := newShare()
	a := newStore(t, dsn, Options{Share: share})
	for _, b := range []*Store{
		newStore(t, dsn, Options{Share: newShare()}),
		newStore(t, dsn, Options{Share: share, Schema: "other"}),
		newStore(t, dsn, Options{}),
	} {
		ctx := ctx5(t)
		if _, err := a.Create(ctx, "alice", task("t1", protocol.StateWorking), chunk("x")); err != nil && !errors.Is(err, store.ErrExists) {
			t.Fatal(err)
		}
		if _, err := b.Get(ctx, "alice", "t1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s/%s: Get across scopes: %v", b.opts.Schema, b.scope, err)
		}
		if _, err := b.Events(ctx, "t1", "", false); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Events across scopes: %v", err)
		}
		if err := b.SignalCancel(ctx, "t1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("SignalCancel across scopes: %v", err)
		}
		if page, err := b.List(ctx, "alice", store.ListQuery{PageSize: 10}); err != nil || page.TotalSize != 0 {
			t.Errorf("List across scopes: %+v %v", page, err)
		}
		// The same id in the other scope is a task of its own, and its
		// appends wake no waiter of a's.
		bv, err := b.Create(ctx, "bob", task("t1", protocol.StateWorking))
		if err != nil {
			t.Fatalf("Create of the same id in another scope: %v", err)
		}
		ready, err := a.EventsReady("t1", "1")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := b.Update(ctx, "t1", bv, task("t1", protocol.StateWorking), chunk("y")); err != nil {
			t.Fatal(err)
		}
		if closedWithin(ready, 100*time.Millisecond) {
			t.Errorf("%s/%s: an append in another scope woke a's waiter", b.opts.Schema, b.scope)
		}
		sa, err := a.Secret(ctx, "k", 32)
		if err != nil {
			t.Fatal(err)
		}
		if sb, err := b.Secret(ctx, "k", 32); err != nil || reflect.DeepEqual(sa, sb) {
			t.Errorf("a secret crossed scopes: %v", err)
		}
	}
}

// A finished task expires after TTL, an interrupted one after IdleTTL,
// a running one never; List forgets the expired ones at once, the sweep
// deletes their rows.
func TestExpiry(t *testing.T) {
	dsn := pgtest.Start(t).DSN()
	s := newStore(t, dsn, Options{Share: newShare(), TTL: 300 * time.Millisecond, IdleTTL: 600 * time.Millisecond})
	ctx := ctx5(t)
	for _, c := range []struct {
		id string
		st protocol.TaskState
	}{{"done", protocol.StateCompleted}, {"asks", protocol.StateInputRequired}, {"runs", protocol.StateWorking}} {
		if _, err := s.Create(ctx, "alice", task(c.id, c.st), chunk("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutPushConfig(ctx, "alice", "done", store.PushConfig{ID: "p", Data: []byte("d")}, 5); err != nil {
		t.Fatal(err)
	}
	alive := func() []string {
		var out []string
		for _, id := range []string{"done", "asks", "runs"} {
			if _, err := s.Get(ctx, "alice", id); err == nil {
				out = append(out, id)
			} else if !errors.Is(err, store.ErrNotFound) {
				t.Fatal(err)
			}
		}
		return out
	}
	listed := func() int {
		p, err := s.List(ctx, "alice", store.ListQuery{PageSize: 10})
		if err != nil {
			t.Fatal(err)
		}
		return p.TotalSize
	}
	if got := alive(); len(got) != 3 || listed() != 3 {
		t.Fatalf("at once: %q", got)
	}
	time.Sleep(450 * time.Millisecond)
	if got := alive(); !reflect.DeepEqual(got, []string{"asks", "runs"}) || listed() != 2 {
		t.Fatalf("after TTL: %q listed %d", got, listed())
	}
	if _, err := s.Events(ctx, "done", "", false); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Events of an expired task: %v", err)
	}
	if _, err := s.PushConfigs(ctx, "alice", "done"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("push configs of an expired task: %v", err)
	}
	if _, err := s.ClaimDelivery(ctx, "done", "k"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a claim on an expired task: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	if got := alive(); !reflect.DeepEqual(got, []string{"runs"}) || listed() != 1 {
		t.Fatalf("after IdleTTL: %q listed %d", got, listed())
	}
	if err := s.deleteExpired(ctx); err != nil {
		t.Fatal(err)
	}
	var rows, evRows, pushRows int
	if err := s.pool.QueryRow(ctx, s.sql(`SELECT (SELECT count(*) FROM {s}.tasks WHERE scope = $1),
		(SELECT count(*) FROM {s}.events WHERE scope = $1), (SELECT count(*) FROM {s}.push_configs WHERE scope = $1)`),
		s.scope).Scan(&rows, &evRows, &pushRows); err != nil {
		t.Fatal(err)
	}
	if rows != 1 || evRows != 1 || pushRows != 0 {
		t.Errorf("after the sweep: %d task rows, %d event rows, %d push rows; want 1, 1, 0", rows, evRows, pushRows)
	}
	// An expired id can be created again, with a log of its own.
	if _, err := s.Create(ctx, "bob", task("done", protocol.StateWorking)); err != nil {
		t.Fatal(err)
	}
	if evs, err := s.Events(ctx, "done", "", false); err != nil || len(evs) != 0 {
		t.Errorf("a re-created task's log: %+v %v", evs, err)
	}
}

// The bounds: events per task (the terminal write always goes in) and
// tasks per owner (finished ones make room, then interrupted ones;
// running ones do not).
func TestBounds(t *testing.T) {
	dsn := pgtest.Start(t).DSN()
	s := newStore(t, dsn, Options{Share: newShare(), MaxEventsPerTask: 3, MaxTasksPerOwner: 3})
	ctx := ctx5(t)
	if _, err := s.Create(ctx, "alice", task("big", protocol.StateWorking), chunk("1"), chunk("2"), chunk("3"), chunk("4")); !errors.Is(err, store.ErrTooManyEvents) {
		t.Fatalf("a Create over the event bound: %v", err)
	}
	v, err := s.Create(ctx, "alice", task("t1", protocol.StateWorking), chunk("1"), chunk("2"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Update(ctx, "t1", v, task("t1", protocol.StateWorking), chunk("3"), chunk("4")); !errors.Is(err, store.ErrTooManyEvents) {
		t.Fatalf("over the event bound: %v", err)
	}
	if evs, _ := s.Events(ctx, "t1", "", false); len(evs) != 2 {
		t.Fatalf("a refused update appended: %d events", len(evs))
	}
	if _, last, err := s.Update(ctx, "t1", v, task("t1", protocol.StateFailed), chunk("3"), chunk("4")); err != nil || last != "4" {
		t.Fatalf("the terminal write over the bound: last %q, %v", last, err)
	}
	if _, err := s.Create(ctx, "alice", task("t2", protocol.StateInputRequired)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "alice", task("t3", protocol.StateWorking)); err != nil {
		t.Fatal(err)
	}
	// alice holds t1 (failed), t2 (input-required), t3 (working): t4
	// evicts t1, the finished one, though t2 is older in status.
	t1wait, err := s.EventsReady("t1", "4")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "alice", task("t4", protocol.StateWorking)); err != nil {
		t.Fatalf("Create over the quota with a finished task to evict: %v", err)
	}
	if _, err := s.Get(ctx, "alice", "t1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the evicted task: %v", err)
	}
	if !closedWithin(t1wait, 5*time.Second) {
		t.Error("a stream of the evicted task was not woken")
	}
	if _, err := s.Create(ctx, "alice", task("t5", protocol.StateWorking)); err != nil {
		t.Fatalf("Create over the quota with an interrupted task to evict: %v", err)
	}
	if _, err := s.Get(ctx, "alice", "t2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the evicted interrupted task: %v", err)
	}
	var le *store.LimitError
	if _, err := s.Create(ctx, "alice", task("t6", protocol.StateWorking)); !errors.As(err, &le) || !errors.Is(err, store.ErrQuota) || le.Limit != "max_tasks_per_owner" || le.Max != 3 {
		t.Fatalf("Create over the quota, all running: %v", err)
	}
	if _, err := s.Get(ctx, "alice", "t6"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused task was kept: %v", err)
	}
	if p, err := s.List(ctx, "alice", store.ListQuery{PageSize: 10}); err != nil || p.TotalSize != 3 {
		t.Errorf("alice holds %+v, %v; want 3 tasks", p, err)
	}
	if _, err := s.Create(ctx, "", task("anon", protocol.StateWorking)); err != nil {
		t.Errorf("the anonymous owner is not bounded: %v", err)
	}
	if _, err := s.Create(ctx, "alice", task("bad\x00id", protocol.StateWorking)); !errors.Is(err, errBadID) {
		t.Errorf("an id with NUL: %v", err)
	}
}

// Racing Creates of one owner on two replicas hold the quota: the
// owner's advisory lock orders them.
func TestQuotaRace(t *testing.T) {
	dsn := pgtest.Start(t).DSN()
	share := newShare()
	a := newStore(t, dsn, Options{Share: share, MaxTasksPerOwner: 5})
	b := newStore(t, dsn, Options{Share: share, MaxTasksPerOwner: 5})
	ctx := ctx5(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var made []string
	for i := range 12 {
		s := []*Store{a, b}[i%2]
		wg.Go(func() {
			id := fmt.Sprint("r", i)
			_, err := s.Create(ctx, "alice", task(id, protocol.StateWorking))
			switch {
			case err == nil:
				mu.Lock()
				made = append(made, id)
				mu.Unlock()
			case !errors.Is(err, store.ErrQuota):
				t.Error(err)
			}
		})
	}
	wg.Wait()
	sort.Strings(made)
	if len(made) != 5 {
		t.Fatalf("%d running tasks made under a quota of 5: %q", len(made), made)
	}
	if p, err := a.List(ctx, "alice", store.ListQuery{PageSize: 20}); err != nil || p.TotalSize != 5 {
		t.Fatalf("listed %+v, %v", p, err)
	}
}

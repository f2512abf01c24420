package redisstore

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func task(id string, st protocol.TaskState) *protocol.Task {
	return &protocol.Task{ID: id, ContextID: "c1", Status: protocol.TaskStatus{State: st, Timestamp: t0}}
}

func chunk(s string) protocol.Event {
	return protocol.Event{Artifact: &protocol.ArtifactUpdate{TaskID: "x", Artifact: protocol.Artifact{ID: "a", Parts: []protocol.Part{{Kind: protocol.PartText, Text: s}}}, Append: true}}
}

func ctx5(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func closedWithin(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

// Two stores on one server and prefix are two replicas: each sees the
// other's tasks, events, waits and cancels.
func TestTwoReplicas(t *testing.T) {
	url, _ := startRedis(t)
	prefix := newPrefix()
	a := newStore(t, url, Options{KeyPrefix: prefix})
	b := newStore(t, url, Options{KeyPrefix: prefix})
	ctx := ctx5(t)

	v, err := a.Create(ctx, "alice", task("t1", protocol.StateWorking), chunk("one"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.Get(ctx, "alice", "t1")
	if err != nil || r.Version != v || r.Task.ID != "t1" {
		t.Fatalf("B's Get of A's task: %+v, %v", r, err)
	}
	page, err := b.List(ctx, "alice", store.ListQuery{PageSize: 10})
	if err != nil || len(page.Tasks) != 1 || page.TotalSize != 1 {
		t.Fatalf("B lists %+v, %v", page, err)
	}

	// Paging continues on the other replica: a token of A's is B's.
	for i := range 4 {
		tk := task(fmt.Sprint("p", i), protocol.StateWorking)
		tk.Status.Timestamp = t0.Add(time.Duration(i) * time.Second)
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
	_, last, err := a.Update(ctx, "t1", v, task("t1", protocol.StateWorking), chunk("two"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case evs := <-got:
		if len(evs) != 1 || evs[0].ID != last || evs[0].Event.Artifact.Artifact.Parts[0].Text != "two" {
			t.Fatalf("B's wait returned %+v, want the event %s", evs, last)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("B's wait not woken by A's append")
	}
	if !closedWithin(ready, 5*time.Second) {
		t.Fatal("B's EventsReady not woken by A's append")
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

// Stores with different prefixes on one server share nothing.
func TestPrefixesSeparate(t *testing.T) {
	url, _ := startRedis(t)
	a := newStore(t, url, Options{KeyPrefix: newPrefix()})
	b := newStore(t, url, Options{KeyPrefix: newPrefix()})
	ctx := ctx5(t)
	if _, err := a.Create(ctx, "alice", task("t1", protocol.StateWorking), chunk("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, "alice", "t1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get across prefixes: %v", err)
	}
	if _, err := b.Events(ctx, "t1", "", false); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Events across prefixes: %v", err)
	}
	if err := b.SignalCancel(ctx, "t1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SignalCancel across prefixes: %v", err)
	}
	if page, err := b.List(ctx, "alice", store.ListQuery{PageSize: 10}); err != nil || page.TotalSize != 0 {
		t.Errorf("List across prefixes: %+v %v", page, err)
	}
	// The same id under the other prefix is a task of its own.
	if _, err := b.Create(ctx, "bob", task("t1", protocol.StateWorking)); err != nil {
		t.Errorf("Create of the same id under another prefix: %v", err)
	}
}

// A finished task expires after TTL, an interrupted one after IdleTTL,
// a running one never; the index forgets the expired ones.
func TestExpiry(t *testing.T) {
	url, _ := startRedis(t)
	s := newStore(t, url, Options{KeyPrefix: newPrefix(), TTL: 300 * time.Millisecond, IdleTTL: 600 * time.Millisecond})
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
	time.Sleep(300 * time.Millisecond)
	if got := alive(); !reflect.DeepEqual(got, []string{"runs"}) || listed() != 1 {
		t.Fatalf("after IdleTTL: %q listed %d", got, listed())
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
// tasks per owner (finished ones make room; running ones do not).
func TestBounds(t *testing.T) {
	url, _ := startRedis(t)
	s := newStore(t, url, Options{KeyPrefix: newPrefix(), MaxEventsPerTask: 3, MaxTasksPerOwner: 2})
	ctx := ctx5(t)
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
	if _, _, err := s.Update(ctx, "t1", v, task("t1", protocol.StateFailed), chunk("3"), chunk("4")); err != nil {
		t.Fatalf("the terminal write over the bound: %v", err)
	}
	if _, err := s.Create(ctx, "alice", task("t2", protocol.StateWorking)); err != nil {
		t.Fatal(err)
	}
	// alice holds t1 (failed) and t2 (working): t3 evicts t1.
	if _, err := s.Create(ctx, "alice", task("t3", protocol.StateWorking)); err != nil {
		t.Fatalf("Create over the quota with a finished task to evict: %v", err)
	}
	if _, err := s.Get(ctx, "alice", "t1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the evicted task: %v", err)
	}
	var le *store.LimitError
	if _, err := s.Create(ctx, "alice", task("t4", protocol.StateWorking)); !errors.As(err, &le) || !errors.Is(err, store.ErrQuota) || le.Limit != "max_tasks_per_owner" || le.Max != 2 {
		t.Fatalf("Create over the quota, all running: %v", err)
	}
	if _, err := s.Create(ctx, "", task("anon", protocol.StateWorking)); err != nil {
		t.Errorf("the anonymous owner is not bounded: %v", err)
	}
	if _, err := s.Create(ctx, "alice", task("bad\x00id", protocol.StateWorking)); err == nil || strings.Contains(err.Error(), "quota") {
		t.Errorf("an id with NUL: %v", err)
	}
}

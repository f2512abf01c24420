package memory

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return New(Options{}) })
}

// fakeClock is a settable clock for TTL tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func task(id string, st protocol.TaskState) *protocol.Task {
	return &protocol.Task{ID: id, ContextID: "c", Status: protocol.TaskStatus{State: st, Timestamp: t0}}
}

func text(s string) protocol.Event {
	return protocol.Event{Artifact: &protocol.ArtifactUpdate{Artifact: protocol.Artifact{Parts: []protocol.Part{{Kind: protocol.PartText, Text: s}}}}}
}

func newTest(t *testing.T, o Options) *Store {
	s := New(o)
	t.Cleanup(func() { s.Close() })
	return s
}

func update(t *testing.T, s *Store, id string, v uint64, st protocol.TaskState, evs ...protocol.Event) (uint64, []string) {
	t.Helper()
	nv, ids, err := s.Update(context.Background(), id, v, task(id, st), evs...)
	if err != nil {
		t.Fatalf("Update(%s): %v", id, err)
	}
	return nv, ids
}

func TestVersionsAndEventIDs(t *testing.T) {
	s := newTest(t, Options{})
	ctx := context.Background()
	v, err := s.Create(ctx, "o", task("a", protocol.StateSubmitted), text("1"), text("2"))
	if err != nil || v != 1 {
		t.Fatalf("Create = %d, %v; want 1", v, err)
	}
	v, ids := update(t, s, "a", v, protocol.StateWorking, text("3"))
	if v != 2 || !reflect.DeepEqual(ids, []string{"3"}) {
		t.Errorf("Update = %d %q; want 2 [3]", v, ids)
	}
	evs, err := s.Events(ctx, "a", "", false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, e.ID)
	}
	if !reflect.DeepEqual(got, []string{"1", "2", "3"}) {
		t.Errorf("ids %q", got)
	}
	// Ids past the end are valid: they wait for later events.
	if evs, err := s.Events(ctx, "a", "99", false); err != nil || len(evs) != 0 {
		t.Errorf("after 99: %v %v", evs, err)
	}
	if evs, err := s.Events(ctx, "a", "0", false); err != nil || len(evs) != 3 {
		t.Errorf("after 0: %d events, %v", len(evs), err)
	}
	for _, bad := range []string{"+1", "1.0", "0x1", "99999999999999999999"} {
		if _, err := s.Events(ctx, "a", bad, false); !errors.Is(err, store.ErrBadEventID) {
			t.Errorf("after %q: %v", bad, err)
		}
	}
}

func TestEvictsFinishedOnly(t *testing.T) {
	clk := &fakeClock{now: t0}
	s := newTest(t, Options{MaxTasks: 3, Now: clk.Now})
	ctx := context.Background()
	vs := map[string]uint64{}
	for _, id := range []string{"a", "b", "c"} {
		v, err := s.Create(ctx, "o", task(id, protocol.StateWorking))
		if err != nil {
			t.Fatal(err)
		}
		vs[id] = v
		clk.Add(time.Second)
	}
	if _, err := s.Create(ctx, "o", task("d", protocol.StateWorking)); !errors.Is(err, store.ErrFull) {
		t.Fatalf("Create over the bound with nothing finished: %v, want ErrFull", err)
	}
	// b finishes first, then a; then b is updated again (still terminal),
	// which makes a the least recently updated finished task.
	vs["b"], _ = update(t, s, "b", vs["b"], protocol.StateCompleted)
	clk.Add(time.Second)
	vs["a"], _ = update(t, s, "a", vs["a"], protocol.StateFailed)
	clk.Add(time.Second)
	vs["b"], _ = update(t, s, "b", vs["b"], protocol.StateCompleted, text("late"))
	clk.Add(time.Second)

	if _, err := s.Create(ctx, "o", task("d", protocol.StateWorking)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "o", "a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a (finished, least recently updated) not evicted: %v", err)
	}
	for _, id := range []string{"b", "c", "d"} {
		if _, err := s.Get(ctx, "o", id); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	if _, err := s.Create(ctx, "o", task("e", protocol.StateWorking)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "o", "b"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("b not evicted: %v", err)
	}
	if _, err := s.Create(ctx, "o", task("f", protocol.StateWorking)); !errors.Is(err, store.ErrFull) {
		t.Errorf("Create with only working tasks left: %v, want ErrFull", err)
	}
	page, err := s.List(ctx, "o", store.ListQuery{PageSize: 10})
	if err != nil || page.TotalSize != 3 {
		t.Errorf("List after evictions: total %d, %v", page.TotalSize, err)
	}
	if s.Len() != 3 {
		t.Errorf("Len %d", s.Len())
	}
}

// A task that leaves the terminal state (the store does not judge) is no
// longer evictable.
func TestUnfinishedLeavesFinishedList(t *testing.T) {
	s := newTest(t, Options{MaxTasks: 1})
	ctx := context.Background()
	v, _ := s.Create(ctx, "o", task("a", protocol.StateCompleted))
	update(t, s, "a", v, protocol.StateWorking)
	if _, err := s.Create(ctx, "o", task("b", protocol.StateWorking)); !errors.Is(err, store.ErrFull) {
		t.Fatalf("Create: %v, want ErrFull", err)
	}
}

func TestTTL(t *testing.T) {
	clk := &fakeClock{now: t0}
	const ttl = time.Minute
	s := newTest(t, Options{TTL: ttl, Now: clk.Now, SweepInterval: time.Hour})
	ctx := context.Background()
	v, _ := s.Create(ctx, "o", task("done", protocol.StateWorking), text("x"))
	s.Create(ctx, "o", task("running", protocol.StateWorking))
	clk.Add(10 * time.Minute)
	update(t, s, "done", v, protocol.StateCompleted)

	clk.Add(ttl - time.Nanosecond)
	if _, err := s.Get(ctx, "o", "done"); err != nil {
		t.Fatalf("before its TTL: %v", err)
	}
	clk.Add(time.Nanosecond)
	if _, err := s.Get(ctx, "o", "done"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get after TTL: %v, want ErrNotFound", err)
	}
	if _, err := s.Events(ctx, "done", "", false); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Events after TTL: %v, want ErrNotFound", err)
	}
	if _, _, err := s.Update(ctx, "done", v+1, task("done", protocol.StateCompleted)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Update after TTL: %v, want ErrNotFound", err)
	}
	page, _ := s.List(ctx, "o", store.ListQuery{PageSize: 10})
	if page.TotalSize != 1 || len(page.Tasks) != 1 || page.Tasks[0].ID != "running" {
		t.Errorf("List after TTL: %+v", page)
	}
	// Unfinished tasks never expire.
	clk.Add(100 * ttl)
	if _, err := s.Get(ctx, "o", "running"); err != nil {
		t.Errorf("working task expired: %v", err)
	}
	// The id of an expired task can be created again.
	if _, err := s.Create(ctx, "o", task("done", protocol.StateWorking)); err != nil {
		t.Errorf("re-create expired id: %v", err)
	}
	if n := s.Len(); n != 2 {
		t.Errorf("Len %d, want 2 (the expired one replaced)", n)
	}
}

func TestJanitorSweeps(t *testing.T) {
	clk := &fakeClock{now: t0}
	s := newTest(t, Options{TTL: time.Minute, Now: clk.Now, SweepInterval: 2 * time.Millisecond})
	ctx := context.Background()
	for _, id := range []string{"a", "b"} {
		s.Create(ctx, "o", task(id, protocol.StateCompleted))
	}
	s.Create(ctx, "p", task("c", protocol.StateRejected))
	clk.Add(time.Minute)
	deadline := time.Now().Add(5 * time.Second)
	for s.Len() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("janitor left %d tasks", s.Len())
		}
		time.Sleep(time.Millisecond)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.owners) != 0 || s.finished.Len() != 0 {
		t.Errorf("indexes not emptied: %d owners, %d finished", len(s.owners), s.finished.Len())
	}
}

func TestJanitorStopsOnClose(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	s := New(Options{SweepInterval: time.Millisecond})
	s.Create(context.Background(), "o", task("a", protocol.StateWorking))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t, ignore)
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Create(context.Background(), "o", task("b", protocol.StateWorking)); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Create after Close: %v", err)
	}
}

func TestMaxEventsPerTask(t *testing.T) {
	s := newTest(t, Options{MaxEventsPerTask: 3})
	ctx := context.Background()
	if _, err := s.Create(ctx, "o", task("big", protocol.StateWorking), text("1"), text("2"), text("3"), text("4")); !errors.Is(err, store.ErrTooManyEvents) {
		t.Errorf("Create over the bound: %v", err)
	}
	v, _ := s.Create(ctx, "o", task("a", protocol.StateWorking), text("1"), text("2"))
	if _, _, err := s.Update(ctx, "a", v, task("a", protocol.StateWorking), text("3"), text("4")); !errors.Is(err, store.ErrTooManyEvents) {
		t.Fatalf("Update over the bound: %v", err)
	}
	r, _ := s.Get(ctx, "o", "a")
	if r.Version != v || r.LastEventID != "2" {
		t.Fatalf("refused Update applied something: version %d last %q", r.Version, r.LastEventID)
	}
	v, _ = update(t, s, "a", v, protocol.StateWorking, text("3"))
	if _, _, err := s.Update(ctx, "a", v, task("a", protocol.StateWorking), text("4")); !errors.Is(err, store.ErrTooManyEvents) {
		t.Fatalf("Update over the bound: %v", err)
	}
	// The failure that follows is recorded, even over the bound...
	v, ids := update(t, s, "a", v, protocol.StateFailed, text("failed"))
	if !reflect.DeepEqual(ids, []string{"4"}) {
		t.Errorf("terminal update ids %q", ids)
	}
	// ...but only once.
	if _, _, err := s.Update(ctx, "a", v, task("a", protocol.StateFailed), text("5")); !errors.Is(err, store.ErrTooManyEvents) {
		t.Errorf("second terminal Update over the bound: %v", err)
	}
}

func TestEvictionWakesWaiters(t *testing.T) {
	s := newTest(t, Options{MaxTasks: 1})
	ctx := context.Background()
	s.Create(ctx, "o", task("a", protocol.StateCompleted))
	res := make(chan error, 1)
	go func() {
		_, err := s.Events(ctx, "a", "", true)
		res <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for { // wait until the waiter is parked on the notify channel
		s.tasks["a"].mu.Lock()
		parked := s.tasks["a"].notify != nil
		s.tasks["a"].mu.Unlock()
		if parked {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("waiter never parked")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := s.Create(ctx, "o", task("b", protocol.StateWorking)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-res:
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("waiter on an evicted task: %v, want ErrNotFound", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("eviction did not wake the waiter")
	}
}

// CancelSignal with a ctx that ends unregisters its watcher, and a signal
// unregisters every AfterFunc: neither leaves anything behind.
func TestCancelWatchersReleased(t *testing.T) {
	s := newTest(t, Options{})
	s.Create(context.Background(), "o", task("a", protocol.StateWorking))
	e := s.tasks["a"]
	for range 100 {
		ctx, cancel := context.WithCancel(context.Background())
		ch := s.CancelSignal(ctx, "a")
		cancel()
		<-ch
	}
	e.mu.Lock()
	n := len(e.watchers)
	e.mu.Unlock()
	if n != 0 {
		t.Errorf("%d watchers left after their ctx ended", n)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	chs := make([]<-chan struct{}, 10)
	for i := range chs {
		chs[i] = s.CancelSignal(ctx, "a")
	}
	if err := s.SignalCancel(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	for _, ch := range chs {
		<-ch
	}
	if e.watchers != nil {
		t.Error("watchers kept after the signal")
	}
	// Unknown task: only ctx closes it.
	if ch := s.CancelSignal(ctx, "missing"); ch != ctx.Done() {
		t.Error("unknown task should yield ctx.Done()")
	}
}

// TestConcurrentMixed runs every operation at once under -race.
func TestConcurrentMixed(t *testing.T) {
	s := newTest(t, Options{MaxTasks: 50})
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				id := string(rune('a'+w)) + "-" + time.Duration(i).String()
				v, err := s.Create(ctx, "o", task(id, protocol.StateWorking), text("x"))
				if errors.Is(err, store.ErrFull) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				v, _, _ = s.Update(ctx, id, v, task(id, protocol.StateWorking), text("y"))
				s.Update(ctx, id, v, task(id, protocol.StateCompleted), text("z"))
				s.Get(ctx, "o", id)
				s.Events(ctx, id, "1", false)
				s.List(ctx, "o", store.ListQuery{PageSize: 5, Status: protocol.StateCompleted})
				s.SignalCancel(ctx, id)
			}
		}()
	}
	wg.Wait()
	if s.Len() > 50 {
		t.Errorf("bound exceeded: %d", s.Len())
	}
}

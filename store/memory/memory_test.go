package memory

import (
	"context"
	"errors"
	"math"
	"reflect"
	"sort"
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

func update(t *testing.T, s *Store, id string, v uint64, st protocol.TaskState, evs ...protocol.Event) (uint64, string) {
	t.Helper()
	nv, last, err := s.Update(context.Background(), id, v, task(id, st), evs...)
	if err != nil {
		t.Fatalf("Update(%s): %v", id, err)
	}
	return nv, last
}

func TestVersionsAndEventIDs(t *testing.T) {
	s := newTest(t, Options{})
	ctx := context.Background()
	v, err := s.Create(ctx, "o", task("a", protocol.StateSubmitted), text("1"), text("2"))
	if err != nil || v != 1 {
		t.Fatalf("Create = %d, %v; want 1", v, err)
	}
	v, last := update(t, s, "a", v, protocol.StateWorking, text("3"))
	if v != 2 || last != "3" {
		t.Errorf("Update = %d %q; want 2 3", v, last)
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
	s := newTest(t, Options{TTL: time.Minute, IdleTTL: 2 * time.Minute, Now: clk.Now, SweepInterval: 2 * time.Millisecond})
	ctx := context.Background()
	for _, id := range []string{"a", "b"} {
		s.Create(ctx, "o", task(id, protocol.StateCompleted))
	}
	s.Create(ctx, "p", task("c", protocol.StateRejected))
	s.Create(ctx, "q", task("d", protocol.StateInputRequired))
	s.Create(ctx, "q", task("e", protocol.StateAuthRequired))
	clk.Add(time.Minute)
	deadline := time.Now().Add(5 * time.Second)
	for s.Len() != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("janitor left %d tasks, want the 2 interrupted ones", s.Len())
		}
		time.Sleep(time.Millisecond)
	}
	clk.Add(time.Minute)
	deadline = time.Now().Add(5 * time.Second)
	for s.Len() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("janitor left %d tasks", s.Len())
		}
		time.Sleep(time.Millisecond)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.owners) != 0 || s.finished.tasks.Len() != 0 || s.idle.tasks.Len() != 0 {
		t.Errorf("indexes not emptied: %d owners, %d finished, %d idle", len(s.owners), s.finished.tasks.Len(), s.idle.tasks.Len())
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
	v, last := update(t, s, "a", v, protocol.StateFailed, text("failed"))
	if last != "4" {
		t.Errorf("terminal update last id %q", last)
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
	ready, err := s.EventsReady("a", "")
	if err != nil {
		t.Fatal(err)
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
	select {
	case <-ready:
	case <-time.After(5 * time.Second):
		t.Fatal("eviction did not wake an EventsReady waiter")
	}
}

// Every watcher of a task shares its one channel, so a watcher whose ctx
// ends leaves nothing registered; an unknown task yields ctx.Done().
func TestCancelWatchersShareOneChannel(t *testing.T) {
	s := newTest(t, Options{})
	s.Create(context.Background(), "o", task("a", protocol.StateWorking))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := s.CancelSignal(ctx, "a")
	for range 100 {
		wctx, wcancel := context.WithCancel(context.Background())
		if ch := s.CancelSignal(wctx, "a"); ch != first {
			t.Fatal("a second watcher got a channel of its own")
		}
		wcancel()
	}
	if err := s.SignalCancel(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	<-first
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
				if i%2 == 0 { // a turn waits for the client, who answers...
					v, _, _ = s.Update(ctx, id, v, task(id, protocol.StateInputRequired))
					if i%3 == 0 { // ...or walks away
						continue
					}
					v, _, _ = s.Update(ctx, id, v, task(id, protocol.StateWorking))
				}
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

// An interrupted task expires IdleTTL after its last update, exactly like a
// finished one after TTL; a working one never does.
func TestIdleTTL(t *testing.T) {
	const ttl, idleTTL = time.Minute, 10 * time.Minute
	for _, st := range []protocol.TaskState{protocol.StateInputRequired, protocol.StateAuthRequired} {
		t.Run(stateNames[st], func(t *testing.T) {
			clk := &fakeClock{now: t0}
			s := newTest(t, Options{TTL: ttl, IdleTTL: idleTTL, Now: clk.Now, SweepInterval: time.Hour})
			ctx := context.Background()
			v, _ := s.Create(ctx, "o", task("idle", protocol.StateWorking), text("x"))
			s.Create(ctx, "o", task("running", protocol.StateSubmitted))
			clk.Add(time.Hour)
			v, _ = update(t, s, "idle", v, st)
			// Past the finished TTL: an interrupted task is not finished.
			clk.Add(ttl)
			if _, err := s.Get(ctx, "o", "idle"); err != nil {
				t.Fatalf("after TTL (not IdleTTL): %v", err)
			}
			// Any update restarts the wait.
			v, _ = update(t, s, "idle", v, st, text("reminder"))
			clk.Add(idleTTL - time.Nanosecond)
			if _, err := s.Get(ctx, "o", "idle"); err != nil {
				t.Fatalf("before its IdleTTL: %v", err)
			}
			clk.Add(time.Nanosecond)
			if _, err := s.Get(ctx, "o", "idle"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Get after IdleTTL: %v, want ErrNotFound", err)
			}
			if _, err := s.Events(ctx, "idle", "", false); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Events after IdleTTL: %v, want ErrNotFound", err)
			}
			if _, _, err := s.Update(ctx, "idle", v, task("idle", protocol.StateWorking)); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Update after IdleTTL: %v, want ErrNotFound", err)
			}
			page, _ := s.List(ctx, "o", store.ListQuery{PageSize: 10})
			if page.TotalSize != 1 || len(page.Tasks) != 1 || page.Tasks[0].ID != "running" {
				t.Errorf("List after IdleTTL: %+v", page)
			}
			clk.Add(100 * idleTTL)
			if _, err := s.Get(ctx, "o", "running"); err != nil {
				t.Errorf("submitted task expired: %v", err)
			}
			if _, err := s.Create(ctx, "o", task("idle", protocol.StateWorking)); err != nil {
				t.Errorf("re-create expired id: %v", err)
			}
			if n := s.Len(); n != 2 {
				t.Errorf("Len %d, want 2 (the expired one replaced)", n)
			}
		})
	}
}

// A negative IdleTTL keeps interrupted tasks until eviction.
func TestIdleTTLNever(t *testing.T) {
	clk := &fakeClock{now: t0}
	s := newTest(t, Options{MaxTasks: 1, IdleTTL: -1, Now: clk.Now})
	ctx := context.Background()
	s.Create(ctx, "o", task("a", protocol.StateInputRequired))
	clk.Add(100 * 365 * 24 * time.Hour)
	if _, err := s.Get(ctx, "o", "a"); err != nil {
		t.Fatalf("interrupted task expired with IdleTTL < 0: %v", err)
	}
	if _, err := s.Create(ctx, "o", task("b", protocol.StateWorking)); err != nil {
		t.Fatalf("Create: %v (the interrupted task should be evicted)", err)
	}
	if _, err := s.Get(ctx, "o", "a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a not evicted: %v", err)
	}
}

// When full, the store evicts finished tasks first (least recently updated
// first), then interrupted ones, and fails only when every task is running.
func TestEvictionOrder(t *testing.T) {
	clk := &fakeClock{now: t0}
	s := newTest(t, Options{MaxTasks: 5, Now: clk.Now})
	ctx := context.Background()
	vs := map[string]uint64{}
	for _, id := range []string{"w", "i1", "i2", "f1", "f2"} {
		vs[id], _ = s.Create(ctx, "o", task(id, protocol.StateWorking))
	}
	step := func(id string, st protocol.TaskState) {
		t.Helper()
		clk.Add(time.Second)
		vs[id], _ = update(t, s, id, vs[id], st)
	}
	// The finished tasks are the most recently updated, and i1 went idle
	// first but was updated again after i2: the order of eviction is
	// f2, f1, i2, i1.
	step("i1", protocol.StateInputRequired)
	step("i2", protocol.StateAuthRequired)
	step("i1", protocol.StateInputRequired)
	step("f2", protocol.StateCompleted)
	step("f1", protocol.StateCanceled)
	step("f2", protocol.StateCompleted)
	for _, c := range []struct{ create, evicted string }{
		{"n1", "f1"}, {"n2", "f2"}, {"n3", "i2"}, {"n4", "i1"},
	} {
		if _, err := s.Create(ctx, "o", task(c.create, protocol.StateWorking)); err != nil {
			t.Fatalf("Create %s: %v", c.create, err)
		}
		if _, err := s.Get(ctx, "o", c.evicted); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("after Create %s: %s not evicted (%v)", c.create, c.evicted, err)
		}
	}
	if _, err := s.Create(ctx, "o", task("n5", protocol.StateWorking)); !errors.Is(err, store.ErrFull) {
		t.Errorf("Create with only working tasks: %v, want ErrFull", err)
	}
	page, _ := s.List(ctx, "o", store.ListQuery{PageSize: 10})
	var ids []string
	for _, tk := range page.Tasks {
		ids = append(ids, tk.ID)
	}
	sort.Strings(ids)
	if want := []string{"n1", "n2", "n3", "n4", "w"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("left %q, want %q", ids, want)
	}
}

// An Update moves a task to the lot of its new state (or out of any), with
// the deadline of that lot, and eviction follows.
func TestUpdateMovesBetweenLots(t *testing.T) {
	const ttl, idleTTL = time.Minute, time.Hour
	none, fin, idle := "none", "finished", "idle"
	for _, c := range []struct {
		from, to protocol.TaskState
		lot      string
	}{
		{protocol.StateSubmitted, protocol.StateWorking, none},
		{protocol.StateWorking, protocol.StateInputRequired, idle},
		{protocol.StateWorking, protocol.StateAuthRequired, idle},
		{protocol.StateInputRequired, protocol.StateWorking, none},
		{protocol.StateAuthRequired, protocol.StateSubmitted, none},
		{protocol.StateInputRequired, protocol.StateAuthRequired, idle},
		{protocol.StateInputRequired, protocol.StateCompleted, fin},
		{protocol.StateAuthRequired, protocol.StateRejected, fin},
		{protocol.StateWorking, protocol.StateFailed, fin},
		{protocol.StateCompleted, protocol.StateInputRequired, idle}, // the store does not judge
		{protocol.StateCanceled, protocol.StateWorking, none},
	} {
		t.Run(stateNames[c.from]+"→"+stateNames[c.to], func(t *testing.T) {
			clk := &fakeClock{now: t0}
			s := newTest(t, Options{MaxTasks: 1, TTL: ttl, IdleTTL: idleTTL, Now: clk.Now})
			ctx := context.Background()
			v, err := s.Create(ctx, "o", task("a", c.from))
			if err != nil {
				t.Fatal(err)
			}
			clk.Add(time.Second)
			update(t, s, "a", v, c.to)
			now := clk.Now().UnixNano()

			s.mu.RLock()
			e := s.tasks["a"]
			lot, deadline := none, int64(notParked)
			switch e.lot {
			case &s.finished:
				lot, deadline = fin, now+int64(ttl)
			case &s.idle:
				lot, deadline = idle, now+int64(idleTTL)
			}
			nFin, nIdle := s.finished.tasks.Len(), s.idle.tasks.Len()
			s.mu.RUnlock()
			if lot != c.lot {
				t.Fatalf("in lot %s, want %s", lot, c.lot)
			}
			if got := e.deadline.Load(); got != deadline {
				t.Errorf("deadline %d, want %d", got, deadline)
			}
			if want := map[string][2]int{none: {0, 0}, fin: {1, 0}, idle: {0, 1}}[c.lot]; [2]int{nFin, nIdle} != want {
				t.Errorf("lots hold %d finished, %d idle; want %v", nFin, nIdle, want)
			}
			_, err = s.Create(ctx, "o", task("b", protocol.StateWorking))
			if evictable := c.lot != none; evictable != (err == nil) {
				t.Errorf("Create over a task in lot %s: %v", c.lot, err)
			}
			if c.lot == none && !errors.Is(err, store.ErrFull) {
				t.Errorf("Create: %v, want ErrFull", err)
			}
		})
	}
}

func TestParkingDeadline(t *testing.T) {
	for _, c := range []struct {
		ttl       time.Duration
		now, want int64
	}{
		{time.Minute, 1000, 1000 + int64(time.Minute)},
		{time.Minute, -5, -5 + int64(time.Minute)},
		{-1, 1000, math.MaxInt64},
		{0, 1000, math.MaxInt64},
		{time.Duration(math.MaxInt64), 1, math.MaxInt64}, // no overflow
		{time.Minute, math.MaxInt64 - 1, math.MaxInt64},
	} {
		p := parking{ttl: c.ttl}
		if got := p.deadline(c.now); got != c.want {
			t.Errorf("ttl %v at %d: %d, want %d", c.ttl, c.now, got, c.want)
		}
	}
}

// stateNames name the states in subtest names.
var stateNames = map[protocol.TaskState]string{
	protocol.StateSubmitted: "submitted", protocol.StateWorking: "working",
	protocol.StateCompleted: "completed", protocol.StateFailed: "failed",
	protocol.StateCanceled: "canceled", protocol.StateInputRequired: "input-required",
	protocol.StateRejected: "rejected", protocol.StateAuthRequired: "auth-required",
}

// TestHeld counts the tasks by who holds them: a run, the client, or no
// one (finished).
func TestHeld(t *testing.T) {
	s := newTest(t, Options{})
	ctx := context.Background()
	for id, st := range map[string]protocol.TaskState{
		"run": protocol.StateWorking, "new": protocol.StateSubmitted,
		"wait": protocol.StateInputRequired, "done": protocol.StateCompleted, "gone": protocol.StateCanceled,
	} {
		if _, err := s.Create(ctx, "o", task(id, st)); err != nil {
			t.Fatal(err)
		}
	}
	if total, waiting, running := s.Held(); total != 5 || waiting != 1 || running != 2 {
		t.Errorf("Held = %d, %d, %d; want 5, 1, 2", total, waiting, running)
	}
}

// Push configs and claims are charged to their task and freed with it.
func TestPushCharged(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Create(ctx, "o", &protocol.Task{ID: "t", Status: protocol.TaskStatus{State: protocol.StateWorking}}); err != nil {
		t.Fatal(err)
	}
	before := s.Bytes()
	if err := s.PutPushConfig(ctx, "o", "t", store.PushConfig{ID: "c", Data: make([]byte, 1000)}, 10); err != nil {
		t.Fatal(err)
	}
	if got := s.Bytes() - before; got != 1000+1+pushOverhead {
		t.Fatalf("a config is charged %d bytes", got)
	}
	if ok, err := s.ClaimDelivery(ctx, "t", "k"); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if err := s.DeletePushConfig(ctx, "o", "t", "c"); err != nil {
		t.Fatal(err)
	}
	if got := s.Bytes() - before; got != 1+pushOverhead {
		t.Fatalf("after the delete, %d bytes charged (the claim's)", got)
	}
}

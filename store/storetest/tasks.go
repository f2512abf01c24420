package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

func testCreateGet(t *testing.T, s store.Store) {
	task := newTask("t1", "c1", protocol.StateSubmitted, base)
	v := mustCreate(t, s, "alice", task, statusEvent("t1", protocol.StateSubmitted, false))
	r := mustGet(t, s, "alice", "t1")
	if r.Owner != "alice" || r.Version != v {
		t.Errorf("record owner %q version %d, want alice %d", r.Owner, r.Version, v)
	}
	if !reflect.DeepEqual(r.Task, task) {
		t.Errorf("Get task differs:\n got %+v\nwant %+v", r.Task, task)
	}
	evs := mustEvents(t, s, "t1", "")
	if len(evs) != 1 || evs[0].Event.Status == nil || evs[0].Event.Status.Status.State != protocol.StateSubmitted {
		t.Fatalf("events after Create = %+v", evs)
	}
	if r.LastEventID != evs[0].ID {
		t.Errorf("LastEventID %q, want %q", r.LastEventID, evs[0].ID)
	}
	if _, err := s.Get(ctxT(t), "alice", "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get missing: %v, want ErrNotFound", err)
	}

	// A task created without events has no LastEventID.
	mustCreate(t, s, "alice", newTask("t2", "c1", protocol.StateWorking, base))
	if r := mustGet(t, s, "alice", "t2"); r.LastEventID != "" {
		t.Errorf("LastEventID of a task without events = %q", r.LastEventID)
	}
}

func testCreateExists(t *testing.T, s store.Store) {
	mustCreate(t, s, "alice", newTask("t1", "c1", protocol.StateWorking, base))
	for _, owner := range []string{"alice", "bob"} {
		if _, err := s.Create(ctxT(t), owner, newTask("t1", "c9", protocol.StateWorking, base)); !errors.Is(err, store.ErrExists) {
			t.Errorf("second Create by %s: %v, want ErrExists", owner, err)
		}
	}
	if r := mustGet(t, s, "alice", "t1"); r.Task.ContextID != "c1" {
		t.Errorf("failed Create overwrote the task: context %q", r.Task.ContextID)
	}
}

func testOwnerScope(t *testing.T, s store.Store) {
	mustCreate(t, s, "alice", newTask("t1", "c1", protocol.StateWorking, base))
	mustCreate(t, s, "", newTask("anon", "c1", protocol.StateWorking, base))
	for _, tc := range []struct{ owner, id string }{{"bob", "t1"}, {"", "t1"}, {"Alice", "t1"}, {"alice", "anon"}} {
		if _, err := s.Get(ctxT(t), tc.owner, tc.id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(%q, %s): %v, want ErrNotFound", tc.owner, tc.id, err)
		}
	}
	// The store does what it is asked: the empty owner is an owner like any.
	if r := mustGet(t, s, "", "anon"); r.Owner != "" {
		t.Errorf("owner %q", r.Owner)
	}
}

// testLeavesValuesAlone: values handed to the store and values it hands
// out are shared (see store.Store), so the store itself must never write
// into them: after every operation the task and event given are still
// equal to fresh copies.
func testLeavesValuesAlone(t *testing.T, s store.Store) {
	task := newTask("t1", "c1", protocol.StateWorking, base)
	ev := textEvent("t1", "chunk")
	v := mustCreate(t, s, "alice", task, ev)
	upd := newTask("t1", "c1", protocol.StateCompleted, base.Add(time.Second))
	// A status event: a store may merge a task's earlier chunks (see
	// store.Compact), so a second chunk might not be read back as sent.
	uev := statusEvent("t1", protocol.StateCompleted, true)
	if _, _, err := s.Update(ctxT(t), "t1", v, upd, uev); err != nil {
		t.Fatal(err)
	}
	r := mustGet(t, s, "alice", "t1")
	if _, err := s.List(ctxT(t), "alice", store.ListQuery{PageSize: 10}); err != nil {
		t.Fatal(err)
	}
	evs := mustEvents(t, s, "t1", "")
	if len(evs) != 2 {
		t.Fatalf("%d events, want 2", len(evs))
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"created task", task, newTask("t1", "c1", protocol.StateWorking, base)},
		{"created event", ev, textEvent("t1", "chunk")},
		{"updated task", upd, newTask("t1", "c1", protocol.StateCompleted, base.Add(time.Second))},
		{"updated event", uev, statusEvent("t1", protocol.StateCompleted, true)},
		{"Get result", r.Task, newTask("t1", "c1", protocol.StateCompleted, base.Add(time.Second))},
		{"first event read", evs[0].Event, textEvent("t1", "chunk")},
		{"second event read", evs[1].Event, statusEvent("t1", protocol.StateCompleted, true)},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s changed:\n got %+v\nwant %+v", c.name, c.got, c.want)
		}
	}
}

// testSharedReads reads a task and its log while another goroutine
// replaces it: each read must be one whole written value. Under -race it
// also proves the store writes nothing a reader may be looking at.
func testSharedReads(t *testing.T, s store.Store) {
	v := mustCreate(t, s, "alice", newTask("t1", "c1", protocol.StateWorking, base), textEvent("t1", "0"))
	const updates = 200
	var wg sync.WaitGroup
	errs := make(chan string, 3)
	report := func(format string, args ...any) {
		select {
		case errs <- fmt.Sprintf(format, args...):
		default:
		}
	}
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		for i := 1; i <= updates; i++ {
			nv, _, err := s.Update(ctxT(t), "t1", v, newTask("t1", "c1", protocol.StateWorking, base.Add(time.Duration(i))), textEvent("t1", strconv.Itoa(i)))
			if err != nil {
				report("update %d: %v", i, err)
				return
			}
			v = nv
		}
	}()
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			after := ""
			for {
				select {
				case <-done:
					return
				default:
				}
				r, err := s.Get(ctxT(t), "alice", "t1")
				if err != nil {
					report("get: %v", err)
					return
				}
				if want := newTask("t1", "c1", protocol.StateWorking, r.Task.Status.Timestamp); !reflect.DeepEqual(r.Task, want) {
					report("torn read: %+v", r.Task)
					return
				}
				page, err := s.List(ctxT(t), "alice", store.ListQuery{PageSize: 1})
				if err != nil || len(page.Tasks) != 1 || page.Tasks[0].Artifacts[0].Parts[0].Text != "42" {
					report("list: %v %+v", err, page)
					return
				}
				evs, err := s.Events(ctxT(t), "t1", after, false)
				if err != nil {
					report("events: %v", err)
					return
				}
				for _, e := range evs {
					if want := textEvent("t1", e.Event.Artifact.Artifact.Parts[0].Text); !reflect.DeepEqual(e.Event, want) {
						report("event %s: %+v", e.ID, e.Event)
						return
					}
					after = e.ID
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func testUpdateVersions(t *testing.T, s store.Store) {
	v1 := mustCreate(t, s, "alice", newTask("t1", "c1", protocol.StateSubmitted, base))
	v2, last, err := s.Update(ctxT(t), "t1", v1, newTask("t1", "c1", protocol.StateWorking, base), textEvent("t1", "a"), textEvent("t1", "b"))
	if err != nil {
		t.Fatal(err)
	}
	if evs := mustEvents(t, s, "t1", ""); v2 == v1 || len(evs) != 2 || last != evs[1].ID {
		t.Fatalf("Update: version %d (was %d), last id %q, log %+v", v2, v1, last, evs)
	}
	if _, _, err := s.Update(ctxT(t), "t1", v1, newTask("t1", "c1", protocol.StateFailed, base)); !errors.Is(err, store.ErrConflict) {
		t.Errorf("stale Update: %v, want ErrConflict", err)
	}
	r := mustGet(t, s, "alice", "t1")
	if r.Version != v2 || r.Task.Status.State != protocol.StateWorking || r.LastEventID != last {
		t.Errorf("after Update: version %d state %v last %q; want %d working %q", r.Version, r.Task.Status.State, r.LastEventID, v2, last)
	}
	v3, last3, err := s.Update(ctxT(t), "t1", v2, newTask("t1", "c1", protocol.StateCompleted, base))
	if err != nil || v3 == v2 || last3 != "" {
		t.Errorf("Update without events: v%d last id %q err %v", v3, last3, err)
	}
	if _, _, err := s.Update(ctxT(t), "nope", 1, newTask("nope", "c1", protocol.StateWorking, base)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Update of a missing task: %v, want ErrNotFound", err)
	}
}

func testUpdateConflictRace(t *testing.T, s store.Store) {
	v := mustCreate(t, s, "alice", newTask("t1", "c1", protocol.StateWorking, base))
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			task := newTask("t1", "c1", protocol.StateWorking, base)
			task.Metadata = []byte(`{"winner":` + string(rune('0'+i)) + `}`)
			_, _, errs[i] = s.Update(ctxT(t), "t1", v, task, textEvent("t1", string(rune('0'+i))))
		}()
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("two updaters won from the same version: %d and %d", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, store.ErrConflict):
			t.Fatalf("updater %d: %v, want ErrConflict", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no updater won")
	}
	w := string(rune('0' + winner))
	if r := mustGet(t, s, "alice", "t1"); string(r.Task.Metadata) != `{"winner":`+w+`}` {
		t.Errorf("stored metadata %s, winner %s", r.Task.Metadata, w)
	}
	if got := texts(mustEvents(t, s, "t1", "")); !reflect.DeepEqual(got, []string{w}) {
		t.Errorf("log %q: losers appended events (winner %s)", got, w)
	}
}

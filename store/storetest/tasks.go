package storetest

import (
	"errors"
	"reflect"
	"sync"
	"testing"

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

func testCopiesIn(t *testing.T, s store.Store) {
	task := newTask("t1", "c1", protocol.StateWorking, base)
	ev := textEvent("t1", "chunk")
	v := mustCreate(t, s, "alice", task, ev)
	want := newTask("t1", "c1", protocol.StateWorking, base)

	// Mutate everything the caller handed over.
	task.History[0].Parts[1].Data[2] = 'X'
	task.History[0].Parts[2].Raw[0] = 'X'
	task.History[0].Parts[0].Text = "changed"
	task.Status.Message.Parts[0].Text = "changed"
	task.Artifacts[0].Metadata[1] = 'X'
	task.Metadata[1] = 'X'
	task.History[0].Extensions[0] = "changed"
	ev.Artifact.Artifact.Parts[1].Data[1] = '9'
	ev.Artifact.Artifact.Parts[0].Text = "changed"

	if r := mustGet(t, s, "alice", "t1"); !reflect.DeepEqual(r.Task, want) {
		t.Errorf("stored task aliases the Create argument:\n got %+v\nwant %+v", r.Task, want)
	}
	evs := mustEvents(t, s, "t1", "")
	if got := evs[0].Event.Artifact.Artifact; got.Parts[0].Text != "chunk" || string(got.Parts[1].Data) != "[1]" {
		t.Errorf("stored event aliases the Create argument: %+v", got)
	}

	upd := newTask("t1", "c1", protocol.StateCompleted, base)
	uev := textEvent("t1", "last")
	if _, _, err := s.Update(ctxT(t), "t1", v, upd, uev); err != nil {
		t.Fatal(err)
	}
	upd.History[0].Parts[1].Data[2] = 'Y'
	uev.Artifact.Artifact.Parts[1].Data[1] = '8'
	r := mustGet(t, s, "alice", "t1")
	if string(r.Task.History[0].Parts[1].Data) != `{"k":[1,2]}` {
		t.Errorf("stored task aliases the Update argument: %s", r.Task.History[0].Parts[1].Data)
	}
	evs = mustEvents(t, s, "t1", evs[0].ID)
	if len(evs) != 1 || string(evs[0].Event.Artifact.Artifact.Parts[1].Data) != "[1]" {
		t.Errorf("stored event aliases the Update argument: %+v", evs)
	}
}

func testCopiesOut(t *testing.T, s store.Store) {
	mustCreate(t, s, "alice", newTask("t1", "c1", protocol.StateWorking, base), textEvent("t1", "chunk"))
	want := newTask("t1", "c1", protocol.StateWorking, base)

	r := mustGet(t, s, "alice", "t1")
	r.Task.History[0].Parts[1].Data[2] = 'X'
	r.Task.History[0].Parts[2].Raw[0] = 'X'
	r.Task.Status.Message.Parts[0].Text = "changed"
	r.Task.Artifacts[0].Parts[0].Text = "changed"
	r.Task.Metadata[1] = 'X'
	r.Task.History = append(r.Task.History[:0], protocol.Message{ID: "injected"})
	if r2 := mustGet(t, s, "alice", "t1"); !reflect.DeepEqual(r2.Task, want) {
		t.Errorf("Get result aliases the store:\n got %+v\nwant %+v", r2.Task, want)
	}

	page, err := s.List(ctxT(t), "alice", store.ListQuery{PageSize: 10})
	if err != nil || len(page.Tasks) != 1 {
		t.Fatalf("List: %v %+v", err, page)
	}
	page.Tasks[0].History[0].Parts[1].Data[2] = 'Z'
	page.Tasks[0].Status.Message.Parts[0].Text = "changed"
	if r2 := mustGet(t, s, "alice", "t1"); !reflect.DeepEqual(r2.Task, want) {
		t.Errorf("List result aliases the store:\n got %+v\nwant %+v", r2.Task, want)
	}

	evs := mustEvents(t, s, "t1", "")
	evs[0].Event.Artifact.Artifact.Parts[1].Data[1] = '7'
	evs[0].Event.Artifact.Artifact.Parts[0].Text = "changed"
	evs = mustEvents(t, s, "t1", "")
	if got := evs[0].Event.Artifact.Artifact; got.Parts[0].Text != "chunk" || string(got.Parts[1].Data) != "[1]" {
		t.Errorf("Events result aliases the store: %+v", got)
	}
}

func testUpdateVersions(t *testing.T, s store.Store) {
	v1 := mustCreate(t, s, "alice", newTask("t1", "c1", protocol.StateSubmitted, base))
	v2, ids, err := s.Update(ctxT(t), "t1", v1, newTask("t1", "c1", protocol.StateWorking, base), textEvent("t1", "a"), textEvent("t1", "b"))
	if err != nil {
		t.Fatal(err)
	}
	if v2 == v1 || len(ids) != 2 || ids[0] == ids[1] {
		t.Fatalf("Update: version %d (was %d), ids %q", v2, v1, ids)
	}
	if _, _, err := s.Update(ctxT(t), "t1", v1, newTask("t1", "c1", protocol.StateFailed, base)); !errors.Is(err, store.ErrConflict) {
		t.Errorf("stale Update: %v, want ErrConflict", err)
	}
	r := mustGet(t, s, "alice", "t1")
	if r.Version != v2 || r.Task.Status.State != protocol.StateWorking || r.LastEventID != ids[1] {
		t.Errorf("after Update: version %d state %v last %q; want %d working %q", r.Version, r.Task.Status.State, r.LastEventID, v2, ids[1])
	}
	v3, ids3, err := s.Update(ctxT(t), "t1", v2, newTask("t1", "c1", protocol.StateCompleted, base))
	if err != nil || v3 == v2 || len(ids3) != 0 {
		t.Errorf("Update without events: v%d ids %q err %v", v3, ids3, err)
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

package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// notYet is how long a test waits to see that a blocked call stays blocked.
const notYet = 30 * time.Millisecond

func testEventsOrder(t *testing.T, s store.Store) {
	v := mustCreate(t, s, "alice", newTask("t1", "c1", protocol.StateWorking, base), textEvent("t1", "a"), textEvent("t1", "b"))
	_, last, err := s.Update(ctxT(t), "t1", v, newTask("t1", "c1", protocol.StateWorking, base), textEvent("t1", "c"), textEvent("t1", "d"), textEvent("t1", "e"))
	if err != nil {
		t.Fatal(err)
	}
	all := mustEvents(t, s, "t1", "")
	if got := texts(all); !reflect.DeepEqual(got, []string{"a", "b", "c", "d", "e"}) {
		t.Fatalf("log %q", got)
	}
	seen := map[string]bool{}
	for _, e := range all {
		if e.ID == "" || seen[e.ID] {
			t.Fatalf("event ids not unique and non-empty: %+v", all)
		}
		seen[e.ID] = true
	}
	if last != all[4].ID {
		t.Errorf("Update returned last id %q, the log ends with %q", last, all[4].ID)
	}
	for i, e := range all {
		if got := texts(mustEvents(t, s, "t1", e.ID)); !reflect.DeepEqual(got, texts(all[i+1:])) {
			t.Errorf("after %s: %q, want %q", e.ID, got, texts(all[i+1:]))
		}
	}
	if evs, err := s.Events(ctxT(t), "t1", all[4].ID, false); err != nil || len(evs) != 0 {
		t.Errorf("after the last id without wait: %+v, %v", evs, err)
	}
	if _, err := s.Events(ctxT(t), "missing", "", false); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Events of a missing task: %v, want ErrNotFound", err)
	}
}

func testEventsBadID(t *testing.T, s store.Store) {
	mustCreate(t, s, "alice", newTask("t1", "c1", protocol.StateWorking, base), textEvent("t1", "a"))
	for _, bad := range []string{"not-an-id", "-1", " 1", "1x", "\x00"} {
		if _, err := s.Events(ctxT(t), "t1", bad, false); !errors.Is(err, store.ErrBadEventID) {
			t.Errorf("Events(after=%q): %v, want ErrBadEventID", bad, err)
		}
	}
}

type result struct {
	evs []store.StoredEvent
	err error
}

func waitAsync(ctx context.Context, s store.Store, id, after string) <-chan result {
	ch := make(chan result, 1)
	go func() {
		evs, err := s.Events(ctx, id, after, true)
		ch <- result{evs, err}
	}()
	return ch
}

func testEventsWaitWakes(t *testing.T, s store.Store) {
	v := mustCreate(t, s, "alice", newTask("t1", "c1", protocol.StateWorking, base), textEvent("t1", "a"))
	first := mustEvents(t, s, "t1", "")
	// With events present, wait returns at once.
	if evs, err := s.Events(ctxT(t), "t1", "", true); err != nil || len(evs) != 1 {
		t.Fatalf("wait with events present: %+v %v", evs, err)
	}
	ch := waitAsync(ctxT(t), s, "t1", first[0].ID)
	select {
	case r := <-ch:
		t.Fatalf("wait returned before an append: %+v", r)
	case <-time.After(notYet):
	}
	if _, _, err := s.Update(ctxT(t), "t1", v, newTask("t1", "c1", protocol.StateWorking, base), textEvent("t1", "b")); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-ch:
		if r.err != nil || !reflect.DeepEqual(texts(r.evs), []string{"b"}) {
			t.Fatalf("woken wait: %q %v", texts(r.evs), r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("wait not woken by the append")
	}
}

func testEventsWaitCtx(t *testing.T, s store.Store) {
	mustCreate(t, s, "alice", newTask("t1", "c1", protocol.StateWorking, base))
	ctx, cancel := context.WithCancel(ctxT(t))
	ch := waitAsync(ctx, s, "t1", "")
	select {
	case r := <-ch:
		t.Fatalf("wait on an empty log returned: %+v", r)
	case <-time.After(notYet):
	}
	cancel()
	select {
	case r := <-ch:
		if !errors.Is(r.err, context.Canceled) {
			t.Fatalf("cancelled wait: %v, want context.Canceled", r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("wait not ended by ctx")
	}

	dctx, dcancel := context.WithTimeout(ctxT(t), notYet)
	defer dcancel()
	if _, err := s.Events(dctx, "t1", "", true); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait past deadline: %v, want DeadlineExceeded", err)
	}
}

// testConcurrentReaders tails one task from several goroutines while a
// writer appends in batches: every reader must see the writer's sequence.
func testConcurrentReaders(t *testing.T, s store.Store) {
	const readers, batches, perBatch = 8, 20, 3
	v := mustCreate(t, s, "alice", newTask("t1", "c1", protocol.StateWorking, base))
	var want []string
	for b := range batches {
		for i := range perBatch {
			want = append(want, fmt.Sprintf("%d.%d", b, i))
		}
	}
	got := make([][]string, readers)
	gotIDs := make([][]string, readers)
	var wg sync.WaitGroup
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			after := ""
			for len(got[r]) < len(want) {
				evs, err := s.Events(ctxT(t), "t1", after, true)
				if err != nil {
					t.Errorf("reader %d: %v", r, err)
					return
				}
				for _, e := range evs {
					got[r] = append(got[r], eventText(e.Event))
					gotIDs[r] = append(gotIDs[r], e.ID)
				}
				after = evs[len(evs)-1].ID
			}
		}()
	}
	for b := range batches {
		evs := make([]protocol.Event, perBatch)
		for i := range evs {
			evs[i] = textEvent("t1", want[b*perBatch+i])
		}
		var err error
		if v, _, err = s.Update(ctxT(t), "t1", v, newTask("t1", "c1", protocol.StateWorking, base), evs...); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	for r := range readers {
		if !reflect.DeepEqual(got[r], want) {
			t.Errorf("reader %d saw %q, want %q", r, got[r], want)
		}
		if !reflect.DeepEqual(gotIDs[r], gotIDs[0]) {
			t.Errorf("reader %d saw ids %q, reader 0 %q", r, gotIDs[r], gotIDs[0])
		}
	}
}

func testCloseWakes(t *testing.T, s store.Store) {
	mustCreate(t, s, "alice", newTask("t1", "c1", protocol.StateWorking, base))
	var chans []<-chan result
	for range 3 {
		chans = append(chans, waitAsync(ctxT(t), s, "t1", ""))
	}
	time.Sleep(notYet)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, ch := range chans {
		select {
		case r := <-ch:
			if !errors.Is(r.err, store.ErrClosed) {
				t.Errorf("waiter after Close: %v, want ErrClosed", r.err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Close did not wake a waiter")
		}
	}
	if _, err := s.Get(ctxT(t), "alice", "t1"); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Get after Close: %v, want ErrClosed", err)
	}
}

// isClosed reports whether ch is closed within d.
func isClosed(ch <-chan struct{}, d time.Duration) bool {
	if d == 0 {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

// testEventsReady checks store.Notifier, for stores that offer it: ready
// at once when events are there, not before, woken by an append and by
// the task's removal; errors as Events gives them.
func testEventsReady(t *testing.T, s store.Store) {
	n, ok := s.(store.Notifier)
	if !ok {
		t.Skip("store does not implement store.Notifier")
	}
	v := mustCreate(t, s, "alice", newTask("t1", "c1", protocol.StateWorking, base), textEvent("t1", "a"))
	first := mustEvents(t, s, "t1", "")[0].ID
	ch, err := n.EventsReady("t1", "")
	if err != nil || !isClosed(ch, 0) {
		t.Fatalf("events after \"\" exist: ready %v, err %v", isClosed(ch, 0), err)
	}
	ch, err = n.EventsReady("t1", first)
	if err != nil || isClosed(ch, notYet) {
		t.Fatalf("no events after the last one: ready %v, err %v", isClosed(ch, 0), err)
	}
	other, err := n.EventsReady("t1", first)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Update(ctxT(t), "t1", v, newTask("t1", "c1", protocol.StateWorking, base), textEvent("t1", "b")); err != nil {
		t.Fatal(err)
	}
	if !isClosed(ch, 5*time.Second) || !isClosed(other, 5*time.Second) {
		t.Fatal("an append did not wake every waiter")
	}
	if got := texts(mustEvents(t, s, "t1", first)); !reflect.DeepEqual(got, []string{"b"}) {
		t.Errorf("events after the wake %q", got)
	}
	if _, err := n.EventsReady("t1", "not-an-id"); !errors.Is(err, store.ErrBadEventID) {
		t.Errorf("malformed id: %v, want ErrBadEventID", err)
	}
	if _, err := n.EventsReady("missing", ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown task: %v, want ErrNotFound", err)
	}
}

// testEventsReadyClose: Close wakes a stream waiting through EventsReady,
// and Events then says the store is closed.
func testEventsReadyClose(t *testing.T, s store.Store) {
	n, ok := s.(store.Notifier)
	if !ok {
		t.Skip("store does not implement store.Notifier")
	}
	mustCreate(t, s, "alice", newTask("t1", "c1", protocol.StateWorking, base), textEvent("t1", "a"))
	ch, err := n.EventsReady("t1", mustEvents(t, s, "t1", "")[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !isClosed(ch, 5*time.Second) {
		t.Fatal("Close did not wake an EventsReady waiter")
	}
	if _, err := s.Events(ctxT(t), "t1", "", false); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Events after Close: %v, want ErrClosed", err)
	}
}

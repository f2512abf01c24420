package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// sends is the Sends suite's store, or a skip for a store without the
// capability (exactly-once sends are then not offered on it).
func sends(t *testing.T, s store.Store) store.Sends {
	return capability[store.Sends](t, s, "claim sends (store.Sends)")
}

// capability is s as the optional capability T, or a skip naming what
// a store without it does not do.
func capability[T any](t *testing.T, s store.Store, does string) T {
	t.Helper()
	c, ok := s.(T)
	if !ok {
		t.Skip("the store does not " + does)
	}
	return c
}

// sentErr is err as a *store.SentError, failing the test otherwise.
func sentErr(t *testing.T, err error) *store.SentError {
	t.Helper()
	var se *store.SentError
	if !errors.As(err, &se) || !errors.Is(err, store.ErrSent) {
		t.Fatalf("got %v, want a *store.SentError", err)
	}
	return se
}

// A send claimed with a new task: its retry gets that task and writes
// nothing, another message under its id is told apart, another owner's
// same id is another send, and a Create that fails claims nothing.
func testSendsCreate(t *testing.T, s store.Store) {
	ss := sends(t, s)
	ctx := ctxT(t)
	send := store.Send{MessageID: "m1", Digest: "d1"}
	if _, err := ss.CreateSend(ctx, "alice", send, newTask("t1", "c1", protocol.StateWorking, base)); err != nil {
		t.Fatal(err)
	}
	se := sentErr(t, func() error {
		_, err := ss.CreateSend(ctx, "alice", send, newTask("t2", "c1", protocol.StateWorking, base))
		return err
	}())
	if !se.Same || se.TaskID != "t1" {
		t.Fatalf("the retry: %+v, want the same send of t1", se)
	}
	if _, err := s.Get(ctx, "alice", "t2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the retry wrote its task: %v", err)
	}
	se = sentErr(t, func() error {
		_, err := ss.CreateSend(ctx, "alice", store.Send{MessageID: "m1", Digest: "other"}, newTask("t3", "c1", protocol.StateWorking, base))
		return err
	}())
	if se.Same {
		t.Fatalf("another message under m1: %+v, want Same false", se)
	}
	if _, err := ss.CreateSend(ctx, "bob", send, newTask("t4", "c1", protocol.StateWorking, base)); err != nil {
		t.Fatalf("bob's m1: %v", err)
	}
	// A Create refused (the id exists) claims nothing.
	if _, err := ss.CreateSend(ctx, "alice", store.Send{MessageID: "m2", Digest: "d2"}, newTask("t1", "c1", protocol.StateWorking, base)); !errors.Is(err, store.ErrExists) {
		t.Fatalf("a Create of an existing id: %v", err)
	}
	if _, err := ss.CreateSend(ctx, "alice", store.Send{MessageID: "m2", Digest: "d2"}, newTask("t5", "c1", protocol.StateWorking, base)); err != nil {
		t.Fatalf("m2 after a refused Create: %v", err)
	}
}

// The turn that continues a task claims its send too; a retry of it gets
// the task whatever its version became, and writes nothing.
func testSendsUpdate(t *testing.T, s store.Store) {
	ss := sends(t, s)
	ctx := ctxT(t)
	v := mustCreate(t, s, "alice", newTask("t1", "c1", protocol.StateInputRequired, base))
	send := store.Send{MessageID: "m2", Digest: "d2"}
	v2, _, err := ss.UpdateSend(ctx, "alice", send, "t1", v, newTask("t1", "c1", protocol.StateWorking, base), statusEvent("t1", protocol.StateWorking, false))
	if err != nil {
		t.Fatal(err)
	}
	se := sentErr(t, func() error {
		_, _, err := ss.UpdateSend(ctx, "alice", send, "t1", v, newTask("t1", "c1", protocol.StateWorking, base), statusEvent("t1", protocol.StateWorking, false))
		return err
	}())
	if !se.Same || se.TaskID != "t1" {
		t.Fatalf("the retry: %+v", se)
	}
	if r := mustGet(t, s, "alice", "t1"); r.Version != v2 {
		t.Fatalf("the retry wrote: version %d, want %d", r.Version, v2)
	}
	// At version 0, which no task has, an UpdateSend only asks: the claim,
	// or a conflict for a send never claimed, which it does not claim.
	se = sentErr(t, func() error {
		_, _, err := ss.UpdateSend(ctx, "alice", send, "t1", 0, newTask("t1", "c1", protocol.StateWorking, base))
		return err
	}())
	if !se.Same || se.TaskID != "t1" {
		t.Fatalf("asking at version 0: %+v", se)
	}
	if _, _, err := ss.UpdateSend(ctx, "alice", store.Send{MessageID: "m5", Digest: "d5"}, "t1", 0, newTask("t1", "c1", protocol.StateWorking, base)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("asking at version 0 for a send never claimed: %v, want ErrConflict", err)
	}
	if _, err := ss.CreateSend(ctx, "alice", store.Send{MessageID: "m5", Digest: "d5"}, newTask("t3", "c1", protocol.StateWorking, base)); err != nil {
		t.Fatalf("m5 after asking at version 0: %v", err)
	}
	// A turn's send is claimed for the owner: a Create under it is the
	// same send.
	se = sentErr(t, func() error {
		_, err := ss.CreateSend(ctx, "alice", send, newTask("t9", "c1", protocol.StateWorking, base))
		return err
	}())
	if !se.Same || se.TaskID != "t1" {
		t.Fatalf("a Create under a continued turn's send: %+v", se)
	}
	// Another owner's task is not found, and claims nothing.
	if _, _, err := ss.UpdateSend(ctx, "bob", store.Send{MessageID: "m3", Digest: "d3"}, "t1", v2, newTask("t1", "c1", protocol.StateWorking, base)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("bob continuing alice's task: %v", err)
	}
	// A conflict claims nothing.
	if _, _, err := ss.UpdateSend(ctx, "alice", store.Send{MessageID: "m4", Digest: "d4"}, "t1", v, newTask("t1", "c1", protocol.StateWorking, base)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a stale version: %v", err)
	}
	if _, err := ss.CreateSend(ctx, "alice", store.Send{MessageID: "m4", Digest: "d4"}, newTask("t2", "c1", protocol.StateWorking, base)); err != nil {
		t.Fatalf("m4 after a conflict: %v", err)
	}
}

// A claim lapses at Until, and goes with its task.
func testSendsLapse(t *testing.T, s store.Store) {
	ss := sends(t, s)
	ctx := ctxT(t)
	if _, err := ss.CreateSend(ctx, "alice", store.Send{MessageID: "m1", Digest: "d1", Until: time.Now().Add(300 * time.Millisecond)}, newTask("t1", "c1", protocol.StateWorking, base)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	if _, err := ss.CreateSend(ctx, "alice", store.Send{MessageID: "m1", Digest: "d1"}, newTask("t2", "c1", protocol.StateWorking, base)); err != nil {
		t.Fatalf("a send after its claim lapsed: %v", err)
	}
}

// Twenty sends of one message at once: one writes its task, every other
// gets that task.
func testSendsRace(t *testing.T, s store.Store) {
	RaceSends(t, sends(t, s))
}

// RaceSends makes one send twenty times at once, spread over stores (the
// replicas of one shared store): one task is written, and every caller is
// told of it.
func RaceSends(t *testing.T, stores ...store.Sends) {
	ctx := ctxT(t)
	const n = 20
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		made  []string
		tasks = map[string]int{}
	)
	for i := range n {
		wg.Go(func() {
			id := taskID(i)
			_, err := stores[i%len(stores)].CreateSend(ctx, "alice", store.Send{MessageID: "m1", Digest: "d1"}, newTask(id, "c1", protocol.StateWorking, base))
			mu.Lock()
			defer mu.Unlock()
			var se *store.SentError
			switch {
			case err == nil:
				made = append(made, id)
				tasks[id]++
			case errors.As(err, &se) && se.Same:
				tasks[se.TaskID]++
			default:
				t.Errorf("send %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if len(made) != 1 || tasks[made[0]] != n {
		t.Fatalf("tasks made %v, answers by task %v: want one task, %d answers for it", made, tasks, n)
	}
}

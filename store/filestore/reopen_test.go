package filestore

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// Closing the last Store of the file closes it; a new Open reads back
// the tasks, logs, push configs, claims and secrets, and the tasks left
// running are then orphans, since no run of the new open wrote them.
func TestReopenKeeps(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{Scope: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(bg, "alice", task("a", protocol.StateCompleted), text("x"), text("y")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(bg, "alice", task("r", protocol.StateWorking)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutPushConfig(bg, "alice", "a", store.PushConfig{ID: "p", Data: []byte("d")}, 5); err != nil {
		t.Fatal(err)
	}
	if won, err := s.ClaimDelivery(bg, "a", "k1"); !won || err != nil {
		t.Fatalf("claim: %v %v", won, err)
	}
	secret, err := s.Secret(bg, "ctx", 32)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := s.Orphans(bg); len(o) != 0 {
		t.Errorf("a task this process runs is an orphan: %+v", o)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = open(t, dir, Options{Scope: "s"})
	if evs, err := s.Events(bg, "a", "1", false); err != nil || !reflect.DeepEqual(texts(evs), []string{"2=y"}) {
		t.Errorf("events after reopen: %q %v", texts(evs), err)
	}
	if cfgs, err := s.PushConfigs(bg, "alice", "a"); err != nil || len(cfgs) != 1 || string(cfgs[0].Data) != "d" {
		t.Errorf("push configs after reopen: %+v %v", cfgs, err)
	}
	if won, err := s.ClaimDelivery(bg, "a", "k1"); won || err != nil {
		t.Errorf("a claim made before the reopen is granted again: %v %v", won, err)
	}
	if again, err := s.Secret(bg, "ctx", 32); err != nil || !reflect.DeepEqual(again, secret) {
		t.Errorf("the secret changed across the reopen")
	}
	if o, err := s.Orphans(bg); err != nil || !reflect.DeepEqual(o, []store.Orphan{{ID: "r", Owner: "alice"}}) {
		t.Errorf("orphans after reopen: %+v %v", o, err)
	}
}

// Two Stores of one directory (a reload that changes ttl opens the new
// before closing the old) share one open file and its waiters: an append
// through one wakes a stream waiting through the other. Another scope in
// the directory sees none of it.
func TestStoresShareTheFile(t *testing.T) {
	dir := t.TempDir()
	old := open(t, dir, Options{Scope: "s", TTL: time.Hour})
	cur := open(t, dir, Options{Scope: "s", TTL: 2 * time.Hour})
	other := open(t, dir, Options{Scope: "t"})
	if old.sh != cur.sh || old.sh != other.sh {
		t.Fatal("two Stores of one directory opened the file twice")
	}
	v, err := old.Create(bg, "alice", task("a", protocol.StateWorking))
	if err != nil {
		t.Fatal(err)
	}
	ready, err := cur.EventsReady("a", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := old.Update(bg, "a", v, task("a", protocol.StateWorking), text("x")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ready:
	case <-time.After(5 * time.Second):
		t.Fatal("an append through one Store did not wake the other's waiter")
	}
	if _, err := other.Get(bg, "alice", "a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another scope reads the task: %v", err)
	}
	if _, err := other.Create(bg, "alice", task("a", protocol.StateWorking)); err != nil {
		t.Errorf("another scope cannot have its own task a: %v", err)
	}
	// The old Store closing leaves the file open for the others.
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := cur.Get(bg, "alice", "a"); err != nil {
		t.Errorf("after the old Store closed: %v", err)
	}
}

// Expired tasks are invisible at once and deleted by the sweep; their
// pages are reused, so a store that keeps expiring what it made stays at
// the size of what it holds at once.
func TestExpiryReusesSpace(t *testing.T) {
	dir := t.TempDir()
	var now atomic.Int64
	now.Store(time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC).UnixNano())
	s := open(t, dir, Options{Scope: "s", TTL: time.Minute, IdleTTL: time.Hour, Now: func() time.Time { return time.Unix(0, now.Load()) }})
	big := string(make([]byte, 2000))
	round := func(r int) {
		for i := range 300 {
			id := "t" + string(rune('a'+r%26)) + "-" + time.Duration(i).String()
			if _, err := s.Create(bg, "alice", task(id, protocol.StateCompleted), text(big), text(big)); err != nil {
				t.Fatal(err)
			}
		}
	}
	round(0)
	if _, err := s.Get(bg, "alice", "ta-0s"); err != nil {
		t.Fatal(err)
	}
	now.Add(int64(time.Minute))
	if _, err := s.Get(bg, "alice", "ta-0s"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an expired task: %v, want ErrNotFound", err)
	}
	if p, _ := s.List(bg, "alice", store.ListQuery{PageSize: 10}); p.TotalSize != 0 {
		t.Errorf("List counts %d expired tasks", p.TotalSize)
	}
	if err := s.Sweep(); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Bytes(); n != 0 {
		t.Errorf("after the sweep the scope is charged %d bytes", n)
	}
	first := fileSize(t, s)
	for r := 1; r <= 20; r++ {
		round(r)
		now.Add(int64(time.Minute))
		if err := s.Sweep(); err != nil {
			t.Fatal(err)
		}
	}
	// 20 rounds of ~1.2 MB each went through; the file holds one.
	if last := fileSize(t, s); last > first*3/2 {
		t.Errorf("the file grew from %d to %d bytes: expired pages are not reused", first, last)
	}
	t.Logf("file after one round: %d bytes, after 21: %d", first, fileSize(t, s))
}

func fileSize(t *testing.T, s *Store) int64 {
	t.Helper()
	var n int64
	if err := s.sh.db.View(func(tx *bolt.Tx) error { n = tx.Size(); return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// A send's claim is on disk with its task: a retry after a restart is
// still the same send, and writes nothing.
func TestSendClaimSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{})
	ctx := context.Background()
	send := store.Send{MessageID: "m1", Digest: "d1"}
	if _, err := s.CreateSend(ctx, "alice", send, &protocol.Task{ID: "t1", Status: protocol.TaskStatus{State: protocol.StateCompleted}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir, Options{})
	_, err := s.CreateSend(ctx, "alice", send, &protocol.Task{ID: "t2", Status: protocol.TaskStatus{State: protocol.StateWorking}})
	var se *store.SentError
	if !errors.As(err, &se) || !se.Same || se.TaskID != "t1" {
		t.Fatalf("the retry after a reopen: %v, want the same send of t1", err)
	}
}

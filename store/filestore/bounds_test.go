package filestore

import (
	"errors"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// Over max_bytes a Create evicts the finished tasks, oldest first, then
// the creator's waiting ones; with only running tasks left it fails with
// ErrFull naming max_bytes.
func TestMaxBytes(t *testing.T) {
	s := open(t, t.TempDir(), Options{Scope: "s", MaxBytes: 4000, MaxTasksPerOwner: -1})
	chunk := text(string(make([]byte, 900)))
	for _, id := range []string{"f1", "f2"} {
		if _, err := s.Create(bg, "alice", task(id, protocol.StateCompleted), chunk); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Create(bg, "bob", task("w", protocol.StateInputRequired), chunk); err != nil {
		t.Fatal(err)
	}
	// Room for the fourth task: f1, the oldest finished task, goes.
	if _, err := s.Create(bg, "alice", task("r1", protocol.StateWorking), chunk); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(bg, "alice", "f1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("f1 survived: %v", err)
	}
	if _, err := s.Get(bg, "alice", "f2"); err != nil {
		t.Errorf("f2 was evicted too: %v", err)
	}
	for _, id := range []string{"r2", "r3"} {
		if _, err := s.Create(bg, "alice", task(id, protocol.StateWorking), chunk); err != nil && id == "r2" {
			t.Fatal(err)
		} else if id == "r3" {
			// f2 went for r2; bob's waiting task is not alice's to evict.
			var le *store.LimitError
			if !errors.As(err, &le) || !errors.Is(err, store.ErrFull) || le.Limit != "max_bytes" || le.Max != 4000 {
				t.Fatalf("r3: %v, want ErrFull (max_bytes 4000)", err)
			}
		}
	}
	if _, err := s.Get(bg, "bob", "w"); err != nil {
		t.Errorf("bob's waiting task was evicted for alice: %v", err)
	}
	if n, _ := s.Bytes(); n > 4000 {
		t.Errorf("charged %d bytes over max_bytes 4000", n)
	}
}

// The owner quota evicts the owner's finished, then waiting, task whose
// status changed longest ago, and refuses with ErrQuota when all run.
func TestQuota(t *testing.T) {
	s := open(t, t.TempDir(), Options{Scope: "s", MaxTasksPerOwner: 2})
	mk := func(id string, st protocol.TaskState) error {
		tk := task(id, st)
		tk.Status.Timestamp = tk.Status.Timestamp.Add(time.Duration(len(id)) * time.Second)
		_, err := s.Create(bg, "alice", tk)
		return err
	}
	for _, c := range []struct {
		id   string
		st   protocol.TaskState
		gone string
		err  error
	}{
		{"w", protocol.StateInputRequired, "", nil},
		{"dd", protocol.StateCompleted, "", nil},
		{"rrr", protocol.StateWorking, "dd", nil}, // finished goes first
		{"rrrr", protocol.StateWorking, "w", nil}, // then waiting
		{"rrrrr", protocol.StateWorking, "", store.ErrQuota},
	} {
		err := mk(c.id, c.st)
		if !errors.Is(err, c.err) {
			t.Fatalf("%s: %v, want %v", c.id, err, c.err)
		}
		if c.gone != "" {
			if _, err := s.Get(bg, "alice", c.gone); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("creating %s left %s: %v", c.id, c.gone, err)
			}
		}
	}
	var le *store.LimitError
	if err := mk("x", protocol.StateWorking); !errors.As(err, &le) || le.Limit != "max_tasks_per_owner" || le.Max != 2 {
		t.Errorf("quota error: %v", err)
	}
	if _, err := s.Create(bg, "bob", task("b", protocol.StateWorking)); err != nil {
		t.Errorf("another owner is held to alice's quota: %v", err)
	}
}

// A log takes MaxEventsPerTask events; past it an Update fails and
// changes nothing, but the one that finishes the task goes in.
func TestMaxEvents(t *testing.T) {
	s := open(t, t.TempDir(), Options{Scope: "s", MaxEventsPerTask: 2})
	if _, err := s.Create(bg, "alice", task("big", protocol.StateWorking), text("1"), text("2"), text("3")); !errors.Is(err, store.ErrTooManyEvents) {
		t.Errorf("Create of 3 events: %v", err)
	}
	v, err := s.Create(bg, "alice", task("a", protocol.StateWorking), text("1"), text("2"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Update(bg, "a", v, task("a", protocol.StateWorking), text("3")); !errors.Is(err, store.ErrTooManyEvents) {
		t.Fatalf("third event: %v", err)
	}
	if r, _ := s.Get(bg, "alice", "a"); r.Version != v || r.LastEventID != "2" {
		t.Errorf("a refused Update changed the task: %+v", r)
	}
	if _, last, err := s.Update(bg, "a", v, task("a", protocol.StateFailed), text("end")); err != nil || last != "3" {
		t.Errorf("the finishing write: %q %v", last, err)
	}
}

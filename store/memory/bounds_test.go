package memory

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// chunk is an agent's text chunk of the artifact id.
func chunk(id, s string, appendTo, last bool) protocol.Event {
	return protocol.Event{Artifact: &protocol.ArtifactUpdate{
		Artifact: protocol.Artifact{ID: id, Parts: []protocol.Part{{Kind: protocol.PartText, Text: s}}},
		Append:   appendTo, LastChunk: last,
	}}
}

func statusEv(st protocol.TaskState) protocol.Event {
	return protocol.Event{Status: &protocol.StatusUpdate{Status: protocol.TaskStatus{State: st}}}
}

func ids(evs []store.StoredEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}

// A turn's chunks are merged when the task takes its next turn, under the
// ids they had: a reader resuming inside an earlier turn gets the whole
// artifact, one resuming after it nothing again, and the bound on events
// counts what is kept, so a long conversation of chatty turns goes on.
// Until then (and in a finished task's last turn) the chunks stay as
// written, so readers that keep up all see the same frames.
func TestCompactsEarlierTurns(t *testing.T) {
	s := newTest(t, Options{MaxEventsPerTask: 100})
	ctx := context.Background()
	v, _ := s.Create(ctx, "o", task("a", protocol.StateSubmitted), protocol.Event{Task: task("a", protocol.StateSubmitted)})
	for turn := range 5 {
		v, _ = update(t, s, "a", v, protocol.StateWorking, statusEv(protocol.StateWorking))
		id := "m" + strconv.Itoa(turn)
		for i := range 40 {
			v, _ = update(t, s, "a", v, protocol.StateWorking, chunk(id, strconv.Itoa(i%10), i > 0, false))
		}
		var last string
		v, last = update(t, s, "a", v, protocol.StateInputRequired, chunk(id, "", true, true), statusEv(protocol.StateInputRequired))
		if want := strconv.Itoa(1 + (turn+1)*43); last != want {
			t.Fatalf("turn %d: last id %s, want %s (ids keep counting)", turn, last, want)
		}
		if evs, _ := s.Events(ctx, "a", strconv.Itoa(1+turn*43), false); len(evs) != 43 {
			t.Fatalf("turn %d compacted before the next turn: %d events of it", turn, len(evs))
		}
	}
	v, _ = update(t, s, "a", v, protocol.StateWorking, statusEv(protocol.StateWorking))
	evs, err := s.Events(ctx, "a", "", false)
	if err != nil {
		t.Fatal(err)
	}
	// 1 task + 5 × (working, merged artifact, input-required) + working.
	if len(evs) != 17 {
		t.Fatalf("%d events kept after 5 chatty turns, want 17: %v", len(evs), ids(evs))
	}
	want := strings.Repeat("0123456789", 4)
	if a := evs[2].Event.Artifact; a == nil || a.Artifact.ID != "m0" || a.Append || !a.LastChunk ||
		len(a.Artifact.Parts) != 1 || a.Artifact.Parts[0].Text != want || evs[2].ID != "43" {
		t.Fatalf("merged first turn: id %s %+v", evs[2].ID, a)
	}
	// Resuming inside the first turn (having seen chunk 10): the whole
	// artifact again, then the rest.
	after, _ := s.Events(ctx, "a", "12", false)
	if len(after) != 15 || after[0].ID != "43" || after[0].Event.Artifact.Artifact.Parts[0].Text != want {
		t.Fatalf("after 12: %v", ids(after))
	}
	// Resuming after the turn's last chunk: nothing of it.
	if after, _ := s.Events(ctx, "a", "43", false); len(after) != 14 || after[0].ID != "44" {
		t.Fatalf("after 43: %v", ids(after))
	}
	r, _ := s.Get(ctx, "o", "a")
	if r.LastEventID != "217" {
		t.Errorf("LastEventID %s, want 217", r.LastEventID)
	}
	// Finishing packs the log as it is; the ids survive it, and the last
	// turn's chunks stay chunks.
	update(t, s, "a", v, protocol.StateCompleted, chunk("m9", "x", false, false), chunk("m9", "y", true, true), statusEv(protocol.StateCompleted))
	packedEvs, _ := s.Events(ctx, "a", "12", false)
	if got := ids(packedEvs); len(got) != 18 || got[0] != "43" || got[len(got)-1] != "220" {
		t.Errorf("finished log after 12: %v", got)
	}
}

// Stored bytes are bounded: finished tasks are evicted to stay under
// MaxBytes, and a task that still does not fit is refused with ErrFull.
func TestMaxBytes(t *testing.T) {
	clk := &fakeClock{now: t0}
	s := newTest(t, Options{MaxBytes: 5 << 20, Now: clk.Now})
	ctx := context.Background()
	mib := strings.Repeat("x", 1<<20)
	finish := func(id string) {
		t.Helper()
		clk.Add(time.Second)
		v, err := s.Create(ctx, "o", task(id, protocol.StateWorking))
		if err != nil {
			t.Fatalf("Create %s: %v", id, err)
		}
		update(t, s, id, v, protocol.StateCompleted, chunk("m", mib, false, true))
	}
	for i := range 10 {
		finish("f" + strconv.Itoa(i))
		if b := s.Bytes(); b > 5<<20 {
			t.Fatalf("after %d tasks of 1 MiB the store holds %d bytes, over its 5 MiB", i+1, b)
		}
	}
	if _, err := s.Get(ctx, "o", "f0"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("oldest finished task kept: %v", err)
	}
	if _, err := s.Get(ctx, "o", "f9"); err != nil {
		t.Errorf("newest finished task evicted: %v", err)
	}
	// Running tasks are never evicted for bytes; a Create that does not fit
	// beside them is refused.
	for i := range 4 {
		v, _ := s.Create(ctx, "o", task("w"+strconv.Itoa(i), protocol.StateWorking))
		update(t, s, "w"+strconv.Itoa(i), v, protocol.StateWorking, chunk("m", mib, false, false))
	}
	if _, err := s.Create(ctx, "o", &protocol.Task{ID: "big", Status: protocol.TaskStatus{State: protocol.StateWorking},
		History: []protocol.Message{{Parts: []protocol.Part{{Kind: protocol.PartText, Text: mib}}}}}); !errors.Is(err, store.ErrFull) {
		t.Errorf("Create over the budget beside running tasks: %v, want ErrFull", err)
	}
	// Removing tasks gives their bytes back.
	s.mu.Lock()
	for _, e := range s.tasks {
		s.removeLocked(e)
	}
	s.mu.Unlock()
	if b := s.Bytes(); b != 0 {
		t.Errorf("empty store holds %d bytes", b)
	}
}

// One owner's quota evicts its own tasks, never another's, and a store
// full of others' waiting tasks refuses rather than evict them.
func TestOwnerQuota(t *testing.T) {
	clk := &fakeClock{now: t0}
	s := newTest(t, Options{MaxTasks: 6, MaxTasksPerOwner: 3, Now: clk.Now})
	ctx := context.Background()
	create := func(owner, id string, st protocol.TaskState) error {
		clk.Add(time.Second)
		tk := task(id, protocol.StateWorking)
		tk.Status.Timestamp = clk.Now()
		v, err := s.Create(ctx, owner, tk)
		if err == nil && st != protocol.StateWorking {
			tk := task(id, st)
			tk.Status.Timestamp = clk.Now()
			_, _, err = s.Update(ctx, id, v, tk)
		}
		return err
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(create("alice", "a1", protocol.StateInputRequired))
	must(create("bob", "b1", protocol.StateCompleted))
	must(create("bob", "b2", protocol.StateInputRequired))
	must(create("bob", "b3", protocol.StateWorking))
	// Bob at his quota: his own finished task goes first, then his own
	// waiting one, then he is refused.
	must(create("bob", "b4", protocol.StateWorking))
	if _, err := s.Get(ctx, "bob", "b1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("bob's finished task kept over his quota: %v", err)
	}
	must(create("bob", "b5", protocol.StateWorking))
	if _, err := s.Get(ctx, "bob", "b2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("bob's waiting task kept over his quota: %v", err)
	}
	if err := create("bob", "b6", protocol.StateWorking); !errors.Is(err, store.ErrQuota) {
		t.Errorf("bob over his quota with only running tasks: %v, want ErrQuota", err)
	}
	// The store: alice's waiting task and carol's fill it with bob's three.
	must(create("carol", "c1", protocol.StateInputRequired))
	must(create("carol", "c2", protocol.StateAuthRequired))
	if err := create("dave", "d1", protocol.StateWorking); !errors.Is(err, store.ErrFull) {
		t.Errorf("Create in a store of running and others' waiting tasks: %v, want ErrFull", err)
	}
	// Carol may push out her own waiting task, not alice's.
	must(create("carol", "c3", protocol.StateWorking))
	if _, err := s.Get(ctx, "carol", "c1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("carol's oldest waiting task kept: %v", err)
	}
	if _, err := s.Get(ctx, "alice", "a1"); err != nil {
		t.Errorf("alice's waiting task evicted by others: %v", err)
	}
	// The anonymous owner is many callers: no quota of its own.
	s2 := newTest(t, Options{MaxTasksPerOwner: 1})
	for i := range 3 {
		if _, err := s2.Create(ctx, "", task("n"+strconv.Itoa(i), protocol.StateWorking)); err != nil {
			t.Fatalf("anonymous Create %d: %v", i, err)
		}
	}
}

// List decodes only what the view keeps of a finished task: ListTasks
// without artifacts over big tasks allocates close to nothing of them.
func TestListView(t *testing.T) {
	s := newTest(t, Options{MaxBytes: -1})
	ctx := context.Background()
	big := strings.Repeat("x", 4<<20)
	for i := range 5 {
		id := "t" + strconv.Itoa(i)
		tk := task(id, protocol.StateWorking)
		tk.History = []protocol.Message{{ID: "m", Parts: []protocol.Part{{Kind: protocol.PartText, Text: "question"}}}}
		v, _ := s.Create(ctx, "o", tk)
		done := *tk
		done.Status.State = protocol.StateCompleted
		done.Artifacts = []protocol.Artifact{{ID: "a", Parts: []protocol.Part{{Kind: protocol.PartText, Text: big}}}}
		if _, _, err := s.Update(ctx, id, v, &done, chunk("a", big, false, true)); err != nil {
			t.Fatal(err)
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	page, err := s.List(ctx, "o", store.ListQuery{PageSize: 100, View: store.View{OmitArtifacts: true, History: -1}})
	runtime.ReadMemStats(&ms)
	if err != nil || len(page.Tasks) != 5 {
		t.Fatalf("List: %v %v", page, err)
	}
	if got := ms.TotalAlloc - before; got > 256<<10 {
		t.Errorf("listing 5 tasks without artifacts allocated %d bytes (they hold 20 MiB of artifacts)", got)
	}
	for _, tk := range page.Tasks {
		if tk.Artifacts != nil || tk.History != nil {
			t.Errorf("view not applied: %d artifacts, %d messages", len(tk.Artifacts), len(tk.History))
		}
	}
	page, _ = s.List(ctx, "o", store.ListQuery{PageSize: 1})
	if tk := page.Tasks[0]; len(tk.Artifacts) != 1 || tk.Artifacts[0].Parts[0].Text != big ||
		!reflect.DeepEqual(tk.History[0].Parts[0].Text, "question") {
		t.Errorf("the whole view lost something: %d artifacts, history %v", len(tk.Artifacts), tk.History)
	}
}

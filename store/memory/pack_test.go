package memory

import (
	"encoding/json"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// richTask sets every field of every type the packed form holds, with
// nil and empty slices side by side, so a field the format forgets or a
// nil that comes back empty fails the round trip.
func richTask() *protocol.Task {
	msg := protocol.Message{
		ID: "m1", ContextID: "c1", TaskID: "t1", Role: protocol.RoleUser,
		Parts: []protocol.Part{
			{Kind: protocol.PartText, Text: "héllo\x00", Metadata: json.RawMessage(`{"a":1}`)},
			{Kind: protocol.PartData, Data: json.RawMessage(`{"k":[1,2]}`), MediaType: "application/json"},
			{Kind: protocol.PartFile, Raw: []byte{0, 1, 2}, Filename: "f.bin", MediaType: "application/octet-stream"},
			{Kind: protocol.PartFile, URL: "https://example.com/f", Raw: []byte{}, Data: json.RawMessage{}},
		},
		Metadata:         json.RawMessage(`{"m":true}`),
		Extensions:       []string{"urn:x", ""},
		ReferenceTaskIDs: []string{},
	}
	return &protocol.Task{
		ID: "t1", ContextID: "c1",
		Status: protocol.TaskStatus{
			State:     protocol.StateCompleted,
			Message:   &protocol.Message{ID: "s1", Role: protocol.RoleAgent, Parts: []protocol.Part{}},
			Timestamp: time.Date(2026, 11, 30, 21, 0, 0, 123456789, time.UTC),
		},
		Artifacts: []protocol.Artifact{
			{ID: "a1", Name: "n", Description: "d", Parts: msg.Parts[:1], Metadata: json.RawMessage(`{}`), Extensions: []string{"e"}},
			{ID: "a2"},
		},
		History:  []protocol.Message{msg, {ID: "m2", Role: protocol.RoleAgent}},
		Metadata: json.RawMessage(`{"t":"v"}`),
		Upstream: "agent-task\x00agent-context",
	}
}

func richEvents() []protocol.Event {
	east := time.FixedZone("east", 3*3600)
	t := richTask()
	return []protocol.Event{
		{Task: t},
		{Message: &t.History[0]},
		{Status: &protocol.StatusUpdate{TaskID: "t1", ContextID: "c1", Status: protocol.TaskStatus{State: protocol.StateWorking}, Metadata: json.RawMessage(`{}`)}},
		{Status: &protocol.StatusUpdate{TaskID: "t1", Status: protocol.TaskStatus{State: protocol.StateInputRequired, Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 6, east), Message: &t.History[1]}, Final: true}},
		{Artifact: &protocol.ArtifactUpdate{TaskID: "t1", ContextID: "c1", Artifact: t.Artifacts[0], Append: true, LastChunk: true, Metadata: json.RawMessage(`{"x":1}`)}},
		{},
	}
}

// logOf is a log of evs at positions 1..n, or at the given positions.
func logOf(evs []protocol.Event, at ...uint32) *eventLog {
	l := &eventLog{evs: evs, last: len(evs), done: len(evs)}
	if at != nil {
		l.pos, l.last = at, int(at[len(at)-1])
	}
	return l
}

func TestPackRoundTrip(t *testing.T) {
	task, evs := richTask(), richEvents()
	for _, at := range [][]uint32{nil, {1, 2, 5, 6, 9, 40}} {
		p := pack(task, logOf(evs, at...), nil)
		if p.events != len(evs) {
			t.Fatalf("events %d, want %d", p.events, len(evs))
		}
		gotTask, gotLog, err := p.unpackAll()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotTask, task) {
			t.Errorf("task:\n got %+v\nwant %+v", gotTask, task)
		}
		for i := range evs {
			if !reflect.DeepEqual(gotLog.evs[i], evs[i]) {
				t.Errorf("event %d:\n got %+v\nwant %+v", i, gotLog.evs[i], evs[i])
			}
			want := i + 1
			if at != nil {
				want = int(at[i])
			}
			if gotLog.at(i) != want {
				t.Errorf("event %d at %d, want %d", i, gotLog.at(i), want)
			}
		}
		if gotLog.last != p.last || (at == nil) != (gotLog.pos == nil) {
			t.Errorf("log last %d pos %v, packed last %d", gotLog.last, gotLog.pos, p.last)
		}
		after := 4
		if at != nil {
			after = 7 // between positions 6 and 9: the events from 9 on
		}
		tail, tailAt, err := p.eventsAfter(after)
		if err != nil || !reflect.DeepEqual(tail, evs[4:]) || len(tailAt) != 2 {
			t.Errorf("eventsAfter(%d) = %+v %v, %v", after, tail, tailAt, err)
		}
		// What a reader gets shares nothing with the packed bytes.
		gotTask.History[0].Parts[1].Data[2] = 'X'
		again, _ := p.task(store.View{})
		if !reflect.DeepEqual(again, task) {
			t.Error("a change to an unpacked task reached the packed form")
		}
	}
}

// TestPackView: a view builds only what it keeps, and what it keeps is
// exactly what the whole task holds.
func TestPackView(t *testing.T) {
	task := richTask()
	p := pack(task, logOf(richEvents()), nil)
	for _, c := range []struct {
		v           store.View
		artifacts   bool
		historyFrom int // index of the first kept message; len: none
	}{
		{store.View{}, true, 0},
		{store.View{OmitArtifacts: true}, false, 0},
		{store.View{History: 1}, true, 1},
		{store.View{History: 5}, true, 0},
		{store.View{OmitArtifacts: true, History: -1}, false, 2},
	} {
		got, err := p.task(c.v)
		if err != nil {
			t.Fatal(err)
		}
		want := *task
		if !c.artifacts {
			want.Artifacts = nil
		}
		want.History = task.History[c.historyFrom:]
		if c.historyFrom == len(task.History) {
			want.History = nil
		}
		if !reflect.DeepEqual(got, &want) {
			t.Errorf("view %+v:\n got %+v\nwant %+v", c.v, got, &want)
		}
	}
}

// A big finished task read without its artifacts allocates next to
// nothing of them: ListTasks answers from such reads.
func TestPackViewSkipsAllocations(t *testing.T) {
	task := richTask()
	task.Artifacts = []protocol.Artifact{{ID: "big", Parts: []protocol.Part{{Kind: protocol.PartText, Text: strings.Repeat("x", 4<<20)}}}}
	p := pack(task, logOf(nil), nil)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	for range 10 {
		if _, err := p.task(store.View{OmitArtifacts: true, History: -1}); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&ms)
	if got := ms.TotalAlloc - before; got > 64<<10 {
		t.Errorf("10 reads without artifacts allocated %d bytes (a 4 MiB artifact)", got)
	}
}

// TestPackCoversEveryField fails when a field is added to a packed type:
// the format (pack.go) must learn it, or the field would silently vanish
// from every finished task.
func TestPackCoversEveryField(t *testing.T) {
	for _, c := range []struct {
		v    any
		want int
	}{
		{protocol.Task{}, 7},
		{protocol.TaskStatus{}, 3},
		{protocol.Message{}, 8},
		{protocol.Part{}, 8},
		{protocol.Artifact{}, 6},
		{protocol.Event{}, 4},
		{protocol.StatusUpdate{}, 5},
		{protocol.ArtifactUpdate{}, 6},
	} {
		if n := reflect.TypeOf(c.v).NumField(); n != c.want {
			t.Errorf("%T has %d fields, pack.go writes %d: teach the packed form the new field", c.v, n, c.want)
		}
	}
}

// Every truncation of a packed task fails cleanly.
func TestPackTruncated(t *testing.T) {
	p := pack(richTask(), logOf(richEvents()[:4], 1, 3, 4, 8), richEvents()[4:])
	for n := range len(p.data) {
		q := &packed{data: p.data[:n], events: p.events, last: p.last, eventsAt: min(p.eventsAt, n)}
		if _, _, err := q.unpackAll(); !errors.Is(err, errCorrupt) {
			t.Fatalf("truncated at %d of %d: %v, want errCorrupt", n, len(p.data), err)
		}
	}
}

func BenchmarkPack(b *testing.B) {
	task, evs := richTask(), richEvents()
	b.ReportAllocs()
	for b.Loop() {
		_ = pack(task, logOf(evs), nil)
	}
}

// FuzzUnpack: no byte string makes unpacking panic or loop; it decodes or
// fails with errCorrupt. Packed data is never input, but a bug in pack
// must not become a crash of the server.
func FuzzUnpack(f *testing.F) {
	p := pack(richTask(), logOf(richEvents()), nil)
	f.Add(p.data, p.eventsAt, p.events)
	f.Add([]byte{}, 0, 0)
	f.Fuzz(func(t *testing.T, data []byte, at, events int) {
		if at < 0 || at > len(data) || events < 0 || events > 64 {
			return
		}
		q := &packed{data: data, eventsAt: at, events: events}
		if _, _, err := q.unpackAll(); err != nil && !errors.Is(err, errCorrupt) {
			t.Fatalf("unexpected error %v", err)
		}
		// The reads that skip what they do not keep walk the same bytes.
		if _, err := q.task(store.View{OmitArtifacts: true, History: 1}); err != nil && !errors.Is(err, errCorrupt) {
			t.Fatalf("unexpected error %v", err)
		}
		if _, _, err := q.eventsAfter(events / 2); err != nil && !errors.Is(err, errCorrupt) {
			t.Fatalf("unexpected error %v", err)
		}
	})
}

// A task's own ids are packed once: a long contextId costs its bytes once
// per task, however many events and messages repeat it, and reads hand
// out the one string again.
func TestPackWritesTaskIDsOnce(t *testing.T) {
	ctx := strings.Repeat("c", 64<<10)
	task := &protocol.Task{ID: "t1", ContextID: ctx, Status: protocol.TaskStatus{State: protocol.StateCompleted},
		History: []protocol.Message{{ID: "m", ContextID: ctx, TaskID: "t1", Role: protocol.RoleUser}}}
	var evs []protocol.Event
	for range 40 {
		evs = append(evs, protocol.Event{Artifact: &protocol.ArtifactUpdate{TaskID: "t1", ContextID: ctx,
			Artifact: protocol.Artifact{ID: "a", Parts: []protocol.Part{{Kind: protocol.PartText, Text: "x"}}}}})
	}
	p := pack(task, logOf(evs), nil)
	if len(p.data) > len(ctx)+4096 {
		t.Fatalf("packed %d bytes for a %d-byte contextId and 40 events", len(p.data), len(ctx))
	}
	got, l, err := p.unpackAll()
	if err != nil || got.ContextID != ctx || l.evs[39].Artifact.ContextID != ctx || got.History[0].ContextID != ctx {
		t.Fatalf("round trip: %v", err)
	}
	if unsafe.StringData(l.evs[0].Artifact.ContextID) != unsafe.StringData(p.contextID) {
		t.Error("an event's contextId is a copy, not the task's string")
	}
}

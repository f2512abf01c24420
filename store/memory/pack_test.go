package memory

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
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

func TestPackRoundTrip(t *testing.T) {
	task, evs := richTask(), richEvents()
	p := pack(task, evs[:2], evs[2:])
	if p.events != len(evs) {
		t.Fatalf("events %d, want %d", p.events, len(evs))
	}
	gotTask, gotEvs, err := p.unpackAll()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotTask, task) {
		t.Errorf("task:\n got %+v\nwant %+v", gotTask, task)
	}
	for i := range evs {
		if !reflect.DeepEqual(gotEvs[i], evs[i]) {
			t.Errorf("event %d:\n got %+v\nwant %+v", i, gotEvs[i], evs[i])
		}
	}
	tail, err := p.eventsFrom(4)
	if err != nil || !reflect.DeepEqual(tail, evs[4:]) {
		t.Errorf("eventsFrom(4) = %+v, %v", tail, err)
	}
	// What a reader gets shares nothing with the packed bytes.
	gotTask.History[0].Parts[1].Data[2] = 'X'
	again, _ := p.task()
	if !reflect.DeepEqual(again, task) {
		t.Error("a change to an unpacked task reached the packed form")
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
		{protocol.Task{}, 6},
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
	p := pack(richTask(), richEvents())
	for n := range len(p.data) {
		q := &packed{data: p.data[:n], events: p.events, eventsAt: min(p.eventsAt, n)}
		if _, _, err := q.unpackAll(); !errors.Is(err, errCorrupt) {
			t.Fatalf("truncated at %d of %d: %v, want errCorrupt", n, len(p.data), err)
		}
	}
}

func BenchmarkPack(b *testing.B) {
	task, evs := richTask(), richEvents()
	b.ReportAllocs()
	for b.Loop() {
		_ = pack(task, evs)
	}
}

// FuzzUnpack: no byte string makes unpacking panic or loop; it decodes or
// fails with errCorrupt. Packed data is never input, but a bug in pack
// must not become a crash of the server.
func FuzzUnpack(f *testing.F) {
	p := pack(richTask(), richEvents())
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
	})
}

package pack

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// The encoding keeps nil and empty apart and every field, so a decoded
// value is reflect.DeepEqual to the one written.
func TestCodecRoundTrip(t *testing.T) {
	full := &protocol.Task{
		ID: "t1", ContextID: "c1", Upstream: "up",
		Status: protocol.TaskStatus{State: protocol.StateInputRequired, Timestamp: time.Date(2026, 3, 1, 12, 0, 0, 5, time.FixedZone("X", 3600)),
			Message: &protocol.Message{ID: "m", TaskID: "t1", Parts: []protocol.Part{}}},
		History:   []protocol.Message{{ID: "h", Role: protocol.RoleUser, Parts: []protocol.Part{{Kind: protocol.PartFile, Raw: []byte{}, Filename: "f"}}, Extensions: []string{}}},
		Artifacts: []protocol.Artifact{{ID: "a", Parts: []protocol.Part{{Kind: protocol.PartData, Data: json.RawMessage(`{}`)}}}},
		Metadata:  json.RawMessage(`{"k":1}`),
	}
	for _, tc := range []struct {
		name string
		task *protocol.Task
	}{
		{"zero", &protocol.Task{ID: "t1"}},
		{"empty slices", &protocol.Task{ID: "t1", History: []protocol.Message{}, Artifacts: []protocol.Artifact{}, Metadata: json.RawMessage{}}},
		{"full", full},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeTask(EncodeTask(nil, tc.task), "t1", store.View{})
			if err != nil || !reflect.DeepEqual(got, tc.task) {
				t.Fatalf("round trip: %v\n got %#v\nwant %#v", err, got, tc.task)
			}
			ev := protocol.Event{Task: tc.task, Status: &protocol.StatusUpdate{TaskID: "t1", ContextID: "c9", Final: true}}
			gotEv, err := DecodeEvent(EncodeEvent(nil, "t1", &ev), "t1")
			if err != nil || !reflect.DeepEqual(gotEv, ev) {
				t.Fatalf("event round trip: %v\n got %#v\nwant %#v", err, gotEv, ev)
			}
		})
	}
	view, err := DecodeTask(EncodeTask(nil, full), "t1", store.View{OmitArtifacts: true, History: -1})
	if err != nil || view.Artifacts != nil || view.History != nil || view.Status.Message == nil {
		t.Errorf("view: %+v %v", view, err)
	}
	for _, bad := range [][]byte{nil, {}, {RecordVersion + 1}, EncodeTask(nil, full)[:10]} {
		if _, err := DecodeTask(bad, "t1", store.View{}); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decode %q: %v, want ErrCorrupt", bad, err)
		}
	}
}

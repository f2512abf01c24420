package filestore

import (
	"context"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := Open(t.TempDir(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// open opens the store of scope in dir, closed with the test.
func open(t testing.TB, dir string, opts Options) *Store {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// task is a task of state st with a context and a status timestamp.
func task(id string, st protocol.TaskState) *protocol.Task {
	return &protocol.Task{ID: id, ContextID: "ctx-" + id,
		Status: protocol.TaskStatus{State: st, Timestamp: time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)}}
}

// text is an artifact chunk carrying s.
func text(s string) protocol.Event {
	return protocol.Event{Artifact: &protocol.ArtifactUpdate{
		Artifact: protocol.Artifact{ID: "a", Parts: []protocol.Part{{Kind: protocol.PartText, Text: s}}}, Append: true}}
}

// texts are the chunk texts of evs, with their ids: "1=a".
func texts(evs []store.StoredEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		s := ""
		if e.Event.Artifact != nil {
			s = e.Event.Artifact.Artifact.Parts[0].Text
		}
		out[i] = e.ID + "=" + s
	}
	return out
}

var bg = context.Background()

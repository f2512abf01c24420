package pgstore

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/internal/pgtest"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// shares numbers the shares of the tests' stores, so that every store a
// test makes on a shared server starts empty.
var shares atomic.Int64

func newShare() string { return fmt.Sprintf("s%d", shares.Add(1)) }

// newStore opens a store on dsn with opts and closes it with the test.
func newStore(t testing.TB, dsn string, opts Options) *Store {
	t.Helper()
	opts.DSN = dsn
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// ctx5 is a context that ends with the test, at the latest after 5s.
func ctx5(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func task(id string, st protocol.TaskState) *protocol.Task {
	return &protocol.Task{ID: id, ContextID: "c1", Status: protocol.TaskStatus{State: st, Timestamp: time.Unix(1700000000, 0).UTC()}}
}

func chunk(text string) protocol.Event {
	return protocol.Event{Artifact: &protocol.ArtifactUpdate{Artifact: protocol.Artifact{ID: "a", Parts: []protocol.Part{{Kind: protocol.PartText, Text: text}}}, Append: true}}
}

func closedWithin(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

// text is the text of a chunk event ("" for another event).
func text(e protocol.Event) string {
	if e.Artifact == nil || len(e.Artifact.Artifact.Parts) == 0 {
		return ""
	}
	return e.Artifact.Artifact.Parts[0].Text
}

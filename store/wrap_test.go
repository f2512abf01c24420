package store_test

import (
	"testing"

	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/memory"
)

// wrapper is a Store over another that adds nothing but Unwrap.
type wrapper struct{ store.Store }

func (w wrapper) Unwrap() store.Store { return w.Store }

// opaque wraps a store without saying so: its capabilities are hidden.
type opaque struct{ store.Store }

func TestAsFindsCapabilitiesThroughWrappers(t *testing.T) {
	mem := memory.New(memory.Options{})
	defer mem.Close()
	twice := wrapper{wrapper{mem}}
	n, ok := store.As[store.Notifier](twice)
	if !ok || n != store.Notifier(mem) {
		t.Fatalf("As[Notifier] through two wrappers = %v, %v; want the memory store", n, ok)
	}
	if _, ok := store.As[store.Tailer](twice); ok {
		t.Fatal("As[Tailer] found a capability the memory store does not have")
	}
	if _, ok := store.As[store.Notifier](opaque{mem}); ok {
		t.Fatal("As looked inside a store that is not a Wrapper")
	}
	if _, ok := store.As[store.Notifier](nil); ok {
		t.Fatal("As of nil found something")
	}
}

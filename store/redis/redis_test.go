package redisstore

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/storetest"
)

// prefixes numbers the key prefixes of the tests' stores, so that every
// store a test makes on a shared server starts empty.
var prefixes atomic.Int64

func newPrefix() string { return fmt.Sprintf("t%d:", prefixes.Add(1)) }

// newStore opens a store on url with opts and closes it with the test.
func newStore(t testing.TB, url string, opts Options) *Store {
	t.Helper()
	opts.URL = url
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	url, _ := startRedis(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		return newStore(t, url, Options{KeyPrefix: newPrefix()})
	})
}

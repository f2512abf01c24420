package filestore

import (
	"testing"

	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/storetest"
)

// BenchmarkStore runs the stores' benchmarks on a file in the test's
// temporary directory: every write is a synced commit, so the numbers
// are the disk's as much as the store's.
func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) store.Store {
		s, err := Open(b.TempDir(), Options{Scope: "bench", MaxTasksPerOwner: -1, MaxBytes: -1})
		if err != nil {
			b.Fatal(err)
		}
		return s
	})
}

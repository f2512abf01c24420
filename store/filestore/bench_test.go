package filestore

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
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

// Writes from many goroutines at once, as a loaded server makes them:
// the group commit shares each commit's fsyncs among them.
func BenchmarkParallelCreate(b *testing.B) {
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var n atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := "t" + strconv.FormatInt(n.Add(1), 10)
			t := &protocol.Task{ID: id, ContextID: "c", Status: protocol.TaskStatus{State: protocol.StateWorking}}
			if _, err := s.Create(context.Background(), "", t); err != nil {
				b.Fatal(err)
			}
		}
	})
}

package memory

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/storetest"
)

func BenchmarkStore(b *testing.B) {
	// The benchmarks fill the store with one owner's tasks and churn them
	// through its count bound: no per-owner quota or byte budget in the way.
	storetest.Bench(b, func(b *testing.B) store.Store { return New(Options{MaxTasksPerOwner: -1, MaxBytes: -1}) })
}

// BenchmarkParallel measures contention: every goroutine updates its own
// task and reads it back, so only the store's shared locks collide.
func BenchmarkParallel(b *testing.B) {
	s := New(Options{MaxEventsPerTask: 1 << 30})
	defer s.Close()
	ctx := context.Background()
	var n atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		id := fmt.Sprintf("p-%d", n.Add(1))
		t := task(id, protocol.StateWorking)
		v, err := s.Create(ctx, "o", t)
		if err != nil {
			b.Fatal(err)
		}
		ev := text("chunk")
		for pb.Next() {
			if v, _, err = s.Update(ctx, id, v, t, ev); err != nil {
				b.Fatal(err)
			}
			if _, err := s.Get(ctx, "o", id); err != nil {
				b.Fatal(err)
			}
		}
	})
}

package pgstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/internal/pgtest"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/storetest"
)

// BenchmarkStore runs storetest's benchmarks against a local postgres
// (fsync off, synchronous_commit on: see pgtest).
func BenchmarkStore(b *testing.B) {
	dsn := pgtest.Start(b).DSN()
	storetest.Bench(b, func(b *testing.B) store.Store {
		s, err := New(Options{DSN: dsn, Share: newShare(), MaxTasksPerOwner: -1})
		if err != nil {
			b.Fatal(err)
		}
		return s
	})
}

// BenchmarkCrossReplicaChunk measures a chunk reaching a stream on
// another replica: replica A's Update of a working task with one event,
// until replica B's stream, waiting on EventsReady, has read it. It
// reports the latency's p50 and p99 (µs) besides the mean ns/op.
func BenchmarkCrossReplicaChunk(b *testing.B) {
	dsn := pgtest.Start(b).DSN()
	share := newShare()
	a := newStore(b, dsn, Options{Share: share})
	r := newStore(b, dsn, Options{Share: share})
	ctx := context.Background()
	tk := &protocol.Task{ID: "x", ContextID: "c", Status: protocol.TaskStatus{State: protocol.StateWorking, Timestamp: time.Unix(1, 0).UTC()}}
	v, err := a.Create(ctx, "alice", tk)
	if err != nil {
		b.Fatal(err)
	}
	ev := chunk("chunk")
	after := ""
	var lat []time.Duration
	n := 0
	for b.Loop() {
		n++
		if n%5000 == 0 {
			// A fresh task within the log's bound.
			tk.ID = fmt.Sprint("x", n)
			if v, err = a.Create(ctx, "alice", tk); err != nil {
				b.Fatal(err)
			}
			after = ""
		}
		ready, err := r.EventsReady(tk.ID, after)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if v, _, err = a.Update(ctx, tk.ID, v, tk, ev); err != nil {
			b.Fatal(err)
		}
		<-ready
		evs, err := r.Events(ctx, tk.ID, after, false)
		if err != nil || len(evs) != 1 {
			b.Fatalf("B read %d events: %v", len(evs), err)
		}
		lat = append(lat, time.Since(start))
		after = evs[0].ID
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// Writes from many goroutines at once, as a loaded server makes them:
// the groups share each round trip and commit among them.
func BenchmarkParallelCreate(b *testing.B) {
	s := newStore(b, pgtest.Start(b).DSN(), Options{Share: newShare()})
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

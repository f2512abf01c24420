package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// Bench runs the store benchmarks. newStore returns a fresh store that
// holds at least 10000 tasks and 1000 events per task; Bench closes it.
func Bench(b *testing.B, newStore func(b *testing.B) store.Store) {
	benches := []struct {
		name string
		fn   func(*testing.B, store.Store)
	}{
		{"CreateGet", benchCreateGet},
		{"UpdateOneEvent", benchUpdate},
		{"ListPage50Of10k", benchList},
		{"FanOut100Waiters", benchFanOut},
	}
	for _, bc := range benches {
		b.Run(bc.name, func(b *testing.B) {
			s := newStore(b)
			defer s.Close()
			bc.fn(b, s)
		})
	}
}

// benchCreateGet creates finished tasks, so a bounded store evicts as it
// goes, as it would in a long-running server.
func benchCreateGet(b *testing.B, s store.Store) {
	ctx := context.Background()
	task := newTask("", "c1", protocol.StateCompleted, base)
	ev := statusEvent("", protocol.StateCompleted, true)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		task.ID = fmt.Sprintf("b-%d", i)
		i++
		if _, err := s.Create(ctx, "alice", task, ev); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Get(ctx, "alice", task.ID); err != nil {
			b.Fatal(err)
		}
	}
}

// benchUpdate updates one working task with one event at a time, starting a
// new task every 1000 updates to stay within the per-task log bound.
func benchUpdate(b *testing.B, s store.Store) {
	ctx := context.Background()
	task := newTask("", "c1", protocol.StateWorking, base)
	ev := textEvent("", "chunk")
	var v uint64
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		if i%1000 == 0 {
			task.ID = fmt.Sprintf("u-%d", i)
			var err error
			if v, err = s.Create(ctx, "alice", task); err != nil {
				b.Fatal(err)
			}
		}
		i++
		var err error
		if v, _, err = s.Update(ctx, task.ID, v, task, ev); err != nil {
			b.Fatal(err)
		}
	}
}

func benchList(b *testing.B, s store.Store) {
	ctx := context.Background()
	for i := range 10000 {
		ctxID := "c1"
		if i%2 == 1 {
			ctxID = "c2"
		}
		if _, err := s.Create(ctx, "alice", newTask(fmt.Sprintf("l-%05d", i), ctxID, protocol.StateWorking, base.Add(time.Duration(i)*time.Millisecond))); err != nil {
			b.Fatal(err)
		}
	}
	q := store.ListQuery{PageSize: 50}
	b.ReportAllocs()
	for b.Loop() {
		page, err := s.List(ctx, "alice", q)
		if err != nil || len(page.Tasks) != 50 || page.TotalSize != 10000 {
			b.Fatalf("List: %v (%d tasks, total %d)", err, len(page.Tasks), page.TotalSize)
		}
	}
}

// benchFanOut measures one append reaching 100 tailing readers: an
// iteration ends when every reader has the event.
func benchFanOut(b *testing.B, s store.Store) {
	const waiters, perTask = 100, 500
	ctx := context.Background()
	ev := textEvent("", "chunk")
	got := make(chan struct{}, waiters)
	var (
		v    uint64
		id   string
		wg   sync.WaitGroup
		n    int
		done = func() {}
	)
	start := func() {
		id = fmt.Sprintf("f-%d", n)
		var err error
		if v, err = s.Create(ctx, "alice", newTask(id, "c1", protocol.StateWorking, base)); err != nil {
			b.Fatal(err)
		}
		wctx, cancel := context.WithCancel(ctx)
		for range waiters {
			wg.Add(1)
			go func(id string) {
				defer wg.Done()
				after := ""
				for {
					evs, err := s.Events(wctx, id, after, true)
					if err != nil {
						return
					}
					after = evs[len(evs)-1].ID
					for range evs {
						got <- struct{}{}
					}
				}
			}(id)
		}
		done = func() { cancel(); wg.Wait() }
	}
	b.ReportAllocs()
	for b.Loop() {
		if n%perTask == 0 {
			b.StopTimer()
			done()
			start()
			b.StartTimer()
		}
		n++
		var err error
		if v, _, err = s.Update(ctx, id, v, newTaskLite(id), ev); err != nil {
			b.Fatal(err)
		}
		for range waiters {
			<-got
		}
	}
	b.StopTimer()
	done()
}

func newTaskLite(id string) *protocol.Task {
	return &protocol.Task{ID: id, ContextID: "c1", Status: protocol.TaskStatus{State: protocol.StateWorking, Timestamp: base}}
}

package group

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// A write that finds no batch under way is sent at once, alone.
func TestLoneWriteAtOnce(t *testing.T) {
	var g Group[int]
	var got [][]int
	for i := range 3 {
		g.Do(i, func(b []int) { got = append(got, slices.Clone(b)) })
	}
	if want := [][]int{{0}, {1}, {2}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("batches %v, want %v", got, want)
	}
}

// The writes arriving while a batch is under way go together in the
// next one, in arrival order, within Max; every Do returns after its
// value was sent.
func TestWritesDuringABatchGoTogether(t *testing.T) {
	g := Group[int]{Max: 3}
	var (
		mu      sync.Mutex
		batches [][]int
	)
	release := make(chan struct{})
	send := func(b []int) {
		mu.Lock()
		batches = append(batches, slices.Clone(b))
		first := len(batches) == 1
		mu.Unlock()
		if first {
			<-release // the first batch is on its way while the others queue
		}
	}
	done := make(chan int, 6)
	go func() { g.Do(0, send); done <- 0 }()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		n := len(batches)
		mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first write was not sent")
		}
	}
	for i := 1; i <= 5; i++ {
		go func() { g.Do(i, send); done <- i }()
		// Queued in this order: each waits for the first batch.
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			g.mu.Lock()
			n := len(g.queue)
			g.mu.Unlock()
			if n == i {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("write %d was not queued", i)
			}
		}
	}
	select {
	case v := <-done:
		t.Fatalf("Do(%d) returned before its batch was sent", v)
	default:
	}
	close(release)
	for range 6 {
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("a Do never returned")
		}
	}
	if want := [][]int{{0}, {1, 2, 3}, {4, 5}}; !slices.EqualFunc(batches, want, slices.Equal) {
		t.Fatalf("batches %v, want %v", batches, want)
	}
}

// Package group runs the writes of many goroutines in batches, for a
// store whose every write costs a round trip or a sync whatever it
// holds: a write that finds no batch under way goes at once, alone (no
// added wait); the writes that arrive while a batch is under way go
// together in the next one. The caller of a batch's first write sends
// it, then hands the next batch to the first write queued since, so no
// goroutine of the group's own runs and no caller sends more than one.
package group

import "sync"

// Group batches values of T. The zero Group sends batches of any size.
type Group[T any] struct {
	// Max bounds a batch (0: no bound).
	Max int

	mu    sync.Mutex
	queue []*waiter[T]
	busy  bool
}

// waiter is a queued value and the channel its caller waits on: true
// when its batch is done, false when it is to send the next batch.
type waiter[T any] struct {
	v    T
	wake chan bool
}

// Do returns once v has been sent in a batch: send is called with the
// batch, in arrival order, by one of its callers (with that caller's
// send: every caller of a Group passes the same one).
func (g *Group[T]) Do(v T, send func(batch []T)) {
	w := &waiter[T]{v: v, wake: make(chan bool, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, w)
	if g.busy {
		g.mu.Unlock()
		if <-w.wake {
			return
		}
	} else {
		g.busy = true
		g.mu.Unlock()
	}
	g.mu.Lock()
	n := len(g.queue)
	if g.Max > 0 {
		n = min(n, g.Max)
	}
	ws := g.queue[:n:n]
	g.queue = g.queue[n:]
	g.mu.Unlock()
	batch := make([]T, n)
	for i, q := range ws {
		batch[i] = q.v
	}
	send(batch)
	g.mu.Lock()
	if len(g.queue) > 0 {
		next := g.queue[0]
		g.mu.Unlock()
		next.wake <- false
	} else {
		g.busy = false
		g.mu.Unlock()
	}
	for _, q := range ws {
		if q != w {
			q.wake <- true
		}
	}
}

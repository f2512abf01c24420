package memory

import (
	"context"

	"github.com/caddy-a2a/caddy-a2a/store"
)

// closedChan is returned to watchers of a task already signalled.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// watcher is one CancelSignal call with a cancellable ctx: its channel
// closes on the signal or when ctx ends, whichever comes first.
type watcher struct {
	ch   chan struct{}
	stop func() bool
}

// SignalCancel implements store.Store. Signalling twice is harmless.
func (s *Store) SignalCancel(ctx context.Context, id string) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	e := s.lookup(id)
	if e == nil {
		return store.ErrNotFound
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gone {
		return store.ErrNotFound
	}
	if e.cancelled {
		return nil
	}
	e.cancelled = true
	if e.cancelCh != nil {
		close(e.cancelCh)
	}
	for w := range e.watchers {
		w.stop()
		close(w.ch)
	}
	e.watchers = nil
	return nil
}

// CancelSignal implements store.Store. A ctx that can end gets its own
// channel, closed by context.AfterFunc: no goroutine runs until ctx ends,
// and the signal unregisters it, so neither path leaks. For an unknown task
// (or a closed store) it returns ctx.Done(): there is nothing to cancel.
func (s *Store) CancelSignal(ctx context.Context, id string) <-chan struct{} {
	if ctx.Err() != nil {
		return ctx.Done()
	}
	e := s.lookup(id)
	if e == nil || s.closed.Load() {
		return ctx.Done()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cancelled {
		return closedChan
	}
	if ctx.Done() == nil {
		if e.cancelCh == nil {
			e.cancelCh = make(chan struct{})
		}
		return e.cancelCh
	}
	w := &watcher{ch: make(chan struct{})}
	if e.watchers == nil {
		e.watchers = make(map[*watcher]struct{})
	}
	e.watchers[w] = struct{}{}
	w.stop = context.AfterFunc(ctx, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if _, ok := e.watchers[w]; ok {
			delete(e.watchers, w)
			close(w.ch)
		}
	})
	return w.ch
}

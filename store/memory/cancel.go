package memory

import (
	"context"

	"github.com/caddy-a2a/caddy-a2a/store"
)

// closedChan is returned to watchers of a task already signalled.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

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
	return nil
}

// CancelSignal implements store.Store. Every caller gets the task's one
// channel, made on first use: a watcher costs nothing to register and
// nothing to leave behind when its ctx ends (the channel goes with the
// task). For an unknown task (or a closed store) it returns ctx.Done():
// there is nothing to cancel.
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
	if e.cancelCh == nil {
		e.cancelCh = make(chan struct{})
	}
	return e.cancelCh
}

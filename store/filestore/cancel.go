package filestore

import (
	"context"
)

// Cancels are in-process: one process holds the file, and the run a
// cancel stops is one of its own. The signal lives in the hub, shared by
// the Stores of the file, until the task is removed.

// SignalCancel implements store.Store. Signalling twice is harmless.
func (s *Store) SignalCancel(ctx context.Context, id string) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if err := s.view(func(x *txn) error { _, err := x.live(id, nil); return err }); err != nil {
		return err
	}
	s.sh.hub.cancel(s.key(id))
	return nil
}

// CancelSignal implements store.Store: every caller gets the task's one
// channel. For an unknown task (or a closed store) it returns
// ctx.Done(): there is nothing to cancel.
func (s *Store) CancelSignal(ctx context.Context, id string) <-chan struct{} {
	if ctx.Err() != nil || s.closed.Load() {
		return ctx.Done()
	}
	if err := s.view(func(x *txn) error { _, err := x.live(id, nil); return err }); err != nil {
		return ctx.Done()
	}
	return s.sh.hub.cancelSignal(s.key(id))
}

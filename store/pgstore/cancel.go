package pgstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/caddy-a2a/caddy-a2a/store"
)

// SignalCancel implements store.Store: one statement marks the task's
// row (for watchers that register later, on any replica) and notifies
// the scope's channel (for those registered now), at its commit.
// Signalling twice is harmless.
func (s *Store) SignalCancel(ctx context.Context, id string) error {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	var n int
	err = s.pool.QueryRow(c, s.sql(`WITH u AS (
	UPDATE {s}.tasks t SET cancelled = true WHERE scope = $1 AND id = $2 AND `+live+` RETURNING id)
SELECT count(pg_notify($3, 'c ' || id)) FROM u`), s.scope, id, s.channel).Scan(&n)
	if err != nil {
		return s.fail(ctx, err)
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// CancelSignal implements store.Store. The watchers of a task in this
// process share one channel, closed by the listener when it hears the
// task's cancel; the watch is taken before the row's flag is read, so a
// cancel is either read or heard. ctx ending drops the watcher's
// interest. For an unknown task or a closed store it returns ctx.Done(),
// as the memory store does for an unknown task; a watch whose read
// failed (the server down) is checked again when the listener is back.
func (s *Store) CancelSignal(ctx context.Context, id string) <-chan struct{} {
	if ctx.Err() != nil || s.closed.Load() {
		return ctx.Done()
	}
	if w, cancelled, ok := s.lis.watchFresh(id); ok {
		if cancelled {
			return closedChan
		}
		context.AfterFunc(ctx, func() { s.lis.releaseCancel(id, w) })
		return w.ch
	}
	w := s.lis.watchCancel(id)
	s.cancelReads.Add(1)
	var cancelled bool
	err := func() error {
		c, cancel, err := s.op(ctx)
		if err != nil {
			return err
		}
		defer cancel()
		return s.pool.QueryRow(c, s.sql(`SELECT cancelled FROM {s}.tasks t WHERE scope = $1 AND id = $2 AND `+live),
			s.scope, id).Scan(&cancelled)
	}()
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		s.lis.releaseCancel(id, w)
		return ctx.Done()
	case err == nil && cancelled:
		s.lis.releaseCancel(id, w)
		return closedChan
	}
	context.AfterFunc(ctx, func() { s.lis.releaseCancel(id, w) })
	return w.ch
}

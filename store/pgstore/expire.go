package pgstore

import (
	"context"
	"time"
)

// sweepEvery is how often expired rows are deleted and every waiter is
// woken (so that a stream whose task expired finds out). An expired row
// is invisible from its deadline on: the sweep only frees its space.
const sweepEvery = 30 * time.Second

// sweep deletes the scope's expired tasks (their events, push configs
// and claims go with them, ON DELETE CASCADE) and handoffs. Every
// replica sweeps; they delete each row once between them.
func (s *Store) sweep() {
	defer s.done.Done()
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-s.closedCh:
			return
		case <-t.C:
		}
		s.lis.wakeAll()
		s.lis.dropStaleFresh(time.Now())
		_ = s.deleteExpired(context.Background())
	}
}

// deleteExpired is one pass of the sweep.
func (s *Store) deleteExpired(ctx context.Context) error {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	if _, err := s.pool.Exec(c, s.sql(`DELETE FROM {s}.tasks WHERE scope = $1 AND expires <= now()`), s.scope); err != nil {
		return s.fail(ctx, err)
	}
	if _, err := s.pool.Exec(c, s.sql(`DELETE FROM {s}.handoffs WHERE scope = $1 AND expires <= now()`), s.scope); err != nil {
		return s.fail(ctx, err)
	}
	if _, err := s.pool.Exec(c, s.sql(`DELETE FROM {s}.replies WHERE scope = $1 AND until <= now()`), s.scope); err != nil {
		return s.fail(ctx, err)
	}
	return nil
}

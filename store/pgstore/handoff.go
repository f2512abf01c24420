package pgstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/caddy-a2a/caddy-a2a/store"
)

// Handoffs are rows of the handoffs table, one per item, in the order
// they were put; a taker deletes the oldest it can lock, skipping those
// another taker holds, so each item is taken once and takers do not
// queue behind each other. An item expires with the idle tasks' ttl:
// what nobody took by then belongs to tasks that are gone.

var _ store.Handoffs = (*Store)(nil)

// PutHandoffs implements store.Handoffs.
func (s *Store) PutHandoffs(ctx context.Context, kind string, items [][]byte) error {
	if len(items) == 0 {
		return nil
	}
	c, cancel, err := s.op(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	if _, err := s.pool.Exec(c, s.sql(`INSERT INTO {s}.handoffs (scope, kind, data, expires)
SELECT $1, $2, d, now() + $4 * interval '1 millisecond' FROM unnest($3::bytea[]) WITH ORDINALITY AS u(d, i) ORDER BY i`),
		s.scope, kind, items, s.handoffTTL()); err != nil {
		return s.fail(ctx, err)
	}
	return nil
}

// handoffTTL is how long an item waits to be taken, in ms.
func (s *Store) handoffTTL() int64 {
	if s.opts.IdleTTL <= 0 {
		return DefaultIdleTTL.Milliseconds()
	}
	return s.opts.IdleTTL.Milliseconds()
}

// TakeHandoff implements store.Handoffs.
func (s *Store) TakeHandoff(ctx context.Context, kind string) ([]byte, error) {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	var v []byte
	err = s.pool.QueryRow(c, s.sql(`DELETE FROM {s}.handoffs WHERE (scope, kind, seq) = (
	SELECT scope, kind, seq FROM {s}.handoffs WHERE scope = $1 AND kind = $2 AND expires > now()
	ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING data`), s.scope, kind).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return v, nil
}

package redisstore

import (
	"context"

	"github.com/caddy-a2a/caddy-a2a/store"
)

// Handoffs live in one list per kind under the prefix's hash tag; a
// stopping process RPUSHes, any other LPOPs, so each item is taken once.
// The list expires with the idle tasks' ttl: what nobody took by then
// belongs to tasks that are gone.

var _ store.Handoffs = (*Store)(nil)

func (s *Store) handoffKey(kind string) string { return tag(s.base) + "handoff:" + kind }

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
	key := s.handoffKey(kind)
	vals := make([]string, len(items))
	for i, it := range items {
		vals[i] = string(it)
	}
	cl := s.cli()
	for _, r := range cl.DoMulti(c,
		cl.B().Rpush().Key(key).Element(vals...).Build(),
		cl.B().Pexpire().Key(key).Milliseconds(s.opts.IdleTTL.Milliseconds()).Build(),
	) {
		if err := r.Error(); err != nil {
			return s.fail(ctx, err)
		}
	}
	return nil
}

// TakeHandoff implements store.Handoffs.
func (s *Store) TakeHandoff(ctx context.Context, kind string) ([]byte, error) {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	cl := s.cli()
	v, err := cl.Do(c, cl.B().Lpop().Key(s.handoffKey(kind)).Build()).AsBytes()
	if isNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return v, nil
}

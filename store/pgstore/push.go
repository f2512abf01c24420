package pgstore

import (
	"context"

	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/internal/pack"
)

// Push configs and delivery claims are rows of their own, keyed by the
// task's (scope, id) with ON DELETE CASCADE: they live as long as the
// task's row, and its expiry (which hides the row) hides them as well.

// MayHavePushConfigs implements store.PushHints.
func (s *Store) MayHavePushConfigs(id string, done bool) bool {
	if done {
		_, ok := s.pushHints.LoadAndDelete(id)
		return ok
	}
	_, ok := s.pushHints.Load(id)
	return ok
}

// PutPushConfig implements store.Store (put_push, write.go).
func (s *Store) PutPushConfig(ctx context.Context, owner, id string, cfg store.PushConfig, max int) error {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	var word string
	if err := s.pool.QueryRow(c, s.sql(`SELECT {s}.put_push($1, $2, $3, $4, $5, $6)`),
		s.scope, id, owner, cfg.ID, cfg.Data, int32(max)).Scan(&word); err != nil {
		return s.fail(ctx, err)
	}
	switch word {
	case "ok":
		return nil
	case "notfound":
		return store.ErrNotFound
	case "toomany":
		return store.ErrTooManyPushConfigs
	}
	return pack.ErrCorrupt
}

// PushConfigs implements store.Store: the task's row and its configs in
// one statement (no row at all: not the owner's task).
func (s *Store) PushConfigs(ctx context.Context, owner, id string) ([]store.PushConfig, error) {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	rows, err := s.pool.Query(c, s.sql(`SELECT p.config_id, p.data FROM {s}.tasks t
LEFT JOIN {s}.push_configs p ON p.scope = t.scope AND p.task_id = t.id
WHERE t.scope = $1 AND t.id = $2 AND t.owner = $3 AND `+live+` ORDER BY p.ord`), s.scope, id, owner)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	defer rows.Close()
	found := false
	out := []store.PushConfig{}
	for rows.Next() {
		found = true
		var cid *string
		var data []byte
		if err := rows.Scan(&cid, &data); err != nil {
			return nil, s.fail(ctx, err)
		}
		if cid != nil {
			out = append(out, store.PushConfig{ID: *cid, Data: data})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail(ctx, err)
	}
	if !found {
		return nil, store.ErrNotFound
	}
	return out, nil
}

// DeletePushConfig implements store.Store.
func (s *Store) DeletePushConfig(ctx context.Context, owner, id, configID string) error {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	var n int
	err = s.pool.QueryRow(c, s.sql(`WITH t AS (
	SELECT id FROM {s}.tasks t WHERE scope = $1 AND id = $2 AND owner = $3 AND `+live+`),
d AS (DELETE FROM {s}.push_configs WHERE scope = $1 AND task_id IN (SELECT id FROM t) AND config_id = $4)
SELECT count(*) FROM t`), s.scope, id, owner, configID).Scan(&n)
	if err != nil {
		return s.fail(ctx, err)
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// ClaimDelivery implements store.Store: the claim is a row, inserted by
// the first claimant on any replica (ON CONFLICT DO NOTHING for the
// others, who wait for the first to commit and find it).
func (s *Store) ClaimDelivery(ctx context.Context, id, key string) (bool, error) {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return false, err
	}
	defer cancel()
	var found, won int
	err = s.pool.QueryRow(c, s.sql(`WITH t AS (
	SELECT id FROM {s}.tasks t WHERE scope = $1 AND id = $2 AND `+live+`),
i AS (INSERT INTO {s}.claims (scope, task_id, key) SELECT $1, id, $3 FROM t ON CONFLICT DO NOTHING RETURNING 1)
SELECT (SELECT count(*) FROM t), (SELECT count(*) FROM i)`), s.scope, id, key).Scan(&found, &won)
	if err != nil {
		return false, s.fail(ctx, err)
	}
	if found == 0 {
		return false, store.ErrNotFound
	}
	return won == 1, nil
}

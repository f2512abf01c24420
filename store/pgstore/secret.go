package pgstore

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/caddy-a2a/caddy-a2a/store"
)

var _ store.Secrets = (*Store)(nil)

// Secret implements store.Secrets: the first process to ask inserts its
// random value (ON CONFLICT DO NOTHING), every process then reads the one
// that is there, and keeps it: asking again (every send asks for the
// context key) costs no round trip. A committed row survives a server
// restart, so unlike Redis nothing needs putting back. It lives in the
// scope, so stores sharing tasks share it and no others do.
func (s *Store) Secret(ctx context.Context, name string, size int) ([]byte, error) {
	if v, ok := s.secrets.Load(name); ok && len(v.([]byte)) == size {
		return v.([]byte), nil
	}
	c, cancel, err := s.op(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	fresh := make([]byte, size)
	_, _ = rand.Read(fresh) // crypto/rand.Read never fails (Go 1.24+)
	if _, err := s.pool.Exec(c, s.sql(`INSERT INTO {s}.secrets (scope, name, value) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`),
		s.scope, name, fresh); err != nil {
		return nil, s.fail(ctx, err)
	}
	// A statement of its own: one that raced this insert and won has
	// committed by now, and a new statement's snapshot sees it.
	var v []byte
	if err := s.pool.QueryRow(c, s.sql(`SELECT value FROM {s}.secrets WHERE scope = $1 AND name = $2`), s.scope, name).Scan(&v); err != nil {
		return nil, s.fail(ctx, err)
	}
	if len(v) != size {
		return nil, fmt.Errorf("pgstore: secret %s is %d bytes, want %d", name, len(v), size)
	}
	s.secrets.Store(name, v)
	return v, nil
}

package redisstore

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/caddy-a2a/caddy-a2a/store"
)

var _ store.Secrets = (*Store)(nil)

// Secret implements store.Secrets: the first process to ask sets it (SET
// NX, no expiry), every other reads it. It lives under the prefix, so
// stores sharing tasks share it and no others do.
func (s *Store) Secret(ctx context.Context, name string, size int) ([]byte, error) {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	key := tag(s.base) + "secret:" + name
	fresh := make([]byte, size)
	_, _ = rand.Read(fresh) // crypto/rand.Read never fails (Go 1.24+)
	cl := s.cli()
	err = cl.Do(c, cl.B().Set().Key(key).Value(string(fresh)).Nx().Build()).Error()
	if err != nil && !isNil(err) {
		return nil, s.fail(ctx, err)
	}
	v, err := cl.Do(c, cl.B().Get().Key(key).Build()).AsBytes()
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	if len(v) != size {
		return nil, fmt.Errorf("redisstore: secret %s is %d bytes, want %d", name, len(v), size)
	}
	return v, nil
}

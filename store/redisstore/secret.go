package redisstore

import (
	"context"
	"crypto/rand"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/caddy-a2a/caddy-a2a/store"
)

var _ store.Secrets = (*Store)(nil)

// secrets are the secrets this store handed out. Each is kept here once
// read, so that asking again (every send asks for the context key) costs
// no round trip; and every write that starts a turn checks the process's
// values against Redis (luaWrite): one Redis lost (a restart without
// persistence, an eviction) is put back, and one another process made
// anew first is taken from Redis (adopt). So every process that writes
// agrees on one value, the one in Redis, by its next turn.
type secrets struct {
	mu    sync.Mutex
	byKey map[string][]byte
	// args is what luaWrite takes of them: their count, then each
	// secret's key and value. nil: none.
	args atomic.Pointer[[]string]
}

// noSecrets is the args of a store that handed none out.
var noSecrets = []string{"0"}

// writeArgs returns the secrets' part of luaWrite's ARGV.
func (ss *secrets) writeArgs() []string {
	if a := ss.args.Load(); a != nil {
		return *a
	}
	return noSecrets
}

// get returns the value kept for key, if any.
func (ss *secrets) get(key string) []byte {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.byKey[key]
}

// adopt keeps v as the value of key, if key is one of the store's.
// Called with a new value only (a write found Redis' differ), so the
// args are rebuilt rarely.
func (ss *secrets) adopt(key string, v []byte, always bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if _, ok := ss.byKey[key]; !ok && !always {
		return
	}
	if ss.byKey == nil {
		ss.byKey = map[string][]byte{}
	}
	ss.byKey[key] = v
	args := []string{strconv.Itoa(len(ss.byKey))}
	for k, v := range ss.byKey {
		args = append(args, k, string(v))
	}
	ss.args.Store(&args)
}

// Secret implements store.Secrets: the first process to ask sets it (SET
// NX, no expiry), every other reads it; a process asks Redis once, then
// keeps it (see secrets). It lives under the scope's prefix, so stores
// sharing tasks share it and no others do.
func (s *Store) Secret(ctx context.Context, name string, size int) ([]byte, error) {
	key := tag(s.base) + "secret:" + name
	if v := s.secrets.get(key); len(v) == size {
		return v, nil
	}
	c, cancel, err := s.op(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
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
	s.secrets.adopt(key, v, true)
	return v, nil
}

package filestore

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"
)

// Secret implements store.Secrets. One process holds the file, so
// nobody needs to agree on the secret; it is kept so that it outlives
// the process: the agent's context ids derived under it stay the same
// across a restart, and a conversation continued after one reaches the
// agent as the same context.
func (s *Store) Secret(ctx context.Context, name string, size int) ([]byte, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	s.secretsMu.Lock()
	defer s.secretsMu.Unlock()
	if b, ok := s.secrets[name]; ok && len(b) == size {
		return b, nil
	}
	var out []byte
	err := s.write(func(x *txn) error {
		if b := x.secrets.Get([]byte(name)); len(b) == size {
			out = slices.Clone(b)
			return nil
		}
		b := make([]byte, size)
		if _, err := rand.Read(b); err != nil {
			return fmt.Errorf("filestore: secret: %w", err)
		}
		out = b
		return x.secrets.Put([]byte(name), b)
	})
	if err != nil {
		return nil, err
	}
	if s.secrets == nil {
		s.secrets = map[string][]byte{}
	}
	s.secrets[name] = out
	return out, nil
}

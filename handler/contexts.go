package handler

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// Contexts belong to their owner. A caller keeps the contextId it sent
// (or was given), and tasks are grouped by (owner, contextId) in the
// store's owner scope; but the agent is told a context id of the
// service's own, derived from the owner and the caller's id under a
// secret key, so that two owners who pick the same contextId (by chance,
// or one copying the other's) never meet in one context at the agent, and
// nothing the agent does with its context can tell one caller about
// another's. The derived id is stable for as long as the key is: the key
// lives with the store, so a context keeps its agent-side id across turns,
// tasks and config reloads.

// ContextKeySize is the size of a context key, in bytes.
const ContextKeySize = 32

// NewContextKey returns a fresh random key for Options.ContextKey.
func NewContextKey() []byte {
	k := make([]byte, ContextKeySize)
	_, _ = rand.Read(k) // crypto/rand.Read never fails (Go 1.24+)
	return k
}

// needKey makes sure the context key is known before a send writes
// anything: a key the store could not give yet fails the send with
// -32603, as a store that cannot be written would. A store's key is
// asked for at every send (the store keeps it: no round trip), since a
// shared store can lose it and agree on another (rekey).
func (s *Service) needKey(ctx context.Context) *protocol.Error {
	if s.opts.ContextKey != nil {
		return nil
	}
	k, err := s.storeKey(ctx)
	if err != nil {
		return internalError(s.log, "get the context key", err)
	}
	s.useKey(k)
	return nil
}

// storeKey is the store's context key now (Options.ContextKeyFunc).
func (s *Service) storeKey(ctx context.Context) ([]byte, error) {
	k, err := s.opts.ContextKeyFunc(ctx)
	if err == nil && len(k) != ContextKeySize {
		err = fmt.Errorf("handler: context key of %d bytes, want %d", len(k), ContextKeySize)
	}
	return k, err
}

// useKey makes k the key new runs derive under, if it is not already.
func (s *Service) useKey(k []byte) {
	if cur := s.key.Load(); cur == nil || !bytes.Equal(*cur, k) {
		s.key.Store(&k)
	}
}

// rekey re-derives the agent context id of ru, whose turn its send has
// just written, if the store's context key is no longer the one the id
// was derived under: the write found another key in the store (the
// store's server lost the key, and another replica made one anew first)
// and the store took it. So one caller context reaches the agent under
// one id, whichever replica takes each turn.
func (s *Service) rekey(ctx context.Context, ru *run) {
	if s.opts.ContextKey != nil {
		return
	}
	k, err := s.storeKey(ctx)
	if err != nil || bytes.Equal(k, ru.ctxKey) {
		return
	}
	s.useKey(k)
	ru.ctxKey = k
	ru.req.ContextID = contextIDUnder(k, ru.owner, ru.task.ContextID)
}

// contextScratch is how much of a derivation's input fits the stack.
const contextScratch = 256

// agentContextID is the context id the agent sees for owner's context
// contextID, in the form of a version 8 (custom) UUID since agents treat
// context ids as UUIDs: the first 128 bits of SHA-256 over the key, the
// owner's length, the owner and contextID. A secret-prefix hash is a
// sound PRF here because the output is truncated: the agent never sees a
// whole SHA-256 state to extend. crypto/hmac would do the same with four
// allocations per send through its hash.Hash interface
// (BenchmarkSendMessageBlocking); sha256.Sum256 over a stack buffer makes
// none but the id's string.
func (s *Service) agentContextID(owner, contextID string) string {
	return contextIDUnder(*s.key.Load(), owner, contextID) // a send has made sure of it (needKey)
}

// contextIDUnder is agentContextID under key.
func contextIDUnder(key []byte, owner, contextID string) string {
	n := len(key) + 8 + len(owner) + len(contextID)
	var scratch [contextScratch]byte
	buf := scratch[:0]
	if n > len(scratch) {
		buf = make([]byte, 0, n)
	}
	buf = append(buf, key...)
	buf = binary.BigEndian.AppendUint64(buf, uint64(len(owner)))
	buf = append(buf, owner...)
	buf = append(buf, contextID...)
	sum := sha256.Sum256(buf)
	var b [16]byte
	copy(b[:], sum[:16])
	return formatUUID(&b, 8)
}

package handler

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"hash"
)

// Contexts belong to their owner. A caller keeps the contextId it sent
// (or was given), and tasks are grouped by (owner, contextId) in the
// store's owner scope; but the agent is told a context id of the
// endpoint's own, derived from the owner and the caller's id under a
// secret key, so that two owners who pick the same contextId (by chance,
// or one copying the other's) never meet in one context at the agent, and
// nothing the agent does with its context can tell one caller about
// another's. The derived id is stable for as long as the key is: the key
// lives with the store, so a context keeps its agent-side id across turns,
// tasks and config reloads.

// contextKeySize is the size of a context key: that of the HMAC's hash.
const contextKeySize = sha256.Size

// newContextKey returns a fresh random context key.
func newContextKey() []byte {
	k := make([]byte, contextKeySize)
	_, _ = rand.Read(k) // crypto/rand.Read never fails (Go 1.24+)
	return k
}

// NewContextKey returns a fresh random key for Options.ContextKey.
func NewContextKey() []byte { return newContextKey() }

// agentContextID is the context id the agent sees for owner's context
// contextID: HMAC-SHA256 under the endpoint's key of both, in the form of
// a version 8 (custom) UUID, since agents treat context ids as UUIDs.
func (e *Endpoint) agentContextID(owner, contextID string) string {
	m := e.macs.Get().(hash.Hash)
	m.Reset()
	// The owner's length first, so that no other (owner, contextID) pair
	// writes the same bytes.
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(owner)))
	m.Write(n[:])
	m.Write([]byte(owner))
	m.Write([]byte(contextID))
	var sum [sha256.Size]byte
	m.Sum(sum[:0])
	e.macs.Put(m)
	var b [16]byte
	copy(b[:], sum[:16])
	return formatUUID(&b, 8)
}

// newMAC returns an HMAC keyed with key, for the endpoint's pool.
func newMAC(key []byte) func() any {
	return func() any { return hmac.New(sha256.New, key) }
}

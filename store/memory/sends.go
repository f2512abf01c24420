package memory

import (
	"math"
	"slices"

	"github.com/caddy-a2a/caddy-a2a/store"
)

// The sends claimed (store.Sends): one map of the store's, by owner and
// messageId, under s.mu (the write lock), each claim naming its task;
// each task lists the messageIds it claimed, so that its removal takes
// its claims along and they count against the task bounds.

// sendKey names a claim: the owner's messageId.
type sendKey struct{ owner, messageID string }

// sentClaim is a claimed send: its task, the message's digest, and when
// it lapses (store clock, unix ns; math.MaxInt64: with its task).
type sentClaim struct {
	taskID, digest string
	until          int64
}

// claimedLocked returns a *store.SentError if owner holds a live claim of
// send's messageId; s.mu must be held for writing (a lapsed claim, or
// one whose task is gone, is dropped).
func (s *Store) claimedLocked(owner string, send *store.Send, now int64) error {
	k := sendKey{owner, send.MessageID}
	c := s.sends[k]
	if c == nil {
		return nil
	}
	if e := s.tasks[c.taskID]; now >= c.until || e == nil || s.expired(e, now) {
		delete(s.sends, k)
		return nil
	}
	return &store.SentError{TaskID: c.taskID, Same: c.digest == send.Digest}
}

// claimLocked claims send for owner, on e's behalf, and drops e's lapsed
// claims (a task taking many turns keeps the live ones only); s.mu must
// be held for writing.
func (s *Store) claimLocked(owner string, send *store.Send, e *entry, now int64) {
	until := int64(math.MaxInt64)
	if !send.Until.IsZero() {
		until = send.Until.UnixNano()
	}
	e.sends = slices.DeleteFunc(e.sends, func(id string) bool {
		c := s.sends[sendKey{e.owner, id}]
		if c == nil || c.taskID != e.id || id == send.MessageID {
			return true
		}
		if now >= c.until {
			delete(s.sends, sendKey{e.owner, id})
			return true
		}
		return false
	})
	s.sends[sendKey{owner, send.MessageID}] = &sentClaim{taskID: e.id, digest: send.Digest, until: until}
	e.sends = append(e.sends, send.MessageID)
}

// dropSendsLocked removes the claims e made; s.mu must be held for
// writing.
func (s *Store) dropSendsLocked(e *entry) {
	for _, id := range e.sends {
		k := sendKey{e.owner, id}
		if c := s.sends[k]; c != nil && c.taskID == e.id {
			delete(s.sends, k)
		}
	}
	e.sends = nil
}

package store

import (
	"context"
	"errors"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// Exactly-once sends: the write that starts a turn (the Create of a new
// task, the Update that continues one) also claims the turn's send, so
// that a retry of it, on any replica, finds it claimed and starts nothing.

// Send names a send: its owner's messageId and a digest of the message
// as decoded (protocol.MessageDigest), which tells a retry from another
// message under a used id.
type Send struct {
	MessageID string
	Digest    string
	// Until is when the claim lapses (the window's end). A claim also
	// goes with its task: evicted, expired or deleted, the task takes
	// its claims along, so they count against the same bounds.
	Until time.Time
}

// Lapse is when a claim of s lapses in a store that keeps finished tasks
// for ttl: s.Until, else ttl from now (DefaultTTL for a store that keeps
// them for good: the claims are bounded still).
func (s *Send) Lapse(ttl time.Duration) time.Time {
	if !s.Until.IsZero() {
		return s.Until
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return time.Now().Add(ttl)
}

// ErrSent is what errors.Is finds in a SentError.
var ErrSent = errors.New("store: message already sent")

// SentError is the answer of a write whose send its owner has claimed
// before, within the claim's window: nothing was written. Same says the
// claim was made with the same digest (a retry, whose task is TaskID);
// otherwise another message was sent under the id.
type SentError struct {
	TaskID string
	Same   bool
}

func (e *SentError) Error() string {
	if e.Same {
		return "store: message already sent (task " + e.TaskID + ")"
	}
	return "store: message id already used for another message"
}

// Unwrap returns ErrSent.
func (e *SentError) Unwrap() error { return ErrSent }

// Sends is an optional capability of a store that claims sends with the
// writes that start turns (every store of this module has it).
type Sends interface {
	// CreateSend is Create that also claims send for owner, atomically:
	// a *SentError, and nothing written, if owner has a live claim of
	// send.MessageID.
	CreateSend(ctx context.Context, owner string, send Send, t *protocol.Task, events ...protocol.Event) (uint64, error)
	// UpdateSend is Update, by owner, that also claims send for owner,
	// atomically, as CreateSend does. The claim is checked before the
	// version, so a retry finds it whatever the task's version has
	// become; at version 0, which no task has, UpdateSend only asks: the
	// *SentError of a live claim, else ErrConflict, nothing written.
	UpdateSend(ctx context.Context, owner string, send Send, id string, version uint64, t *protocol.Task, events ...protocol.Event) (uint64, string, error)
}

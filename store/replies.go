package store

import (
	"context"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// Exactly-once sends whose answer may be a direct message (a message
// reply, or a turn whose agent answers directly) have no task to claim
// the send with when the agent is called: the send is claimed on its
// own first, pending while the agent answers, then settled with the
// answer, so that a retry, on any replica, waits for it and gets it.

// Reply is a claimed send's answer, as a retry reads it: pending (no
// TaskID, no Message) while the first send's agent call goes on.
type Reply struct {
	// Digest is the digest of the message claimed (Send.Digest): a retry
	// with another is another message under the id.
	Digest string
	// TaskID is the task the turn made, when its answer was a task.
	TaskID string
	// Message is the direct answer.
	Message *protocol.Message
}

// Pending reports whether the claim is not settled yet.
func (r *Reply) Pending() bool { return r.TaskID == "" && r.Message == nil }

// Replies is an optional capability of a store that claims the sends
// whose answer may be a direct message (every store of this module has
// it). A claim counts against the store's bounds; over them, the claims
// lapsing soonest go first.
type Replies interface {
	// ClaimReply claims owner's send.MessageID: (nil, nil) when this call
	// made the claim, pending for at most pending (a claimant that dies
	// lets it lapse) until SettleReply or DropReply; otherwise the live
	// claim as it stands, whatever its digest.
	ClaimReply(ctx context.Context, owner string, send Send, pending time.Duration) (*Reply, error)
	// SettleReply settles the claim of owner's send.MessageID with its
	// answer r, kept until send.Until (zero: as long as a finished task).
	SettleReply(ctx context.Context, owner string, send Send, r *Reply) error
	// DropReply removes owner's claim of messageID: the turn ended
	// without an answer to give again, and a retry runs it anew.
	DropReply(ctx context.Context, owner, messageID string) error
}

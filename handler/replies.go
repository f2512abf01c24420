package handler

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// Exactly-once sends whose answer may be a direct message (ReplyMessage,
// and with ReplyAuto a send that starts a turn): no task is written
// before the agent is called, so there is no write for the claim to ride
// on. The send claims its messageId on its own first (store.Replies),
// pending while the agent answers and renewed meanwhile, then settles
// the claim with the answer: the message, or the task the turn made. A
// retry finds the claim: it waits while it is pending, then answers what
// the first send answered. A turn that ends with no answer to give
// (the agent failed, the caller left) drops its claim, and a retry runs
// the turn anew, as does one whose claimant died (its lease lapsed).

// replyLease is how long a pending claim lasts unless renewed: how long
// a retry waits for a claimant that died before it runs the turn itself.
// The claimant renews it every third of it.
const replyLease = 30 * time.Second

// Bounds of a retry's polling of a pending claim.
const (
	replyPollStart = 10 * time.Millisecond
	replyPollMax   = 250 * time.Millisecond
)

// heldReply is a claim a send made and holds while its agent answers:
// renewed until settled or dropped, once.
type heldReply struct {
	s     *Service
	owner string
	send  store.Send
	log   *zap.Logger

	mu    sync.Mutex
	done  bool
	renew *time.Timer
}

// claimReply claims p's send before its agent is called. held: this send
// runs the turn and settles the claim. Otherwise r is the first send's
// answer (a Message, or the TaskID of the task its turn made) after any
// wait while it was pending, or perr says why there is none: another
// message under the id (-32602), the store, or the caller gone. All nil:
// sends are not deduplicated.
func (s *Service) claimReply(ctx context.Context, c Caller, p *protocol.SendParams) (held *heldReply, r *store.Reply, perr *protocol.Error) {
	if s.replies == nil {
		return nil, nil, nil
	}
	send := s.sendOf(&p.Message)
	wait := replyPollStart
	for {
		r, err := s.replies.ClaimReply(ctx, c.Owner, send, replyLease)
		if err != nil {
			return nil, nil, storeError(c.log(s.log), "claim a send", "", err)
		}
		if r == nil {
			h := &heldReply{s: s, owner: c.Owner, send: send, log: c.log(s.log)}
			h.mu.Lock()
			h.renew = time.AfterFunc(replyLease/3, h.renewed)
			h.mu.Unlock()
			return h, nil, nil
		}
		if r.Digest != send.Digest {
			return nil, nil, reusedError()
		}
		if !r.Pending() {
			s.deduplicated(c)
			return nil, r, nil
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, nil, protocol.ErrInternal(newErrorID())
		case <-s.unloaded:
			return nil, nil, protocol.ErrInternal(newErrorID())
		}
		wait = min(2*wait, replyPollMax)
	}
}

// renewed renews the pending claim, and arms the next renewal.
func (h *heldReply) renewed() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return
	}
	send := h.send
	send.Until = time.Now().Add(replyLease)
	ctx, cancel := context.WithTimeout(context.Background(), replyLease/3)
	defer cancel()
	if err := h.s.replies.SettleReply(ctx, h.owner, send, &store.Reply{Digest: send.Digest}); err != nil {
		h.log.Warn("a2a: a pending send's claim could not be renewed", zap.String("message_id", send.MessageID), zap.Error(err))
	}
	h.renew.Reset(replyLease / 3)
}

// settle settles the claim with the turn's answer: a message, or the id
// of the task the turn made.
func (h *heldReply) settle(msg *protocol.Message, taskID string) {
	if h == nil || !h.end() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), replyLease/3)
	defer cancel()
	if err := h.s.replies.SettleReply(ctx, h.owner, h.send, &store.Reply{Digest: h.send.Digest, Message: msg, TaskID: taskID}); err != nil {
		// A retry then waits for the pending claim to lapse, and runs the
		// turn again: the answer is lost with the write.
		h.log.Warn("a2a: a send's answer could not be kept for its retries", zap.String("message_id", h.send.MessageID), zap.Error(err))
	}
}

// drop gives the claim up: the turn ended with no answer to give again.
func (h *heldReply) drop() {
	if h == nil || !h.end() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), replyLease/3)
	defer cancel()
	if err := h.s.replies.DropReply(ctx, h.owner, h.send.MessageID); err != nil {
		h.log.Warn("a2a: a failed send's claim could not be dropped; its retries wait for it to lapse", zap.String("message_id", h.send.MessageID), zap.Error(err))
	}
}

// end stops the renewals; false if the claim was settled or dropped
// already.
func (h *heldReply) end() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return false
	}
	h.done = true
	h.renew.Stop()
	return true
}

// answerRetried answers a send whose first send's turn was answered r,
// read from its claim: the message itself, or the task (retriedTask).
func (s *Service) answerRetried(ctx context.Context, c Caller, p *protocol.SendParams, r *store.Reply) (protocol.Event, *protocol.Error) {
	if r.Message != nil {
		return protocol.Event{Message: r.Message}, nil
	}
	t, perr := s.retriedTask(ctx, c, p, r.TaskID)
	return protocol.Event{Task: t}, perr
}

// streamRetried sets up the stream of a streaming send whose first send's
// turn was answered r: the one Message frame, or the task's stream
// (retriedStream).
func (s *Service) streamRetried(ctx context.Context, c Caller, p *protocol.SendParams, r *store.Reply) (*Stream, *protocol.Error) {
	if r.Message != nil {
		return &Stream{e: s, ctx: ctx, answer: r.Message}, nil
	}
	return s.retriedStream(ctx, c, p, r.TaskID)
}

// streamAnswer serves a stream whose one Message is known already.
func (s *Service) streamAnswer(w EventWriter, msg *protocol.Message) {
	if w.Open() != nil {
		return
	}
	done := make(chan struct{})
	close(done)
	s.serveAnswer(w, done, func() (*protocol.Message, *protocol.Error) { return msg, nil }, func() {})
}

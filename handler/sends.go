package handler

import (
	"context"
	"errors"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// Exactly-once sends. A client whose send timed out cannot tell whether
// the agent ran, so it sends again, often to another replica. Every
// message carries a messageId its sender makes unique, so the write that
// starts a turn (the create of a task, the update that continues one)
// also claims (owner, messageId) in the store, atomically with it: a
// retry finds the claim, on any replica, and is answered from the first
// send's task instead of starting a turn. A digest of the message as
// decoded tells a retry from another message under a used id, which is
// refused. Nothing is read for a first send: the claim rides on the write
// it makes anyway.

// sendClaim is the claim of a send of m with the write that starts its
// turn; false: sends are not deduplicated.
func (s *Service) sendClaim(m *protocol.Message) (store.Send, bool) {
	if s.sends == nil {
		return store.Send{}, false
	}
	return s.sendOf(m), true
}

// sendOf names a send of m for its claim, which lapses at the end of the
// window (none: with its task).
func (s *Service) sendOf(m *protocol.Message) store.Send {
	sd := store.Send{MessageID: m.ID, Digest: protocol.MessageDigest(m)}
	if w := s.opts.DedupeWindow; w > 0 {
		sd.Until = time.Now().Add(w)
	}
	return sd
}

// sentAnswer reads a write refused for its claim: the id of the task of
// the send it retries, or the -32602 of a messageId used for another
// message. ok is false for any other error.
func sentAnswer(err error) (retryOf string, perr *protocol.Error, ok bool) {
	se, ok := errors.AsType[*store.SentError](err)
	if !ok {
		return "", nil, false
	}
	if se.Same {
		return se.TaskID, nil, true
	}
	return "", reusedError(), true
}

// reusedError answers a send of another message under a used messageId.
// Nothing about the other message or its task is told: the caller sent
// both, and learns only that the id is taken.
func reusedError() *protocol.Error {
	return protocol.ErrInvalidParams("The messageId was already used for another message; a retry must resend the same message, and a new message needs a new messageId",
		protocol.FieldViolation{Field: "message.messageId", Description: "already used for another message"})
}

// claimedTurn asks whether the continuation of rec's task whose claim is
// send (claims false: none), which the task's state refuses, is a retry
// of a send that started its turn: the
// store checks a claim before the version, and no task is at version 0,
// so an UpdateSend at version 0 writes nothing and answers the claim, or
// a conflict when there is none. ok is false when there is none.
func (s *Service) claimedTurn(ctx context.Context, c Caller, send store.Send, claims bool, rec *store.Record) (started, *protocol.Error, bool) {
	if !claims {
		return started{}, nil, false
	}
	_, _, err := s.sends.UpdateSend(ctx, c.Owner, send, rec.Task.ID, 0, rec.Task)
	if errors.Is(err, store.ErrConflict) {
		return started{}, nil, false
	}
	if id, perr, ok := sentAnswer(err); ok {
		return started{retryOf: id}, perr, true
	}
	if err == nil {
		// No store answers a write at version 0; the contract is broken.
		err = errors.New("store accepted a write at version 0")
	}
	return started{}, storeError(c.log(s.log), "check the send's claim", rec.Task.ID, err), true
}

// deduplicated counts a send answered from its first send's task.
func (s *Service) deduplicated(c Caller) {
	if c.Info != nil {
		c.Info.Deduplicated = true
	}
}

// retriedTask answers a non-streaming send that retries task id's: the
// task as it is now, or for a blocking send as it is once it settles, as
// the first send's answer was (or will be).
func (s *Service) retriedTask(ctx context.Context, c Caller, p *protocol.SendParams, id string) (*protocol.Task, *protocol.Error) {
	s.deduplicated(c)
	rec, err := s.opts.Store.Get(ctx, c.Owner, id)
	if err != nil {
		return nil, storeError(c.log(s.log), "get task", id, err)
	}
	if p.Blocking && !settles(rec.Task.Status.State) {
		s.awaitSettle(ctx, id, rec.LastEventID)
		if rec, err = s.opts.Store.Get(context.WithoutCancel(ctx), c.Owner, id); err != nil {
			return nil, storeError(c.log(s.log), "get task", id, err)
		}
	}
	return withHistoryLength(rec.Task, p.HistoryLength), nil
}

// awaitSettle follows task id's log after after until a status settles
// it, or the wait ends first: the request or the config ended, or the
// task is gone. The run may be on another replica: the store's log is
// what tells.
func (s *Service) awaitSettle(ctx context.Context, id, after string) {
	st := &Stream{e: s}
	defer st.stopHeartbeat()
	for {
		evs, err := s.waitEvents(ctx, st, quietBeat{}, id, after)
		if err != nil {
			return
		}
		for i := range evs {
			if u := evs[i].Event.Status; u != nil && settles(u.Status.State) {
				return
			}
		}
		if len(evs) > 0 {
			after = evs[len(evs)-1].ID
		}
	}
}

// quietBeat is the heartbeat of a wait that sends nothing while it waits
// (a blocking retry's).
type quietBeat struct{}

func (quietBeat) Heartbeat() error { return nil }

// retriedStream sets up the stream of a streaming send that retries task
// id's: as a subscription with no Last-Event-ID, the task as it is now,
// then its events, until its turn settles as the first send's stream did.
func (s *Service) retriedStream(ctx context.Context, c Caller, p *protocol.SendParams, id string) (*Stream, *protocol.Error) {
	s.deduplicated(c)
	rec, err := s.opts.Store.Get(ctx, c.Owner, id)
	if err != nil {
		return nil, storeError(c.log(s.log), "get task", id, err)
	}
	c.Info.SetTask(rec.Task)
	return s.openStream(ctx, withHistoryLength(rec.Task, p.HistoryLength), rec.LastEventID, rec.LastEventID)
}

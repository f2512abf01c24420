package handler

import (
	"context"
	"errors"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// With ReplyAuto the agent says, turn by turn, whether its answer is a
// task or a direct message (upstream.EventMessage). A direct answer must
// leave nothing in the store, so a send that starts a task does not
// create it: its run does, once the agent's first event shows that the
// turn makes one. The send waits for that decision on the run's ack, the
// wait a Refuser's stream already makes, and the run never writes twice
// what a send wrote once: the create only moves from the send to the run.

// deferredCreate is the part of a send that its run finishes (ReplyAuto):
// the task's creation and what follows it, or the direct answer instead.
// The run fills it; the send reads it after the ack (decision) or after
// settled (the answer), which order the two.
type deferredCreate struct {
	e *Service
	c Caller
	// push is the send's inline push config (nil: none).
	push *protocol.PushConfig
	// submitted is the task as the send answers it before its run.
	submitted *protocol.Task
	// events are written with the task.
	events []protocol.Event
	// stream: a streaming send waits, which needs the task as stored and
	// its log position (snap, snapID), read back after the create.
	stream bool
	// decided is set once the run read its first event (the run's own).
	decided bool
	// claim is the send's claim, settled with the turn's answer, the
	// task or the message (nil: sends are not deduplicated).
	claim *heldReply

	// Set before the ack.
	// direct: the agent answered with a message; no task is stored.
	direct bool
	// err is the send's error: the store refused the task (or, for a
	// stream, reading it back failed).
	err    *protocol.Error
	snap   *protocol.Task
	snapID string
	abort  context.CancelFunc

	// Set before settled: the direct answer, or why there is none.
	answer    *protocol.Message
	answerErr *protocol.Error
}

// deferCreate leaves the creation of s's new task to its run.
func (s *Service) deferCreate(c Caller, p *protocol.SendParams, st *started, streaming bool) {
	st.run.deferred = &deferredCreate{e: s, c: c, push: p.Push, submitted: st.task, events: st.events, stream: streaming}
	st.run.ack = make(chan struct{})
}

// undecided reports, once, that the run has a deferred turn to decide on
// its first event (or on its failure before one).
func (ru *run) undecided() bool {
	d := ru.deferred
	if d == nil || d.decided {
		return false
	}
	d.decided = true
	return true
}

// create stores the deferred task, the turn being a task's: the write the
// send would have made, and what follows it. false: the store refused it
// (the send answers d.err) and the run ends.
func (ru *run) create() bool {
	d := ru.deferred
	ctx := context.Background()
	v, err := ru.st.Create(ctx, ru.owner, ru.task, d.events...)
	if err != nil {
		d.claim.drop()
		d.err = storeError(ru.logger(), "create task", ru.task.ID, err)
		return false
	}
	d.claim.settle(nil, ru.task.ID)
	ru.version = v
	d.e.taskWritten(ctx, d.c, d.push, &started{task: d.submitted, events: d.events, run: ru})
	if d.stream {
		// Before the run writes more, so that the stream starts where the
		// task was created, as a stream of a created task does.
		rec, err := ru.st.Get(ctx, ru.owner, ru.task.ID)
		if err != nil {
			// The task runs on; only this stream cannot start.
			d.err = storeError(ru.logger(), "get task", ru.task.ID, err)
			return true
		}
		d.snap, d.snapID = rec.Task, rec.LastEventID
	}
	return true
}

// answerDirect reads the rest of the agent's stream, its marker read,
// into the Message the send answers; nothing is stored. cancel aborts the
// agent call: the send calls it when its caller leaves, since nobody
// could read the answer later.
func (ru *run) answerDirect(ctx context.Context, cancel context.CancelFunc, stream upstream.Stream) RunOutcome {
	d := ru.deferred
	d.direct, d.abort = true, cancel
	// The send learns what the turn is: a stream opens and waits.
	ru.acked()
	log := ru.logger()
	msg, err := readReply(stream, &ru.in, log, ru.task.ContextID)
	if err != nil {
		d.claim.drop()
		d.answerErr = replyError(ctx, log, err)
		return outcomeOf(ctx, err)
	}
	d.claim.settle(msg, "")
	d.answer = msg
	return RunOK
}

// direct is a direct answer the task exists for already: a send that did
// not wait (ReplyTask), or a marker after the turn's first event. The
// task of a turn that starts one takes the message as its answer, which
// is what the agent said; a turn that continues a task cannot be
// answered with a message (the task asked for input, and a message would
// leave it without an outcome), so the task fails and the log says why.
func (ru *run) direct() (bool, error) {
	if !ru.continues {
		return false, nil
	}
	ru.logger().Warn("a2a: agent answered a turn of a continued task with a direct message, which only a turn that starts a task may be; the task is failed")
	ru.finish(protocol.StateFailed, nil, "")
	return true, nil
}

// awaitDecision waits until a deferred run has decided its turn. An error
// is the send's: the task could not be created, or the caller left.
func (s *Service) awaitDecision(ctx context.Context, c Caller, ru *run) *protocol.Error {
	select {
	case <-ru.ack:
		return ru.deferred.err
	case <-ctx.Done():
		return abandoned(c.log(s.log), ru)
	}
}

// awaitAnswer waits for a direct answer whole. A caller that leaves
// aborts the agent call, as for a message reply.
func (s *Service) awaitAnswer(ctx context.Context, c Caller, ru *run) (*protocol.Message, *protocol.Error) {
	select {
	case <-ru.settled:
		return ru.answer()
	case <-ctx.Done():
		ru.deferred.abort()
		return nil, abandoned(c.log(s.log), ru)
	}
}

// answer is a settled run's direct answer. A run that ended without one
// (it panicked) is the generic failure.
func (ru *run) answer() (*protocol.Message, *protocol.Error) {
	d := ru.deferred
	if d.answer == nil && d.answerErr == nil {
		return nil, internalError(ru.logger(), "direct answer", errNoAnswer, zap.String("task_id", ru.task.ID))
	}
	return d.answer, d.answerErr
}

// errNoAnswer: a direct answer's run ended without one.
var errNoAnswer = errors.New("handler: the run ended without its direct answer")

// abandoned is the answer nobody reads: the caller left before the turn
// was answered. Not a fault worth more than a debug line.
func abandoned(log *zap.Logger, ru *run) *protocol.Error {
	id := newErrorID()
	log.Debug("a2a: send abandoned before the agent answered", zap.String("task_id", ru.task.ID), zap.String("error_id", id))
	return protocol.ErrInternal(id)
}

// sendDeferred finishes a non-streaming send whose run decides its turn:
// the direct answer, or nil, nil when the turn made its task (the send
// goes on as any task's).
func (s *Service) sendDeferred(ctx context.Context, c Caller, ru *run) (*protocol.Message, *protocol.Error) {
	if perr := s.awaitDecision(ctx, c, ru); perr != nil {
		return nil, perr
	}
	if !ru.deferred.direct {
		return nil, nil
	}
	return s.awaitAnswer(ctx, c, ru)
}

// streamDeferred sets up the stream of a streaming send whose run decides
// its turn: the direct answer's stream (heartbeats until the message, as
// a message reply's), or the task's, from where it was created.
func (s *Service) streamDeferred(ctx context.Context, c Caller, p *protocol.SendParams, ru *run) (*Stream, *protocol.Error) {
	if perr := s.awaitDecision(ctx, c, ru); perr != nil {
		return nil, perr
	}
	d := ru.deferred
	if d.direct {
		return &Stream{e: s, ctx: ctx, direct: ru}, nil
	}
	if r := ru.refused; r != nil {
		return nil, refusalError(c.log(s.log), ru.task.ID, r)
	}
	c.Info.SetTask(d.snap)
	return s.openStream(ctx, withHistoryLength(d.snap, p.HistoryLength), d.snapID, d.snapID)
}

// streamDirect serves a direct answer's stream: open at once, heartbeats
// while the agent works, then the Message (or the error) and the end.
func (s *Service) streamDirect(w EventWriter, ru *run) {
	if w.Open() != nil {
		ru.deferred.abort()
		return
	}
	s.serveAnswer(w, ru.settled, ru.answer, ru.deferred.abort)
}

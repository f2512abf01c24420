package handler

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// The operations are written once on neutral types; a binding decodes
// params with the caller's codec and encodes what they return.

// maxCASAttempts bounds the compare-and-set retries of a request. A run
// writing chunks can win the race many times in a row, but not forever.
const maxCASAttempts = 100

// started is a task that a send created or continued, ready to run.
type started struct {
	// task is the snapshot as written by the send.
	task *protocol.Task
	// lastEventID is the id of the newest event written with task; "" for
	// a new task, whose log starts with it.
	lastEventID string
	// events are the events the send wrote (its push notifications).
	events []protocol.Event
	run    *run
	// retryOf is set instead of the rest for a send its owner made
	// before (sends.go): the id of the task it started, which answers it.
	retryOf string
	// retried is set instead for a send whose first send's answer was
	// read from its claim (replies.go).
	retried *store.Reply
}

// prepareSend validates a send and creates or continues its task. The run
// is not started: a streaming caller first reads the snapshot it will send.
func (s *Service) prepareSend(ctx context.Context, c Caller, p *protocol.SendParams, streaming bool) (started, *protocol.Error) {
	if p.Push != nil {
		if !s.pushEnabled() {
			return started{}, protocol.ErrPushNotSupported()
		}
		if perr := s.checkPushURL(ctx, "configuration.pushNotificationConfig.url", p.Push.URL); perr != nil {
			return started{}, perr
		}
	}
	if perr := s.validateMessage(&p.Message); perr != nil {
		return started{}, perr
	}
	if perr := s.needKey(ctx); perr != nil {
		return started{}, perr
	}
	deferred := p.Message.TaskID == "" && s.opts.Reply == ReplyAuto
	var held *heldReply
	if deferred {
		// The turn may be answered directly, leaving no task: the send is
		// claimed on its own, before the slot (a retry may wait here).
		var r *store.Reply
		var perr *protocol.Error
		if held, r, perr = s.claimReply(ctx, c, p); perr != nil || r != nil {
			return started{retried: r}, perr
		}
	}
	if perr := s.reserveRun(c); perr != nil {
		held.drop()
		return started{}, perr
	}
	var st started
	var perr *protocol.Error
	switch {
	case deferred:
		// Created by the run, working, once the agent's first event shows
		// the turn makes a task.
		st = s.newTask(c, p, true)
		s.deferCreate(c, p, &st, streaming)
		st.run.deferred.claim = held
	case p.Message.TaskID == "":
		st, perr = s.createTask(ctx, c, p, !streaming)
	default:
		st, perr = s.continueTask(ctx, c, p)
	}
	if perr != nil || st.retryOf != "" {
		s.opts.Runner.release(c.Owner)
		held.drop()
		return st, perr
	}
	if st.run.deferred == nil {
		s.taskWritten(ctx, c, p.Push, &st)
	}
	// The run gives the slot back when it settles or ends (Runner.runOne),
	// or startRun does if it never starts.
	st.run.reserved = true
	return st, nil
}

// taskWritten follows the write that created or continued s's task: the
// send's inline push config (nil: none) is put, and the write heard.
func (s *Service) taskWritten(ctx context.Context, c Caller, push *protocol.PushConfig, st *started) {
	if push != nil {
		cfg := *push
		cfg.TaskID = st.task.ID
		if _, perr := s.putPushConfig(ctx, c, &cfg, 0); perr != nil {
			// The task is written and runs, without the config (only a
			// continued task can be full, or the store fail here).
			c.log(s.log).Warn("a2a: a send's push notification config was not kept", zap.String("task_id", cfg.TaskID), zap.String("error", perr.Message))
		}
	}
	s.written(c.Owner, st.run.written, st.lastEventID, st.events, push != nil)
}

// reserveRun takes one of the caller's slots for a running task
// (MaxRunsPerOwner), or refuses the send before anything is written.
func (s *Service) reserveRun(c Caller) *protocol.Error {
	if s.opts.Runner.reserve(c.Owner, s.opts.MaxRunsPerOwner) {
		return nil
	}
	n := strconv.Itoa(s.opts.MaxRunsPerOwner)
	return protocol.ErrResourceExhausted("This caller has "+n+" tasks running, the most this server runs at once for one caller (max_runs_per_owner); retry when one ends",
		"max_runs_per_owner", n)
}

// validateMessage checks what the codec cannot know: the role and the
// media types this agent accepts.
func (s *Service) validateMessage(m *protocol.Message) *protocol.Error {
	if m.Role != protocol.RoleUser {
		return protocol.ErrInvalidParams("The message role must be user",
			protocol.FieldViolation{Field: "message.role", Description: "must be user"})
	}
	if len(m.Parts) == 0 {
		return protocol.ErrInvalidParams("The message has no parts",
			protocol.FieldViolation{Field: "message.parts", Description: "must not be empty"})
	}
	for i := range m.Parts {
		mt := partMediaType(&m.Parts[i])
		if mt != "" && !mediaAccepted(s.opts.InputModes, mt) {
			return protocol.ErrContentTypeNotSupported("Media type " + mt + " is not accepted by this agent")
		}
	}
	return nil
}

// partMediaType is the media type a part is checked under: its own, or
// text/plain for text and application/json for data. A file part without
// one is accepted, since a client may not know what it holds.
func partMediaType(p *protocol.Part) string {
	if p.MediaType != "" {
		return p.MediaType
	}
	switch p.Kind {
	case protocol.PartText:
		return "text/plain"
	case protocol.PartData:
		return "application/json"
	}
	return ""
}

// mediaAccepted matches mt (parameters ignored, case-insensitive) against
// modes, which may hold type/* and */* wildcards; no modes accepts all.
func mediaAccepted(modes []string, mt string) bool {
	if len(modes) == 0 {
		return true
	}
	mt = protocol.BaseMediaType(mt)
	for _, m := range modes {
		m = protocol.BaseMediaType(m)
		switch {
		case m == "*/*" || m == mt:
			return true
		case strings.HasSuffix(m, "/*") && strings.HasPrefix(mt, m[:len(m)-1]):
			return true
		}
	}
	return false
}

// createTask creates the task of a send, submitted. With working (a send
// that does not stream) it is stored working already, its log holding the
// working status after the Task, as the run would have written it; the
// answer of a non-blocking send is still the task as submitted. A stream
// starts from the submitted task and relays the run's working status.
func (s *Service) createTask(ctx context.Context, c Caller, p *protocol.SendParams, working bool) (started, *protocol.Error) {
	st := s.newTask(c, p, working)
	var v uint64
	var err error
	if send, ok := s.sendClaim(&p.Message); ok {
		v, err = s.sends.CreateSend(ctx, c.Owner, send, st.run.task, st.events...)
	} else {
		v, err = s.opts.Store.Create(ctx, c.Owner, st.run.task, st.events...)
	}
	if err != nil {
		if id, perr, ok := sentAnswer(err); ok {
			return started{retryOf: id}, perr
		}
		return started{}, storeError(c.log(s.log), "create task", st.task.ID, err)
	}
	st.run.version = v
	s.rekey(ctx, st.run)
	return st, nil
}

// newTask makes a send's new task and its run, not yet stored (see
// createTask).
func (s *Service) newTask(c Caller, p *protocol.SendParams, working bool) started {
	msg := p.Message
	msg.TaskID = newTaskID()
	if msg.ContextID == "" {
		msg.ContextID = newID()
	}
	t := &protocol.Task{
		ID:        msg.TaskID,
		ContextID: msg.ContextID,
		Status:    protocol.TaskStatus{State: protocol.StateSubmitted, Timestamp: time.Now().UTC()},
		History:   []protocol.Message{msg},
	}
	stored, evs := t, []protocol.Event{{Task: t}}
	if working {
		// The run's first write, made here: the run starts at once, and
		// one store write instead of two is what a send costs.
		w := *t
		w.Status = protocol.TaskStatus{State: protocol.StateWorking, Timestamp: time.Now().UTC()}
		stored = &w
		evs = append(evs, protocol.Event{Status: &protocol.StatusUpdate{TaskID: w.ID, ContextID: w.ContextID, Status: w.Status}})
	}
	return started{task: t, events: evs, run: s.newRun(c, stored, 0, &msg, nil, p)}
}

// continueTask adds the message to an interrupted task and sets it
// working again. A running (submitted/working) task refuses messages with
// -32004 like a terminal one: a second concurrent run of one task would
// interleave two answers in one artifact.
func (s *Service) continueTask(ctx context.Context, c Caller, p *protocol.SendParams) (started, *protocol.Error) {
	id := p.Message.TaskID
	// The send's claim, once: the digest does not change between the
	// compare-and-set attempts.
	send, claims := s.sendClaim(&p.Message)
	for range maxCASAttempts {
		rec, err := s.opts.Store.Get(ctx, c.Owner, id)
		if err != nil {
			return started{}, storeError(c.log(s.log), "get task", id, err)
		}
		// The stored task is shared: change a copy, and give the history
		// a new array (clipped) so two sends racing on one task never
		// append into the same one.
		t := *rec.Task
		if p.Message.ContextID != "" && p.Message.ContextID != t.ContextID {
			return started{}, protocol.ErrInvalidParams("The contextId does not match the task's",
				protocol.FieldViolation{Field: "message.contextId", Description: "does not match the task's contextId"})
		}
		var refused *protocol.Error
		switch st := t.Status.State; {
		case st.Terminal():
			refused = protocol.ErrUnsupportedOperation("Task is in a terminal state and cannot accept messages")
		case !st.Interrupted():
			refused = protocol.ErrUnsupportedOperation("Task is still running and cannot accept messages until it asks for input")
		}
		if refused != nil {
			// A retry of the message that started the turn finds the task
			// past it: it is answered as a retry, not refused.
			if st, perr, ok := s.claimedTurn(ctx, c, send, claims, rec); ok {
				return st, perr
			}
			return started{}, refused
		}
		msg := p.Message
		msg.ContextID = t.ContextID
		t.History = append(slices.Clip(t.History), msg)
		s.runLimits.keepHistory(&t.History)
		// What the agent is sent as the earlier turns: what the task keeps,
		// but the new message.
		earlier := slices.Clip(t.History[:len(t.History)-1])
		t.Status = protocol.TaskStatus{State: protocol.StateWorking, Timestamp: time.Now().UTC()}
		ev := protocol.Event{Status: &protocol.StatusUpdate{TaskID: t.ID, ContextID: t.ContextID, Status: t.Status}}
		var v uint64
		var last string
		if claims {
			v, last, err = s.sends.UpdateSend(ctx, c.Owner, send, t.ID, rec.Version, &t, ev)
		} else {
			v, last, err = s.opts.Store.Update(ctx, t.ID, rec.Version, &t, ev)
		}
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if id, perr, ok := sentAnswer(err); ok {
			return started{retryOf: id}, perr
		}
		if err != nil {
			return started{}, storeError(c.log(s.log), "continue task", id, err)
		}
		ru := s.newRun(c, &t, v, &msg, earlier, p)
		s.rekey(ctx, ru)
		ru.continues = true
		return started{task: &t, lastEventID: last, events: []protocol.Event{ev}, run: ru}, nil
	}
	return started{}, internalError(c.log(s.log), "continue task", errors.New("too many version conflicts"), zap.String("task_id", id))
}

func (s *Service) newRun(c Caller, t *protocol.Task, version uint64, msg *protocol.Message, history []protocol.Message, p *protocol.SendParams) *run {
	key := *s.key.Load() // a send has made sure of it (needKey)
	return &run{
		ctxKey:  key,
		st:      s.opts.Store,
		agent:   s.opts.Agent,
		owner:   c.Owner,
		limits:  &s.runLimits,
		task:    t,
		written: t,
		version: version,
		settled: make(chan struct{}),
		notify:  s.notifier(),
		obs:     s.opts.Observer,
		span:    c.Span,
		req: upstream.RunRequest{
			TaskID:     t.ID,
			ContextID:  contextIDUnder(key, c.Owner, t.ContextID),
			Message:    *msg,
			History:    history,
			User:       c.Owner,
			Metadata:   p.Metadata,
			Extensions: c.Extensions,
			Upstream:   t.Upstream,
			Headers:    c.Headers,
		},
	}
}

// startRun hands s's run to the runner. If the runner is closed (the
// server is shutting down) the task is recorded as failed.
func (s *Service) startRun(st *started) *protocol.Error {
	err := s.opts.Runner.start(st.run)
	if err == nil {
		return nil
	}
	ru := st.run
	ru.baseLog = s.log
	ru.slots = s.opts.Runner
	if ru.deferred == nil {
		// A run that would have created its task leaves nothing to fail.
		ru.finish(protocol.StateFailed, nil, "")
	} else {
		ru.deferred.claim.drop()
	}
	ru.releaseSlot()
	return internalError(s.log, "start run", err, zap.String("task_id", ru.task.ID))
}

// SendMessage answers a non-streaming send: with a Task (the result's
// Task set), or in message-reply mode with one agent Message (its Message
// set).
func (s *Service) SendMessage(ctx context.Context, c Caller, p *protocol.SendParams) (protocol.Event, *protocol.Error) {
	var ev protocol.Event
	var perr *protocol.Error
	if s.opts.Reply == ReplyMessage {
		ev, perr = s.sendReply(ctx, c, p)
	} else {
		ev, perr = s.sendTask(ctx, c, p)
	}
	c.Info.SetTask(ev.Task)
	return ev, perr
}

// sendTask runs a non-streaming send: blocking waits until the task settles
// (terminal or interrupted) or the wait ends (client gone, config
// unloaded); either way it answers the task as it then is. With
// ReplyAuto the agent may answer a new turn with a message instead.
func (s *Service) sendTask(ctx context.Context, c Caller, p *protocol.SendParams) (protocol.Event, *protocol.Error) {
	st, perr := s.prepareSend(ctx, c, p, false)
	if perr != nil {
		return protocol.Event{}, perr
	}
	if st.retryOf != "" {
		t, perr := s.retriedTask(ctx, c, p, st.retryOf)
		return protocol.Event{Task: t}, perr
	}
	if st.retried != nil {
		return s.answerRetried(ctx, c, p, st.retried)
	}
	if perr := s.startRun(&st); perr != nil {
		return protocol.Event{}, perr
	}
	if st.run.deferred != nil {
		if msg, perr := s.sendDeferred(ctx, c, st.run); msg != nil || perr != nil {
			return protocol.Event{Message: msg}, perr
		}
	}
	t, perr := s.awaitTask(ctx, c, p, &st)
	return protocol.Event{Task: t}, perr
}

// awaitTask is the task a non-streaming send answers: as created, or for
// a blocking send as its run settled it.
func (s *Service) awaitTask(ctx context.Context, c Caller, p *protocol.SendParams, st *started) (*protocol.Task, *protocol.Error) {
	t := st.task
	if p.Blocking {
		if final := s.waitSettled(ctx, st.run); final != nil {
			if r := st.run.refused; r != nil {
				// The agent refused the turn before any output (set before
				// the run settled): the caller gets its error, as from the
				// agent itself; the task records the turn as failed.
				return nil, refusalError(c.log(s.log), t.ID, r)
			}
			t = final
		} else {
			// The wait ended with the request, the config, or a run that
			// did not settle the task itself (a cancel won): the answer is
			// whatever the task holds now, and the run, if any, goes on.
			rec, err := s.opts.Store.Get(context.WithoutCancel(ctx), c.Owner, t.ID)
			if err != nil {
				return nil, storeError(c.log(s.log), "get task", t.ID, err)
			}
			t = rec.Task
		}
	}
	return withHistoryLength(t, p.HistoryLength), nil
}

// waitSettled waits for ru to end, the request to end or the config to be
// unloaded. It returns the task as the run wrote it when that write
// settled it (terminal or interrupted), nil otherwise. The run hands its
// final snapshot over directly: the store's log is for streams, and
// reading it back here cost a context, a read and a copy per wait.
func (s *Service) waitSettled(ctx context.Context, ru *run) *protocol.Task {
	select {
	case <-ru.settled:
		return ru.final
	case <-ctx.Done():
	case <-s.unloaded:
	}
	return nil
}

// withUnload returns a context that also ends when the config is
// unloaded. context.AfterFunc on the unload context registers a callback
// instead of starting a goroutine, so an idle stream costs no goroutine
// of its own.
func (s *Service) withUnload(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if s.opts.Unload == nil {
		return ctx, cancel
	}
	stop := context.AfterFunc(s.opts.Unload, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

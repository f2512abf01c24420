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
}

// prepareSend validates a send and creates or continues its task. The run
// is not started: a streaming caller first reads the snapshot it will send.
func (e *Service) prepareSend(ctx context.Context, c Caller, p *protocol.SendParams, streaming bool) (started, *protocol.Error) {
	if p.Push != nil {
		if !e.pushEnabled() {
			return started{}, protocol.ErrPushNotSupported()
		}
		if perr := e.checkPushURL(ctx, "configuration.pushNotificationConfig.url", p.Push.URL); perr != nil {
			return started{}, perr
		}
	}
	if perr := e.validateMessage(&p.Message); perr != nil {
		return started{}, perr
	}
	if perr := e.needKey(ctx); perr != nil {
		return started{}, perr
	}
	if perr := e.reserveRun(c); perr != nil {
		return started{}, perr
	}
	var s started
	var perr *protocol.Error
	switch {
	case p.Message.TaskID == "" && e.opts.Reply == ReplyAuto:
		// Created by the run, working, once the agent's first event shows
		// the turn makes a task.
		s = e.newTask(c, p, true)
		e.deferCreate(c, p, &s, streaming)
	case p.Message.TaskID == "":
		s, perr = e.createTask(ctx, c, p, !streaming)
	default:
		s, perr = e.continueTask(ctx, c, p)
	}
	if perr != nil {
		e.opts.Runner.release(c.Owner)
		return started{}, perr
	}
	if s.run.deferred == nil {
		e.taskWritten(ctx, c, p.Push, &s)
	}
	// The run gives the slot back when it settles or ends (Runner.runOne),
	// or startRun does if it never starts.
	s.run.reserved = true
	return s, nil
}

// taskWritten follows the write that created or continued s's task: the
// send's inline push config (nil: none) is put, and the write heard.
func (e *Service) taskWritten(ctx context.Context, c Caller, push *protocol.PushConfig, s *started) {
	if push != nil {
		cfg := *push
		cfg.TaskID = s.task.ID
		if _, perr := e.putPushConfig(ctx, c, &cfg, 0); perr != nil {
			// The task is written and runs, without the config (only a
			// continued task can be full, or the store fail here).
			c.log(e.log).Warn("a2a: a send's push notification config was not kept", zap.String("task_id", cfg.TaskID), zap.String("error", perr.Message))
		}
	}
	e.written(c.Owner, s.run.written, s.lastEventID, s.events, push != nil)
}

// reserveRun takes one of the caller's slots for a running task
// (MaxRunsPerOwner), or refuses the send before anything is written.
func (e *Service) reserveRun(c Caller) *protocol.Error {
	if e.opts.Runner.reserve(c.Owner, e.opts.MaxRunsPerOwner) {
		return nil
	}
	n := strconv.Itoa(e.opts.MaxRunsPerOwner)
	return protocol.ErrResourceExhausted("This caller has "+n+" tasks running, the most this server runs at once for one caller (max_runs_per_owner); retry when one ends",
		"max_runs_per_owner", n)
}

// validateMessage checks what the codec cannot know: the role and the
// media types this agent accepts.
func (e *Service) validateMessage(m *protocol.Message) *protocol.Error {
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
		if mt != "" && !mediaAccepted(e.opts.InputModes, mt) {
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
func (e *Service) createTask(ctx context.Context, c Caller, p *protocol.SendParams, working bool) (started, *protocol.Error) {
	s := e.newTask(c, p, working)
	v, err := e.opts.Store.Create(ctx, c.Owner, s.run.task, s.events...)
	if err != nil {
		return started{}, storeError(c.log(e.log), "create task", s.task.ID, err)
	}
	s.run.version = v
	e.rekey(ctx, s.run)
	return s, nil
}

// newTask makes a send's new task and its run, not yet stored (see
// createTask).
func (e *Service) newTask(c Caller, p *protocol.SendParams, working bool) started {
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
	return started{task: t, events: evs, run: e.newRun(c, stored, 0, &msg, nil, p)}
}

// continueTask adds the message to an interrupted task and sets it
// working again. A running (submitted/working) task refuses messages with
// -32004 like a terminal one: a second concurrent run of one task would
// interleave two answers in one artifact.
func (e *Service) continueTask(ctx context.Context, c Caller, p *protocol.SendParams) (started, *protocol.Error) {
	id := p.Message.TaskID
	for range maxCASAttempts {
		rec, err := e.opts.Store.Get(ctx, c.Owner, id)
		if err != nil {
			return started{}, storeError(c.log(e.log), "get task", id, err)
		}
		// The stored task is shared: change a copy, and give the history
		// a new array (clipped) so two sends racing on one task never
		// append into the same one.
		t := *rec.Task
		if p.Message.ContextID != "" && p.Message.ContextID != t.ContextID {
			return started{}, protocol.ErrInvalidParams("The contextId does not match the task's",
				protocol.FieldViolation{Field: "message.contextId", Description: "does not match the task's contextId"})
		}
		switch st := t.Status.State; {
		case st.Terminal():
			return started{}, protocol.ErrUnsupportedOperation("Task is in a terminal state and cannot accept messages")
		case !st.Interrupted():
			return started{}, protocol.ErrUnsupportedOperation("Task is still running and cannot accept messages until it asks for input")
		}
		msg := p.Message
		msg.ContextID = t.ContextID
		t.History = append(slices.Clip(t.History), msg)
		e.runLimits.keepHistory(&t.History)
		// What the agent is sent as the earlier turns: what the task keeps,
		// but the new message.
		earlier := slices.Clip(t.History[:len(t.History)-1])
		t.Status = protocol.TaskStatus{State: protocol.StateWorking, Timestamp: time.Now().UTC()}
		ev := protocol.Event{Status: &protocol.StatusUpdate{TaskID: t.ID, ContextID: t.ContextID, Status: t.Status}}
		v, last, err := e.opts.Store.Update(ctx, t.ID, rec.Version, &t, ev)
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			return started{}, storeError(c.log(e.log), "continue task", id, err)
		}
		ru := e.newRun(c, &t, v, &msg, earlier, p)
		e.rekey(ctx, ru)
		ru.continues = true
		return started{task: &t, lastEventID: last, events: []protocol.Event{ev}, run: ru}, nil
	}
	return started{}, internalError(c.log(e.log), "continue task", errors.New("too many version conflicts"), zap.String("task_id", id))
}

func (e *Service) newRun(c Caller, t *protocol.Task, version uint64, msg *protocol.Message, history []protocol.Message, p *protocol.SendParams) *run {
	key := *e.key.Load() // a send has made sure of it (needKey)
	return &run{
		ctxKey:  key,
		st:      e.opts.Store,
		agent:   e.opts.Agent,
		owner:   c.Owner,
		limits:  &e.runLimits,
		task:    t,
		written: t,
		version: version,
		settled: make(chan struct{}),
		notify:  e.notifier(),
		obs:     e.opts.Observer,
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
func (e *Service) startRun(s *started) *protocol.Error {
	err := e.opts.Runner.start(s.run)
	if err == nil {
		return nil
	}
	ru := s.run
	ru.baseLog = e.log
	ru.slots = e.opts.Runner
	if ru.deferred == nil {
		// A run that would have created its task leaves nothing to fail.
		ru.finish(protocol.StateFailed, nil, "")
	}
	ru.releaseSlot()
	return internalError(e.log, "start run", err, zap.String("task_id", ru.task.ID))
}

// SendMessage answers a non-streaming send: with a Task (the result's
// Task set), or in message-reply mode with one agent Message (its Message
// set).
func (e *Service) SendMessage(ctx context.Context, c Caller, p *protocol.SendParams) (protocol.Event, *protocol.Error) {
	var ev protocol.Event
	var perr *protocol.Error
	if e.opts.Reply == ReplyMessage {
		ev.Message, perr = e.sendReply(ctx, c, p)
	} else {
		ev, perr = e.sendTask(ctx, c, p)
		c.Info.SetTask(ev.Task)
	}
	return ev, perr
}

// sendTask runs a non-streaming send: blocking waits until the task settles
// (terminal or interrupted) or the wait ends (client gone, config
// unloaded); either way it answers the task as it then is. With
// ReplyAuto the agent may answer a new turn with a message instead.
func (e *Service) sendTask(ctx context.Context, c Caller, p *protocol.SendParams) (protocol.Event, *protocol.Error) {
	s, perr := e.prepareSend(ctx, c, p, false)
	if perr != nil {
		return protocol.Event{}, perr
	}
	if perr := e.startRun(&s); perr != nil {
		return protocol.Event{}, perr
	}
	if s.run.deferred != nil {
		if msg, perr := e.sendDeferred(ctx, c, s.run); msg != nil || perr != nil {
			return protocol.Event{Message: msg}, perr
		}
	}
	t, perr := e.awaitTask(ctx, c, p, &s)
	return protocol.Event{Task: t}, perr
}

// awaitTask is the task a non-streaming send answers: as created, or for
// a blocking send as its run settled it.
func (e *Service) awaitTask(ctx context.Context, c Caller, p *protocol.SendParams, s *started) (*protocol.Task, *protocol.Error) {
	t := s.task
	if p.Blocking {
		if final := e.waitSettled(ctx, s.run); final != nil {
			if r := s.run.refused; r != nil {
				// The agent refused the turn before any output (set before
				// the run settled): the caller gets its error, as from the
				// agent itself; the task records the turn as failed.
				return nil, refusalError(c.log(e.log), t.ID, r)
			}
			t = final
		} else {
			// The wait ended with the request, the config, or a run that
			// did not settle the task itself (a cancel won): the answer is
			// whatever the task holds now, and the run, if any, goes on.
			rec, err := e.opts.Store.Get(context.WithoutCancel(ctx), c.Owner, t.ID)
			if err != nil {
				return nil, storeError(c.log(e.log), "get task", t.ID, err)
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
func (e *Service) waitSettled(ctx context.Context, ru *run) *protocol.Task {
	select {
	case <-ru.settled:
		return ru.final
	case <-ctx.Done():
	case <-e.unloaded:
	}
	return nil
}

// withUnload returns a context that also ends when the config is
// unloaded. context.AfterFunc on the unload context registers a callback
// instead of starting a goroutine, so an idle stream costs no goroutine
// of its own.
func (e *Service) withUnload(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if e.opts.Unload == nil {
		return ctx, cancel
	}
	stop := context.AfterFunc(e.opts.Unload, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

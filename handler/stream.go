package handler

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// EventWriter is where a Stream's frames go: the binding's framing (an
// SSE writer for JSON-RPC and HTTP+JSON, a server stream for gRPC). Every
// method but Fail reports the client gone, or the stream cut, by an error,
// and the stream then ends.
type EventWriter interface {
	// Open sends the answer's head before any event: a message reply
	// waits on the agent with its stream open.
	Open() error
	// Queue writes ev, whose resume id is id ("" for none), without
	// flushing: a burst of events at hand goes out with one Flush.
	Queue(id string, ev *protocol.Event) error
	// Flush sends what Queue wrote.
	Flush() error
	// Idle is called before the stream waits: the writer gives back what
	// it holds between frames (buffers, a write deadline).
	Idle()
	// Heartbeat keeps the connection alive during a long wait.
	Heartbeat() error
	// Fail ends the stream with an error frame.
	Fail(perr *protocol.Error)
	// CutOnUnload makes the end of unload (the config's) cut a write in
	// progress at once. A task's stream ends on an unload; a message
	// reply does not (it finishes on the old server, as a proxied request
	// would), so only the former calls it.
	CutOnUnload(unload context.Context)
}

// Stream is a streaming call that has been set up and not yet served:
// SendStreamingMessage and SubscribeToTask check everything that can be
// refused first, so a binding can still answer an error its own way.
type Stream struct {
	e   *Service
	ctx context.Context
	// The task stream: the snapshot, its log position, where the log is
	// read from, and the events already read there.
	task          *protocol.Task
	snapID, after string
	first         []store.StoredEvent
	// subscribed marks a SubscribeToTask stream: it ends at a terminal
	// state only, where a send's stream ends with its own turn.
	subscribed bool
	// reply is set instead for a message reply's stream, direct for a
	// direct answer's (ReplyAuto).
	reply  *replyRun
	direct *run
	// answer is set instead for a retry whose first send's answer was
	// this Message (replies.go).
	answer *protocol.Message
	// hb is the heartbeat timer, made on the first wait and reset for
	// every later one.
	hb *time.Timer
}

// Serve sends the stream to w until it ends: the task settles, the client
// goes or the config is unloaded; the run goes on in every case. Call it
// once. A binding that serves streams from its own outermost frame (see
// binding/jsonrpc's Start) keeps an idle stream's goroutine stack small.
func (st *Stream) Serve(w EventWriter) {
	if o := st.e.opts.Observer; o != nil {
		o.StreamOpened()
		defer o.StreamClosed()
	}
	if st.reply != nil {
		st.e.streamReply(st.ctx, w, st.reply)
		return
	}
	if st.direct != nil {
		st.e.streamDirect(w, st.direct)
		return
	}
	if st.answer != nil {
		st.e.streamAnswer(w, st.answer)
		return
	}
	st.e.pump(st, w)
}

// heartbeatTimer returns the stream's heartbeat timer, set to fire after
// d. Timers have no stale ticks since Go 1.23, so Reset needs no drain.
func (st *Stream) heartbeatTimer(d time.Duration) *time.Timer {
	if st.hb == nil {
		st.hb = time.NewTimer(d)
	} else {
		st.hb.Reset(d)
	}
	return st.hb
}

func (st *Stream) stopHeartbeat() {
	if st.hb != nil {
		st.hb.Stop()
	}
}

// SendStreamingMessage sets up a streaming send: the task is created or
// continued and its run started, and the Stream returned sends the Task,
// then its events until it settles. In message-reply mode the Stream runs
// the agent and sends its one Message. An error is returned before
// anything is sent or written.
func (s *Service) SendStreamingMessage(ctx context.Context, c Caller, p *protocol.SendParams) (*Stream, *protocol.Error) {
	if perr := s.streamingError(); perr != nil {
		return nil, perr
	}
	if s.opts.Reply == ReplyMessage {
		rr, perr := s.prepareReply(ctx, c, p)
		if perr != nil {
			return nil, perr
		}
		held, r, perr := s.claimReply(ctx, c, p)
		if perr != nil {
			return nil, perr
		}
		if r != nil {
			return s.streamRetried(ctx, c, p, r)
		}
		rr.claim = held
		return &Stream{e: s, ctx: ctx, reply: rr}, nil
	}
	st, perr := s.prepareSend(ctx, c, p, true)
	if perr != nil {
		return nil, perr
	}
	if st.retryOf != "" {
		return s.retriedStream(ctx, c, p, st.retryOf)
	}
	if st.retried != nil {
		return s.streamRetried(ctx, c, p, st.retried)
	}
	if st.run.deferred != nil {
		if perr := s.startRun(&st); perr != nil {
			return nil, perr
		}
		return s.streamDeferred(ctx, c, p, st.run)
	}
	task, snapID := st.task, st.lastEventID
	if snapID == "" {
		// A new task: its log position is only known by reading it back,
		// before the run can add to it.
		rec, err := s.opts.Store.Get(ctx, c.Owner, task.ID)
		if err != nil {
			_ = s.startRun(&st)
			return nil, storeError(c.log(s.log), "get task", task.ID, err)
		}
		task, snapID = rec.Task, rec.LastEventID
	}
	// An agent that may refuse the turn (upstream.Refuser) is heard from
	// before the stream opens, so that a refusal is the stream's error, as
	// when calling the agent directly. Only then: the wait costs a channel.
	if rf, ok := s.opts.Agent.(upstream.Refuser); ok && rf.Refuses() {
		st.run.ack = make(chan struct{})
	}
	if perr := s.startRun(&st); perr != nil {
		return nil, perr
	}
	if ack := st.run.ack; ack != nil {
		select {
		case <-ack:
			if r := st.run.refused; r != nil {
				return nil, refusalError(c.log(s.log), task.ID, r)
			}
		case <-ctx.Done():
		case <-s.unloaded:
		}
	}
	c.Info.SetTask(task)
	return s.openStream(ctx, withHistoryLength(task, p.HistoryLength), snapID, snapID)
}

// SubscribeToTask sets up a stream of the caller's task: the Task as it
// is now, then its events from now on. A lastEventID (an SSE
// Last-Event-ID, "" for none) is checked (-32602 when it is no event id of
// the task), and what the client missed since is in that Task: the events
// between are not sent again (pump says why). The stream ends
// when the task reaches a terminal state (A2A 1.0 §3.1.6), not at an
// interrupted one: a subscriber to a task waiting for input sees the turn
// that continues it, whoever sends it and on whichever replica. A
// terminal task is -32004: nothing more will happen to it.
func (s *Service) SubscribeToTask(ctx context.Context, c Caller, p *protocol.TaskIDParams, lastEventID string) (*Stream, *protocol.Error) {
	if perr := s.streamingError(); perr != nil {
		return nil, perr
	}
	rec, perr := s.subscribable(ctx, c, p.ID)
	if perr != nil {
		return nil, perr
	}
	after := rec.LastEventID
	if lastEventID != "" {
		after = lastEventID
	}
	c.Info.SetTask(rec.Task)
	st, perr := s.openStream(ctx, rec.Task, rec.LastEventID, after)
	if st != nil {
		st.subscribed = true
	}
	return st, perr
}

// lastEventHeader names the resume position in errors: the SSE header a
// client sets it with.
const lastEventHeader = "Last-Event-ID"

// openStream reads what the log already holds after after before the
// stream is answered, so that a bad Last-Event-ID is still a clean error.
func (s *Service) openStream(ctx context.Context, task *protocol.Task, snapID, after string) (*Stream, *protocol.Error) {
	first, err := s.opts.Store.Events(ctx, task.ID, after, false)
	if errors.Is(err, store.ErrBadEventID) {
		return nil, protocol.ErrInvalidParams("Last-Event-ID is not an event id of this task",
			protocol.FieldViolation{Field: lastEventHeader, Description: "is not an event id of this task"})
	}
	if err == nil && after != snapID && !hasEventID(first, snapID) {
		// Last-Event-ID is well formed but not a position before the
		// snapshot in this log (past its end, or another task's): replaying
		// from it would never reach the snapshot, so tail from the snapshot
		// as if no Last-Event-ID had been sent.
		after = snapID
		first, err = s.opts.Store.Events(ctx, task.ID, after, false)
	}
	if err != nil {
		return nil, storeError(s.log, "read task events", task.ID, err)
	}
	return &Stream{e: s, ctx: ctx, task: task, snapID: snapID, after: after, first: first}, nil
}

// pump sends the Task frame and then the task's log after after until a
// status closes the stream, the client goes, or the config is unloaded
// (Done): the run goes on in every case.
func (s *Service) pump(st *Stream, w EventWriter) {
	ctx, task, snapID, after, evs := st.ctx, st.task, st.snapID, st.after, st.first
	st.first = nil
	w.CutOnUnload(s.opts.Unload)
	if w.Queue(snapID, &protocol.Event{Task: task}) != nil {
		return
	}
	closes := closesStream
	if st.subscribed {
		closes = protocol.TaskState.Terminal
	}
	if closes(task.Status.State) {
		_ = w.Flush()
		return
	}
	defer st.stopHeartbeat()
	// Events up to snapID (read after a Last-Event-ID older than the
	// snapshot) are not sent: the Task frame, the task as it is at snapID,
	// already holds their outcome, and a client that applies the stream
	// in order (a Task replaces what it had, a chunk appends) would
	// otherwise hold their text twice. A resume is the task as it is now,
	// then the events after it.
	skipping := after != snapID
	for {
		// Every event at hand is written, then flushed once: a burst
		// costs one flush, and nothing waits that could have gone.
		for i := range evs {
			ev := &evs[i]
			if skipping {
				skipping = ev.ID != snapID
				continue
			}
			if w.Queue(ev.ID, st.framed(&ev.Event)) != nil {
				return
			}
			if st := ev.Event.Status; st != nil && closes(st.Status.State) {
				_ = w.Flush()
				return
			}
		}
		if w.Flush() != nil {
			return
		}
		if len(evs) > 0 {
			after = evs[len(evs)-1].ID
		}
		w.Idle()
		var err error
		if evs, err = s.waitEvents(ctx, st, w, task.ID, after); err != nil {
			if errors.Is(err, store.ErrNotFound) && ctx.Err() == nil {
				// The task is gone while the stream waited: an
				// interrupted task whose idle_ttl passed, or one evicted.
				// The client learns it from a last frame, the error any
				// later call about the task answers, rather than from a
				// stream that just stops.
				w.Fail(protocol.ErrTaskNotFound(task.ID))
				return
			}
			if ctx.Err() == nil && !errors.Is(err, errUnloaded) {
				s.log.Debug("a2a: stream ended early", zap.String("task_id", task.ID), zap.Error(err))
			}
			return
		}
	}
}

// framed is ev as this stream sends it. A send's stream ends with its
// turn, so the log marks an interrupted status final (0.3's "final"); a
// subscription goes on past it, and a 0.3 client that stops at "final"
// would miss the turns that continue the task: there it is final only
// when terminal. The logged event may be shared with other streams (a
// store's tail cache), so it is copied, not changed.
func (st *Stream) framed(ev *protocol.Event) *protocol.Event {
	u := ev.Status
	if !st.subscribed || u == nil || !u.Final || u.Status.State.Terminal() {
		return ev
	}
	cu := *u
	cu.Final = false
	return &protocol.Event{Status: &cu}
}

// heartbeater is what a wait for events writes while none come: an
// EventWriter's heartbeat, or nothing (quietBeat).
type heartbeater interface{ Heartbeat() error }

// errUnloaded ends a stream whose config was unloaded.
var errUnloaded = errors.New("handler: config unloaded")

// waitEvents blocks for the events after after, writing a heartbeat
// comment every Heartbeat while none come, until the client goes (ctx)
// or the config is unloaded. With a store.Notifier the wait is a select on
// the task's channel, the stream's one timer, ctx and the unload: an idle
// stream holds no context, timer or goroutine of its own per wait. A
// store.Tailer hands the stream the events it heard, with no read.
func (s *Service) waitEvents(ctx context.Context, st *Stream, w heartbeater, id, after string) ([]store.StoredEvent, error) {
	n, ok := store.As[store.Notifier](s.opts.Store)
	if !ok {
		return s.waitEventsBlocking(ctx, w, id, after)
	}
	hb := st.heartbeatTimer(s.opts.Heartbeat)
	tl, tails := store.As[store.Tailer](s.opts.Store)
	for {
		var ready <-chan struct{}
		var err error
		if tails {
			var evs []store.StoredEvent
			evs, ready, err = tl.Next(id, after)
			if err != nil || len(evs) > 0 {
				return evs, err
			}
		} else if ready, err = n.EventsReady(id, after); err != nil {
			return nil, err
		}
		select {
		case <-ready:
			if tails {
				continue
			}
			evs, err := s.opts.Store.Events(ctx, id, after, false)
			if err != nil || len(evs) > 0 {
				return evs, err
			}
		case <-hb.C:
			if err := w.Heartbeat(); err != nil {
				return nil, err
			}
			hb.Reset(s.opts.Heartbeat)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.unloaded:
			return nil, errUnloaded
		}
	}
}

// waitEventsBlocking is waitEvents for a store without EventsReady: a
// blocking Events call per heartbeat interval.
func (s *Service) waitEventsBlocking(ctx context.Context, w heartbeater, id, after string) ([]store.StoredEvent, error) {
	ctx, cancel := s.withUnload(ctx)
	defer cancel()
	for {
		wctx, cancel := context.WithTimeout(ctx, s.opts.Heartbeat)
		evs, err := s.opts.Store.Events(wctx, id, after, true)
		cancel()
		if err == nil {
			return evs, nil
		}
		if ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			if ctx.Err() != nil && s.unloadedNow() {
				return nil, errUnloaded
			}
			return nil, err
		}
		if err := w.Heartbeat(); err != nil {
			return nil, err
		}
	}
}

// unloadedNow reports whether the config has been unloaded.
func (s *Service) unloadedNow() bool {
	select {
	case <-s.unloaded:
		return true
	default:
		return false
	}
}

func hasEventID(evs []store.StoredEvent, id string) bool {
	for i := range evs {
		if evs[i].ID == id {
			return true
		}
	}
	return false
}

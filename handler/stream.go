package handler

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// Header values of an SSE answer; shared slices so they cost nothing.
var (
	sseContentType  = []string{"text/event-stream"}
	sseNoCache      = []string{"no-cache"}
	sseNoBuffering  = []string{"no"}
	heartbeatFrame  = []byte(protocol.SSEHeartbeat)
	lastEventHeader = "Last-Event-ID"
	lastEventKey    = "Last-Event-Id" // canonical form of lastEventHeader
)

// sse writes one JSON-RPC SSE answer: every frame is a full JSON-RPC
// response carrying the request id, flushed the moment it is written.
// Every frame is written within a write deadline (stream_deadline.go).
type sse struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	id     json.RawMessage
	codec  protocol.Codec
	opened bool
	// hb is the heartbeat timer, made on the first wait and reset for
	// every later one.
	hb *time.Timer
	// body and frame are pooled scratch buffers for a burst of frames,
	// taken when a frame is written and given back (release) before the
	// stream waits: an idle stream holds none.
	body, frame *[]byte
	writeGuard
}

func newSSE(w http.ResponseWriter, id json.RawMessage, codec protocol.Codec, writeTimeout time.Duration) *sse {
	s := &sse{w: w, rc: http.NewResponseController(w), id: id, codec: codec}
	s.timeout = writeTimeout
	return s
}

// buffers takes the scratch buffers from the pool if s does not hold them.
func (s *sse) buffers() {
	if s.body == nil {
		s.body, s.frame = getBuf(), getBuf()
	}
}

// release gives the scratch buffers back; the next frame takes them again.
func (s *sse) release() {
	if s.body == nil {
		return
	}
	putBuf(s.body)
	putBuf(s.frame)
	s.body, s.frame = nil, nil
}

// heartbeatTimer returns the stream's heartbeat timer, set to fire after
// d. Timers have no stale ticks since Go 1.23, so Reset needs no drain.
func (s *sse) heartbeatTimer(d time.Duration) *time.Timer {
	if s.hb == nil {
		s.hb = time.NewTimer(d)
	} else {
		s.hb.Reset(d)
	}
	return s.hb
}

func (s *sse) stopHeartbeat() {
	if s.hb != nil {
		s.hb.Stop()
	}
}

func (s *sse) open() {
	if s.opened {
		return
	}
	s.opened = true
	h := s.w.Header()
	h["Content-Type"] = sseContentType
	h["Cache-Control"] = sseNoCache
	h["X-Accel-Buffering"] = sseNoBuffering
	s.w.WriteHeader(http.StatusOK)
}

// send writes ev as one frame with SSE id eventID and flushes it.
func (s *sse) send(eventID string, ev *protocol.Event) error {
	if err := s.queue(eventID, ev); err != nil {
		return err
	}
	return s.flush()
}

// queue writes ev as one frame with SSE id eventID without flushing: a
// burst of events already at hand goes out with one flush (flush).
func (s *sse) queue(eventID string, ev *protocol.Event) error {
	s.buffers()
	b := protocol.AppendResultHead((*s.body)[:0], s.id)
	b = s.codec.AppendStreamResult(b, ev)
	b = protocol.AppendResponseEnd(b)
	*s.body = b
	s.open()
	f := protocol.AppendSSEEvent((*s.frame)[:0], eventID, b)
	*s.frame = f
	if err := s.begin(true); err != nil {
		return err
	}
	_, err := s.w.Write(f)
	s.end()
	return err
}

// flush sends what queue wrote, within the deadline the last frame set.
func (s *sse) flush() error {
	if err := s.begin(false); err != nil {
		return err
	}
	err := s.rc.Flush()
	s.end()
	return err
}

// sendHeader flushes the response header alone: the stream is open
// before its first frame, and waits.
func (s *sse) sendHeader() error {
	s.open()
	if err := s.begin(true); err != nil {
		return err
	}
	err := s.rc.Flush()
	s.end()
	if err == nil {
		s.rest()
	}
	return err
}

// fail answers an error found before any event was sent: a stream of one
// frame holding the JSON-RPC error. Clients of streaming calls read the
// answer as SSE only, so a plain JSON error would be lost on them.
func (s *sse) fail(perr *protocol.Error) {
	s.buffers()
	b := protocol.AppendErrorHead((*s.body)[:0], s.id)
	b = s.codec.AppendError(b, perr)
	b = protocol.AppendResponseEnd(b)
	*s.body = b
	_ = s.write("", b)
}

func (s *sse) write(eventID string, data []byte) error {
	s.open()
	f := protocol.AppendSSEEvent((*s.frame)[:0], eventID, data)
	*s.frame = f
	return s.writeFrame(f)
}

// heartbeat writes a keep-alive comment between waits.
func (s *sse) heartbeat() error {
	s.open()
	err := s.writeFrame(heartbeatFrame)
	if err == nil {
		s.rest()
	}
	return err
}

// writeFrame writes and flushes one frame within its deadline.
func (s *sse) writeFrame(f []byte) error {
	if err := s.begin(true); err != nil {
		return err
	}
	defer s.end()
	if _, err := s.w.Write(f); err != nil {
		return err
	}
	return s.rc.Flush()
}

// serveStream answers message/stream, SendStreamingMessage,
// tasks/resubscribe and SubscribeToTask.
//
// It answers errors (and a message-reply stream) itself and returns nil;
// a stream that is ready to go is returned for the caller to serve (see
// StartRPC), holding the scratch buffers it takes over.
func (e *Endpoint) serveStream(w http.ResponseWriter, r *http.Request, c Caller, codec protocol.Codec, id json.RawMessage, m protocol.Method, params json.RawMessage) (ready *Stream) {
	s := newSSE(w, id, codec, e.opts.WriteTimeout)
	defer func() {
		if ready == nil {
			s.finish()
		}
	}()
	ctx := r.Context()
	var (
		task   *protocol.Task
		snapID string // SSE id of the Task frame: the log position of task
		after  string // where the log is read from after the Task frame
	)
	switch m {
	case protocol.MethodStream:
		p, err := codec.DecodeSend(params)
		if err != nil {
			s.fail(asParamsError(err))
			return nil
		}
		if e.opts.Reply == ReplyMessage {
			e.streamReply(ctx, s, c, p)
			return nil
		}
		st, perr := e.prepareSend(ctx, c, p)
		if perr != nil {
			s.fail(perr)
			return nil
		}
		task, snapID = st.task, st.lastEventID
		if snapID == "" {
			// A new task: its log position is only known by reading it
			// back, before the run can add to it.
			rec, err := e.opts.Store.Get(ctx, c.Owner, task.ID)
			if err != nil {
				_ = e.startRun(st)
				s.fail(storeError(e.log, "get task", task.ID, err))
				return nil
			}
			task, snapID = rec.Task, rec.LastEventID
		}
		if perr := e.startRun(st); perr != nil {
			s.fail(perr)
			return nil
		}
		task = withHistoryLength(task, p.HistoryLength)
		after = snapID
	case protocol.MethodSubscribe:
		p, err := codec.DecodeTaskID(params)
		if err != nil {
			s.fail(asParamsError(err))
			return nil
		}
		rec, perr := e.subscribable(ctx, c, p.ID)
		if perr != nil {
			s.fail(perr)
			return nil
		}
		task, snapID, after = rec.Task, rec.LastEventID, rec.LastEventID
		if lei := headerValue(r.Header, lastEventKey); lei != "" {
			after = lei
		}
	}

	// Read what is already there before answering, so that a bad
	// Last-Event-ID is still a clean one-frame error.
	first, err := e.opts.Store.Events(ctx, task.ID, after, false)
	if errors.Is(err, store.ErrBadEventID) {
		s.fail(protocol.ErrInvalidParams("Last-Event-ID is not an event id of this task",
			protocol.FieldViolation{Field: lastEventHeader, Description: "is not an event id of this task"}))
		return nil
	}
	if err == nil && after != snapID && !hasEventID(first, snapID) {
		// Last-Event-ID is well formed but not a position before the
		// snapshot in this log (past its end, or another task's): replaying
		// from it would never reach the snapshot, so tail from the snapshot
		// as if no Last-Event-ID had been sent.
		after = snapID
		first, err = e.opts.Store.Events(ctx, task.ID, after, false)
	}
	if err != nil {
		s.fail(storeError(e.log, "read task events", task.ID, err))
		return nil
	}
	return &Stream{e: e, ctx: ctx, s: s, task: task, snapID: snapID, after: after, first: first}
}

// pump sends the Task frame and then the task's log after after until a
// status closes the stream, the client goes, or the config is unloaded
// (Done): the run goes on in every case.
func (e *Endpoint) pump(ctx context.Context, s *sse, task *protocol.Task, snapID, after string, evs []store.StoredEvent) {
	if s.queue(snapID, &protocol.Event{Task: task}) != nil {
		return
	}
	if closesStream(task.Status.State) {
		_ = s.flush()
		return
	}
	defer s.stopHeartbeat()
	// Events up to snapID are a replay (a Last-Event-ID older than the
	// snapshot): the snapshot already shows their outcome, so a closing
	// status among them is history and does not end the stream.
	replaying := after != snapID
	for {
		// Every event at hand is written, then flushed once: a burst
		// costs one flush, and nothing waits that could have gone.
		for i := range evs {
			ev := &evs[i]
			if s.queue(ev.ID, &ev.Event) != nil {
				return
			}
			if replaying {
				if ev.ID == snapID {
					replaying = false
				}
				continue
			}
			if st := ev.Event.Status; st != nil && closesStream(st.Status.State) {
				_ = s.flush()
				return
			}
		}
		if s.flush() != nil {
			return
		}
		if len(evs) > 0 {
			after = evs[len(evs)-1].ID
		}
		s.release()
		s.rest()
		var err error
		if evs, err = e.waitEvents(ctx, s, task.ID, after); err != nil {
			if errors.Is(err, store.ErrNotFound) && ctx.Err() == nil {
				// The task is gone while the stream waited: an
				// interrupted task whose idle_ttl passed, or one evicted.
				// The client learns it from a last frame, the error any
				// later call about the task answers, rather than from a
				// stream that just stops.
				s.fail(protocol.ErrTaskNotFound(task.ID))
				return
			}
			if ctx.Err() == nil && !errors.Is(err, errUnloaded) {
				e.log.Debug("a2a: stream ended early", zap.String("task_id", task.ID), zap.Error(err))
			}
			return
		}
	}
}

// errUnloaded ends a stream whose config was unloaded.
var errUnloaded = errors.New("handler: config unloaded")

// waitEvents blocks for the events after after, writing a heartbeat
// comment every Heartbeat while none come, until the client goes (ctx)
// or the config is unloaded. With a store.Notifier the wait is a select on
// the task's channel, the stream's one timer, ctx and the unload: an idle
// stream holds no context, timer or goroutine of its own per wait.
func (e *Endpoint) waitEvents(ctx context.Context, s *sse, id, after string) ([]store.StoredEvent, error) {
	n, ok := e.opts.Store.(store.Notifier)
	if !ok {
		return e.waitEventsBlocking(ctx, s, id, after)
	}
	hb := s.heartbeatTimer(e.opts.Heartbeat)
	for {
		ready, err := n.EventsReady(id, after)
		if err != nil {
			return nil, err
		}
		select {
		case <-ready:
			evs, err := e.opts.Store.Events(ctx, id, after, false)
			if err != nil || len(evs) > 0 {
				return evs, err
			}
		case <-hb.C:
			if err := s.heartbeat(); err != nil {
				return nil, err
			}
			hb.Reset(e.opts.Heartbeat)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-e.unloaded:
			return nil, errUnloaded
		}
	}
}

// waitEventsBlocking is waitEvents for a store without EventsReady: a
// blocking Events call per heartbeat interval.
func (e *Endpoint) waitEventsBlocking(ctx context.Context, s *sse, id, after string) ([]store.StoredEvent, error) {
	ctx, cancel := e.withUnload(ctx)
	defer cancel()
	for {
		wctx, cancel := context.WithTimeout(ctx, e.opts.Heartbeat)
		evs, err := e.opts.Store.Events(wctx, id, after, true)
		cancel()
		if err == nil {
			return evs, nil
		}
		if ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			if ctx.Err() != nil && e.unloadedNow() {
				return nil, errUnloaded
			}
			return nil, err
		}
		if err := s.heartbeat(); err != nil {
			return nil, err
		}
	}
}

// unloadedNow reports whether the config has been unloaded.
func (e *Endpoint) unloadedNow() bool {
	select {
	case <-e.unloaded:
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

package a2aagent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
	"github.com/caddy-a2a/caddy-a2a/upstream/frames"
)

// Polling of a task the agent answered before it settled: 250ms, doubling
// to 2s, until the run's timeout.
const (
	pollStart = 250 * time.Millisecond
	pollMax   = 2 * time.Second
)

// envelopeDepth is what a JSON-RPC response (and 1.0's stream wrapper)
// adds to the nesting of the agent's task or event.
const envelopeDepth = 2

// runStream is one run at the agent: the answer to a send (a stream's
// frames, or one JSON answer) turned into upstream events, then polling
// while the agent's task has not settled.
type runStream struct {
	a *Agent
	// ctx is the run's (bounded by the timeout); reqCtx the send's, which
	// an abort of the run ends only once the agent's task is known, or
	// cancelWait after (aborted).
	ctx       context.Context
	reqCtx    context.Context
	reqCancel context.CancelFunc
	// cancel ends the run and the send; release only the run (its
	// timeout and abort watch), for a drain that reads the send on.
	cancel  func()
	release func()
	// named is set once the agent's task id is known (a continued turn's
	// from the start), for aborted (which runs on its own goroutine);
	// streams, before the send, when it is a stream. handedOff: the run
	// ended before the agent named its task, and orphan has the send.
	named     atomic.Bool
	streams   bool
	handedOff bool
	iface     protocol.Interface
	codec     protocol.Codec
	req       *upstream.RunRequest

	// ref is the agent's task as known so far; baseArtifacts, how many of
	// its artifacts earlier turns brought into the module's task.
	ref           ref
	baseArtifacts int
	// sent counts the parts of each of the agent's artifacts (by id) this
	// run relayed: a task read again relays only an artifact that changed.
	sent map[string]int

	resp   *http.Response
	frames *frames.Reader
	// first is the stream's first frame, read with the send (send).
	first *pendingOp
	// pending are events translated and not yet returned.
	pending []upstream.Event
	// settled: the agent's task settled (or it answered a message): once
	// pending is drained the run is over. final is the state the turn
	// settled in (none for a message), which the rest of the agent's
	// stream is checked against (drain).
	settled bool
	final   protocol.TaskState
	// begun: an event of the agent's was translated; a continued turn's
	// first event may be a snapshot (restates).
	begun bool
	// polling: the answer ended before the task settled; tasks/get goes on.
	polling bool
	wait    time.Duration
	err     error
}

// start sends the turn: message/stream when the agent streams, else a
// blocking message/send.
func (s *runStream) start() error {
	streams := s.streams
	msg := s.req.Message
	msg.TaskID = s.ref.Task
	msg.ContextID = s.ref.Context
	if msg.ContextID == "" {
		// The module's context id for this caller's conversation: the
		// agent keeps a conversation's tasks together by it, and every
		// SDK keeps the id a client gives.
		msg.ContextID = s.req.ContextID
	}
	p := protocol.SendParams{Tenant: s.iface.Tenant, Message: msg, Blocking: true, Metadata: s.req.Metadata}
	params := s.codec.AppendSendParams(nil, &p)
	m, accept := protocol.MethodSend, "application/json"
	if streams {
		m, accept = protocol.MethodStream, "text/event-stream, application/json"
	}
	send := func() pendingOp { return s.send(m, params, accept) }
	var r pendingOp
	if streams && !s.named.Load() {
		var err error
		if r, err = s.await(send); err != nil {
			return err
		}
	} else {
		r = send()
	}
	if r.err != nil {
		return r.err
	}
	if r.resp != nil {
		s.resp, s.frames, s.first = r.resp, r.fr, &r
		return nil
	}
	// One JSON answer: a send's result, or a stream refused with an error.
	raw, err := s.a.result(r.frame)
	if err != nil {
		return err
	}
	ev, err := s.codec.DecodeSendResult(raw)
	if err != nil {
		return s.bad(err)
	}
	if err := s.translate(ev); err != nil {
		return err
	}
	if !s.settled {
		s.startPolling()
	}
	return nil
}

// send posts the turn. An event stream's answer is returned open with its
// first frame, so that a streaming send that names the agent's task at
// once (they all do) costs one wait in await, not two; a JSON answer is
// read whole.
func (s *runStream) send(m protocol.Method, params []byte, accept string) pendingOp {
	resp, err := s.a.post(s.reqCtx, s.iface, s.codec, m, params, s.req.Headers, accept, s.req.Extensions)
	if err != nil {
		return pendingOp{err: err}
	}
	if mediaType(resp.Header) == "text/event-stream" {
		fr := frames.NewReader(resp.Body, true, s.a.cfg.MaxEventBytes)
		b, err := fr.Next()
		return pendingOp{resp: resp, fr: fr, frame: b, frameErr: err}
	}
	defer resp.Body.Close()
	body, err := s.a.readBody(resp)
	return pendingOp{frame: body, err: err}
}

// nextFrame reads the stream's next frame: while the agent has not named
// its task, in await, which the run's end does not wait for.
func (s *runStream) nextFrame() ([]byte, error) {
	if f := s.first; f != nil {
		s.first = nil
		return f.frame, f.frameErr
	}
	if s.named.Load() {
		return s.frames.Next()
	}
	fr := s.frames
	r, err := s.await(func() pendingOp {
		b, err := fr.Next()
		return pendingOp{frame: b, frameErr: err}
	})
	if err != nil {
		return nil, err
	}
	return r.frame, r.frameErr
}

// aborted runs when the run is aborted (a cancel, the timeout, a
// shutdown): the send is ended at once if the agent's task is known (end
// then tells the agent), else only once the agent has named it (orphan
// reads on for that, and tells the agent) or cancelWait has passed.
// Closing the stream before its first frame would leave the agent working
// on a task nobody can cancel. The run itself ends at once either way
// (await).
func (s *runStream) aborted() {
	if s.named.Load() || !s.streams {
		// Known, or never to be known before the turn is done (a
		// blocking send answers only then): no reason to wait.
		s.reqCancel()
		return
	}
	time.AfterFunc(cancelWait, s.reqCancel)
}

// Next returns the next event; io.EOF once the agent's task settled.
func (s *runStream) Next() (upstream.Event, error) {
	for {
		if s.err == nil && s.ctx.Err() != nil && s.ref.Task != "" {
			// Aborted, and the agent's task is known: end (and tell it).
			s.pending = nil
			s.end(s.ctx.Err())
		}
		if len(s.pending) > 0 {
			ev := s.pending[0]
			s.pending = s.pending[1:]
			return ev, nil
		}
		if s.err != nil {
			return upstream.Event{}, s.err
		}
		if s.settled {
			s.end(io.EOF)
			continue
		}
		if err := s.step(); err != nil {
			s.end(err)
		}
	}
}

// step reads the next frame of the stream, or polls the task once.
func (s *runStream) step() error {
	if s.polling {
		return s.poll()
	}
	b, err := s.nextFrame()
	if err == io.EOF {
		// The stream ended without the task settling (a 1.0 server may
		// close it early, an agent restarts): the task is read instead.
		s.closeBody()
		if s.ref.Task == "" {
			return fmt.Errorf("%w: the agent's stream ended before it named a task", upstream.ErrBadOutput)
		}
		s.startPolling()
		return nil
	}
	if err != nil {
		if s.ctx.Err() != nil {
			return s.ctx.Err()
		}
		return err
	}
	raw, err := s.a.result(b)
	if err != nil {
		return err
	}
	ev, err := s.codec.DecodeStreamResult(raw)
	if err != nil {
		return s.bad(err)
	}
	return s.translate(ev)
}

func (s *runStream) startPolling() {
	s.polling, s.wait = true, pollStart
}

// poll waits, then reads the agent's task once.
func (s *runStream) poll() error {
	t := time.NewTimer(s.wait)
	select {
	case <-t.C:
	case <-s.ctx.Done():
		t.Stop()
		return s.ctx.Err()
	}
	s.wait = min(2*s.wait, pollMax)
	zero := 0
	params := s.codec.AppendGetTaskParams(nil, &protocol.GetTaskParams{Tenant: s.iface.Tenant, ID: s.ref.Task, HistoryLength: &zero})
	raw, err := s.a.call(s.ctx, s.iface, s.codec, protocol.MethodGetTask, params, s.req.Headers)
	if err != nil {
		return err
	}
	task, err := s.codec.DecodeTask(raw)
	if err != nil {
		return s.bad(err)
	}
	return s.translate(&protocol.Event{Task: task})
}

// bad is a decode failure of the agent's answer: the run breaks.
func (s *runStream) bad(err error) error {
	return fmt.Errorf("%w: %v", upstream.ErrBadOutput, err)
}

// translate turns one of the agent's results or stream events into
// upstream events, interpreting the agent's task once, here.
func (s *runStream) translate(ev *protocol.Event) error {
	first := !s.begun
	s.begun = true
	switch {
	case ev.Message != nil:
		// A message instead of a task: the whole answer, marked as the
		// direct answer it is (the handler decides what becomes of it).
		if err := s.a.rules.CheckParts(ev.Message.Parts, "message.parts"); err != nil {
			return err
		}
		s.pending = append(s.pending, upstream.Event{Kind: upstream.EventMessage},
			upstream.Event{Kind: upstream.EventParts, Parts: ev.Message.Parts, Whole: true})
		s.settled = true
	case ev.Task != nil:
		t := ev.Task
		if first && s.restates(t) {
			s.a.log.Debug("a2a: the agent's first event restates the task the turn continues",
				zap.String("task_id", s.req.TaskID), zap.String("agent_task_id", t.ID), zap.Stringer("state", t.Status.State))
			return nil
		}
		s.noteTask(t.ID, t.ContextID)
		for i := s.baseArtifacts; i < len(t.Artifacts); i++ {
			a := &t.Artifacts[i]
			if n, ok := s.sent[a.ID]; ok && n == len(a.Parts) {
				continue // relayed as it is already
			}
			if err := s.chunk(a, false, true); err != nil {
				return err
			}
		}
		if len(t.Artifacts) > s.ref.Artifacts {
			s.ref.Artifacts = len(t.Artifacts)
		}
		return s.status(t.Status)
	case ev.Status != nil:
		s.noteTask(ev.Status.TaskID, ev.Status.ContextID)
		return s.status(ev.Status.Status)
	case ev.Artifact != nil:
		u := ev.Artifact
		s.noteTask(u.TaskID, u.ContextID)
		return s.chunk(&u.Artifact, u.Append, u.LastChunk)
	}
	return nil
}

// noteTask records the agent's task and context ids (a reference event
// the first time, or when they change).
func (s *runStream) noteTask(taskID, contextID string) {
	if taskID == "" || (taskID == s.ref.Task && contextID == s.ref.Context) {
		return
	}
	if taskID != s.ref.Task {
		// Another task of the agent's (a first turn, or the agent began
		// anew): none of its artifacts are in the module's task yet, and
		// no earlier turn left it in a state.
		s.baseArtifacts, s.ref, s.sent = 0, ref{}, nil
	}
	s.ref.Task, s.ref.Context = taskID, contextID
	s.named.Store(true)
	s.pending = append(s.pending, upstream.Event{Kind: upstream.EventRef, Ref: s.ref.encode()})
}

// chunk relays a piece of one of the agent's artifacts.
func (s *runStream) chunk(a *protocol.Artifact, appendTo, last bool) error {
	if err := s.a.rules.CheckParts(a.Parts, "artifact.parts"); err != nil {
		return err
	}
	if s.sent == nil {
		s.sent = map[string]int{}
	}
	n, known := s.sent[a.ID]
	if !known && !s.polling {
		s.ref.Artifacts++
	}
	if !appendTo {
		n = 0
	}
	s.sent[a.ID] = n + len(a.Parts)
	cp := *a
	s.pending = append(s.pending, upstream.Event{Kind: upstream.EventChunk, Artifact: &cp, Append: appendTo, LastChunk: last})
	return nil
}

// status relays the agent task's status: a settling state ends the run
// (after the reference is brought up to date), working with a message is
// progress, anything else adds nothing.
func (s *runStream) status(st protocol.TaskStatus) error {
	var parts []protocol.Part
	if st.Message != nil {
		if err := s.a.rules.CheckParts(st.Message.Parts, "status.message.parts"); err != nil {
			return err
		}
		parts = st.Message.Parts
	}
	switch {
	case st.State.Terminal() || st.State.Interrupted():
		// The next turn tells a snapshot of the task as this one leaves
		// it by its state and question (restates).
		s.ref.State, s.ref.Message = protocol.StateUnspecified, ""
		if st.State.Interrupted() {
			s.ref.State = st.State
			if st.Message != nil {
				s.ref.Message = st.Message.ID
			}
		}
		s.final = st.State
		s.pending = append(s.pending, upstream.Event{Kind: upstream.EventRef, Ref: s.ref.encode()},
			upstream.Event{Kind: upstream.EventStatus, State: st.State, Parts: parts})
		s.settled = true
	case len(parts) > 0:
		s.pending = append(s.pending, upstream.Event{Kind: upstream.EventStatus, State: protocol.StateWorking, Parts: parts})
	}
	return nil
}

// end records the run's outcome and releases the request.
func (s *runStream) end(err error) {
	if s.err != nil {
		return
	}
	s.err = upstream.RunError(s.ctx, err)
	if err != io.EOF && !s.settled && s.ref.Task != "" {
		// The run ended before the agent's task settled (a cancel, the
		// timeout, a shutdown, output over a limit, a broken stream):
		// the agent would work on for nothing, so it is told.
		s.a.cancelLater(s.iface, s.codec, s.ref.Task, s.req.Headers)
	}
	if s.settled && s.resp != nil {
		// The turn settled with the agent's stream still open: the rest
		// of it is read in the background, and the request released
		// after (drain).
		resp, fr := s.resp, s.frames
		s.resp, s.frames = nil, nil
		s.release()
		go s.drain(resp, fr)
		return
	}
	s.closeBody()
	s.finish()
}

// finish ends the run, and the send unless orphan reads it on.
func (s *runStream) finish() {
	if s.handedOff {
		s.release()
		return
	}
	s.cancel()
}

func (s *runStream) closeBody() {
	if s.resp != nil {
		s.resp.Body.Close()
		s.resp = nil
		s.frames.Release()
	}
}

// Close aborts the run if it is still going.
func (s *runStream) Close() error {
	s.end(errors.New("upstream: run closed"))
	return nil
}

package a2aagent

import (
	"net/http"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream/frames"
)

// pendingOp is what one blocking call to the agent gave: the send's
// answer, or the next frame of its stream.
type pendingOp struct {
	// resp and fr are an event stream's answer, open, and its reader
	// (nil for a JSON answer, and for a frame read on).
	resp *http.Response
	fr   *frames.Reader
	// frame is the stream's next frame (frameErr what its read gave
	// instead), or a JSON answer's whole body.
	frame    []byte
	frameErr error
	// err is the send's own failure: no answer to read.
	err error
}

// await runs op (a send, or a read of its stream) while a streaming
// agent has not named its task. The timeout bounds the whole run, that
// wait included, but ending the send before the agent names its task
// would leave the agent working on a task nobody can cancel: so op runs
// on a goroutine of its own, and when the run ends first (its timeout, a
// cancel, a shutdown) the send is handed to orphan with op still going,
// and the run returns its context's error at once.
func (s *runStream) await(op func() pendingOp) (pendingOp, error) {
	done := make(chan pendingOp, 1)
	go func() { done <- op() }()
	select {
	case r := <-done:
		return r, nil
	case <-s.ctx.Done():
	}
	resp, fr := s.resp, s.frames
	s.resp, s.frames = nil, nil
	s.handedOff = true
	go s.orphan(done, resp, fr)
	return pendingOp{}, s.ctx.Err()
}

// orphan reads on a send the run gave up on before the agent named its
// task (await), until the agent names it (then it is told to cancel
// it), the answer ends or shows there is nothing to cancel, or
// cancelWait has passed since the abort (aborted ends the send then).
// resp and fr are the send's stream when op was a read of it.
func (s *runStream) orphan(done <-chan pendingOp, resp *http.Response, fr *frames.Reader) {
	defer func() {
		if resp != nil {
			resp.Body.Close()
			fr.Release()
		}
		s.reqCancel()
	}()
	r := <-done
	if r.err != nil {
		return
	}
	if r.resp != nil {
		resp, fr = r.resp, r.fr
	}
	if resp == nil {
		// A JSON answer to the send: the whole turn, or a refusal.
		if id, _ := s.nameIn(r.frame, false); id != "" {
			s.a.cancelLater(s.iface, s.codec, id, s.req.Headers)
		}
		return
	}
	b, err := r.frame, r.frameErr
	for range drainFrames {
		if err != nil {
			return
		}
		id, more := s.nameIn(b, true)
		if id != "" {
			s.a.cancelLater(s.iface, s.codec, id, s.req.Headers)
		}
		if !more {
			return
		}
		b, err = fr.Next()
	}
}

// nameIn reads one of the agent's answers (a stream frame, or a send's
// JSON answer) for orphan: the task it names if that task still runs (the
// one to cancel), and whether a later frame may name one yet (this one
// names none, and is neither a message, a direct answer, nor something
// that is not A2A, a broken stream).
func (s *runStream) nameIn(b []byte, stream bool) (taskID string, more bool) {
	ev := s.decode(b, stream)
	if ev == nil || ev.Message != nil {
		return "", false
	}
	var st protocol.TaskState
	switch {
	case ev.Task != nil:
		taskID, st = ev.Task.ID, ev.Task.Status.State
	case ev.Status != nil:
		taskID, st = ev.Status.TaskID, ev.Status.Status.State
	case ev.Artifact != nil:
		taskID = ev.Artifact.TaskID
	}
	switch {
	case taskID == "":
		return "", true
	case st.Terminal():
		return "", false
	}
	return taskID, false
}

// decode reads one of the agent's answers (nil when it is not one).
func (s *runStream) decode(b []byte, stream bool) *protocol.Event {
	raw, err := s.a.result(b)
	if err != nil {
		return nil
	}
	var ev *protocol.Event
	if stream {
		ev, err = s.codec.DecodeStreamResult(raw)
	} else {
		ev, err = s.codec.DecodeSendResult(raw)
	}
	if err != nil {
		return nil
	}
	return ev
}

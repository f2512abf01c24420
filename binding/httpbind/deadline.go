package httpbind

import (
	"context"
	"sync"
	"time"
)

// writeGuard bounds the writes of one SSE answer. Without it a client that
// stops reading blocks its stream's goroutine in a write for good: the
// stream never notices a reload, and `caddy stop` waits for it.
//
//   - Every frame is written within a write deadline of about timeout
//     from its start (the flush that ends the frame keeps it), so a
//     stalled client loses the stream after timeout and a slow one keeps
//     it. The deadline is moved only once an eighth of timeout has
//     passed since it was set, so a frame gets between 7/8 of timeout and
//     timeout: setting it is a runtime timer update on HTTP/1 and a
//     message to the connection's serving goroutine on HTTP/2, and a burst
//     of thousands of chunks needs one, not one per chunk.
//   - A stream that goes back to waiting clears it (rest): the deadline is
//     for writes, and an idle stream must not be cut by an old one (HTTP/2
//     resets a stream when its deadline passes, writing or not; a
//     heartbeat interval may be longer than the timeout).
//   - When the answer ends (Finish) a deadline is left set, so that the
//     writes net/http makes to finish the response (the last chunk, the
//     end of the stream) are bounded too. It does not reach the next
//     request on the connection: net/http clears an HTTP/1 connection's
//     write deadline once a response is finished, and an HTTP/2 or HTTP/3
//     deadline belongs to its stream.
//   - With CutOnUnload, a config unload moves the deadline of a write in
//     progress to the past, so a blocked write fails at once. A stream that
//     is not writing is not touched: it sees the unload in its wait and
//     ends cleanly.
type writeGuard struct {
	timeout time.Duration
	// armed: a write deadline is set, at deadline; noDeadline: the writer
	// takes none (a test recorder, say), so it is not asked again.
	armed, noDeadline bool
	deadline          time.Time

	// The unload watch (CutOnUnload); stopCut is nil without one.
	stopCut  func() bool
	unloaded <-chan struct{}
	// mu orders cut against the start and end of every write: writing
	// says a write is in progress, killed that cut set its deadline to the
	// past (the response is broken; Finish leaves it so).
	mu              sync.Mutex
	writing, killed bool
}

// pastDeadline is a write deadline long over: writes fail at once.
var pastDeadline = time.Unix(1, 0)

// CutOnUnload makes an unload of unload's config cut a write in progress.
// Call it once, before the stream's first wait; Finish stops the watch.
// It costs one context.AfterFunc registration per stream, no goroutine.
func (s *SSE) CutOnUnload(unload context.Context) {
	if unload == nil || s.stopCut != nil {
		return
	}
	s.unloaded = unload.Done()
	s.stopCut = context.AfterFunc(unload, s.cut)
}

// cut runs once the config is unloaded.
func (s *SSE) cut() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.writing && s.rc.SetWriteDeadline(pastDeadline) == nil {
		s.killed = true
	}
}

// arm sets the deadline of a write starting now, unless the one set
// leaves it at least 7/8 of timeout (see writeGuard).
func (s *SSE) arm() {
	if s.noDeadline {
		return
	}
	now := time.Now()
	if s.armed && s.deadline.Sub(now) >= s.timeout-s.timeout/8 {
		return
	}
	d := now.Add(s.timeout)
	if s.rc.SetWriteDeadline(d) != nil {
		s.noDeadline = true
		return
	}
	s.armed, s.deadline = true, d
}

// rest clears the deadline of a stream going back to waiting.
func (s *SSE) rest() {
	if s.armed {
		s.armed = false
		_ = s.rc.SetWriteDeadline(time.Time{})
	}
}

// begin starts one write: a new frame (arm) gets a fresh deadline, a flush
// keeps its frame's. It fails with errUnloaded, writing nothing, once the
// config is unloaded (with CutOnUnload).
func (s *SSE) begin(arm bool) error {
	if arm {
		s.arm()
	}
	if s.stopCut == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.unloaded:
		return errUnloaded
	default:
	}
	s.writing = true
	return nil
}

// end ends the write begin started.
func (s *SSE) end() {
	if s.stopCut == nil {
		return
	}
	s.mu.Lock()
	s.writing = false
	s.mu.Unlock()
}

// Finish ends the answer: it stops the unload watch, leaves a deadline
// for net/http's last writes (see writeGuard) and releases the buffers. A
// cut still running no longer touches the writer, as no write is in
// progress.
func (s *SSE) Finish() {
	killed := false
	if s.stopCut != nil {
		s.stopCut()
		s.mu.Lock()
		killed = s.killed
		s.mu.Unlock()
	}
	if !s.armed && !killed {
		s.arm()
	}
	s.release()
}

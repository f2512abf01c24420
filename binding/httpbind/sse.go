package httpbind

import (
	"errors"
	"github.com/caddy-a2a/caddy-a2a/handler"
	"net/http"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// Header values of an SSE answer; shared slices so they cost nothing.
var (
	sseContentType = []string{"text/event-stream"}
	sseNoCache     = []string{"no-cache"}
	sseNoBuffering = []string{"no"}
	heartbeatFrame = []byte(protocol.SSEHeartbeat)
)

// errUnloaded ends a write once the config is unloaded (CutOnUnload).
var errUnloaded = errors.New("httpbind: config unloaded")

// Frames encodes the data of a stream's frames, the part a binding owns:
// JSON-RPC wraps every event in a response carrying the request id,
// HTTP+JSON sends the event alone.
type Frames interface {
	// AppendEvent appends the data of ev's frame to dst.
	AppendEvent(dst []byte, ev *protocol.Event) []byte
	// AppendError appends the data of the frame that ends a stream with
	// perr to dst.
	AppendError(dst []byte, perr *protocol.Error) []byte
}

// SSE writes one answer as a Server-Sent Events stream, each frame
// flushed the moment it is written and every frame written within a
// write deadline (deadline.go). It is the handler.EventWriter of the HTTP
// bindings. Set it up with Init, serve it, then call Finish once.
type SSE struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	frames Frames
	opened bool
	// body and frameBuf are pooled scratch buffers for a burst of frames,
	// taken when a frame is written and given back (Idle) before the
	// stream waits: an idle stream holds none.
	body, frameBuf *[]byte
	writeGuard
}

// Init sets s up to write to w, encoding frames with frames, each frame
// within writeTimeout. A binding embeds the SSE in its own stream value
// (one allocation for both) and calls Init on it.
func (s *SSE) Init(w http.ResponseWriter, frames Frames, writeTimeout time.Duration) {
	s.w, s.rc, s.frames = w, http.NewResponseController(w), frames
	s.timeout = writeTimeout
}

// buffers takes the scratch buffers from the pool if s does not hold them.
func (s *SSE) buffers() {
	if s.body == nil {
		s.body, s.frameBuf = GetBuf(), GetBuf()
	}
}

// release gives the scratch buffers back; the next frame takes them again.
func (s *SSE) release() {
	if s.body == nil {
		return
	}
	PutBuf(s.body)
	PutBuf(s.frameBuf)
	s.body, s.frameBuf = nil, nil
}

func (s *SSE) open() {
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

// Queue writes ev as one frame with SSE id eventID without flushing: a
// burst of events already at hand goes out with one Flush.
func (s *SSE) Queue(eventID string, ev *protocol.Event) error {
	s.buffers()
	*s.body = s.frames.AppendEvent((*s.body)[:0], ev)
	f := s.frame(eventID)
	if err := s.begin(true); err != nil {
		return err
	}
	_, err := s.w.Write(f)
	s.end()
	return err
}

// frame opens the answer and frames the data in the body buffer as one
// SSE event with id eventID, in the frame buffer.
func (s *SSE) frame(eventID string) []byte {
	s.open()
	*s.frameBuf = protocol.AppendSSEEvent((*s.frameBuf)[:0], eventID, *s.body)
	return *s.frameBuf
}

// Flush sends what Queue wrote, within the deadline the last frame set.
func (s *SSE) Flush() error {
	if err := s.begin(false); err != nil {
		return err
	}
	err := s.rc.Flush()
	s.end()
	return err
}

// Open flushes the response header alone: the stream is open before its
// first frame, and waits.
func (s *SSE) Open() error {
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

// Idle readies s for a wait: the buffers go back to the pool and the
// write deadline is cleared.
func (s *SSE) Idle() {
	s.release()
	s.rest()
}

// Fail answers an error: a stream of one frame holding it, or the last
// frame of one already going. Clients of streaming calls read the answer
// as SSE only, so a plain JSON error would be lost on them.
func (s *SSE) Fail(perr *protocol.Error) {
	s.buffers()
	*s.body = s.frames.AppendError((*s.body)[:0], perr)
	_ = s.writeFrame(s.frame(""))
}

// Heartbeat writes a keep-alive comment between waits.
func (s *SSE) Heartbeat() error {
	s.open()
	err := s.writeFrame(heartbeatFrame)
	if err == nil {
		s.rest()
	}
	return err
}

// writeFrame writes and flushes one frame within its deadline.
func (s *SSE) writeFrame(f []byte) error {
	if err := s.begin(true); err != nil {
		return err
	}
	defer s.end()
	if _, err := s.w.Write(f); err != nil {
		return err
	}
	return s.rc.Flush()
}

// Stream is a stream a binding has set up and not yet served: the
// service's stream and the writer of the binding's frames. A binding
// hands it back unserved so that its caller serves it from its own frame
// (jsonrpc.Binding.Start says why); the zero Stream has nothing to serve.
type Stream struct {
	st *handler.Stream
	w  StreamWriter
}

// StreamWriter is a binding's SSE writer (an SSE with its frames), which
// Finish releases when the stream has ended.
type StreamWriter interface {
	handler.EventWriter
	Finish()
}

// NewStream pairs st with the writer that serves it.
func NewStream(st *handler.Stream, w StreamWriter) Stream {
	return Stream{st: st, w: w}
}

// Pending reports whether there is a stream to serve.
func (s Stream) Pending() bool { return s.st != nil }

// Serve sends the stream until it ends. Call it once.
func (s Stream) Serve() {
	if s.st == nil {
		return
	}
	defer s.w.Finish()
	s.st.Serve(s.w)
}

package handlertest

import (
	"io"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream/frames"
)

// OpenSSE is Events over a binding's SSE stream body, each frame's data
// read into its event by decode (or into the *protocol.Error an error
// frame carries). The first event is read ahead: an error there is the
// call's own, returned here. With final (A2A 0.3), a stream that ends
// after a status update without final:true is broken, said through broken.
func OpenSSE(body io.Reader, final bool, decode func(frame []byte) (protocol.Event, error), broken func(format string, args ...any) *protocol.Error) (Events, *protocol.Error) {
	s := &sseEvents{r: frames.NewReader(body, true, 1<<20), final: final, decode: decode, broken: broken}
	first, err := s.read()
	if perr, ok := err.(*protocol.Error); ok {
		return nil, perr
	}
	s.first, s.firstErr, s.peeked = first, err, true
	return s, nil
}

// sseEvents reads an SSE stream for OpenSSE.
type sseEvents struct {
	r      *frames.Reader
	final  bool
	decode func(frame []byte) (protocol.Event, error)
	broken func(format string, args ...any) *protocol.Error
	// last is the last event read.
	last protocol.Event
	// first is the first frame's event, read when the stream opened.
	first    protocol.Event
	firstErr error
	peeked   bool
}

// Next implements Events.
func (s *sseEvents) Next() (protocol.Event, error) {
	if s.peeked {
		s.peeked = false
		return s.first, s.firstErr
	}
	return s.read()
}

func (s *sseEvents) read() (protocol.Event, error) {
	frame, err := s.r.Next()
	if err == io.EOF && s.final && s.last.Status != nil && !s.last.Status.Final {
		return protocol.Event{}, s.broken("the stream ended after a status without final:true")
	}
	if err != nil {
		return protocol.Event{}, err
	}
	ev, err := s.decode(frame)
	if err != nil {
		return protocol.Event{}, err
	}
	s.last = ev
	return ev, nil
}

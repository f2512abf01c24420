package httpagent

import (
	"context"
	"io"

	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// plainStream yields the events of a plain answer, read whole by Run.
type plainStream struct {
	events []upstream.Event
}

func (s *plainStream) Next() (upstream.Event, error) {
	if len(s.events) == 0 {
		return upstream.Event{}, io.EOF
	}
	ev := s.events[0]
	s.events = s.events[1:]
	return ev, nil
}

// Ready implements upstream.Ready: a plain answer is read whole.
func (s *plainStream) Ready() bool { return true }

func (s *plainStream) Close() error {
	s.events = nil
	return nil
}

// eventStream yields an NDJSON or SSE answer as it arrives. It ends (and
// releases the request) at EOF, at a final status or at the first error;
// Next keeps returning that end.
type eventStream struct {
	// ctx is the run's, whose timeout an error of the read may be.
	ctx    context.Context
	p      *eventParser
	body   io.ReadCloser
	cancel context.CancelFunc
	err    error
	// direct: the answer is marked a direct message (HeaderReply), which
	// the first Next says before any of the stream's events.
	direct bool
}

func (s *eventStream) Next() (upstream.Event, error) {
	if s.direct {
		s.direct = false
		return upstream.Event{Kind: upstream.EventMessage}, nil
	}
	if s.err != nil {
		return upstream.Event{}, s.err
	}
	ev, err := s.p.next()
	if err != nil {
		err = upstream.RunError(s.ctx, err)
		s.end(err)
		return upstream.Event{}, err
	}
	if s.p.finished {
		s.end(io.EOF)
	}
	return ev, nil
}

// Ready implements upstream.Ready: the stream has ended, or its next
// frame is buffered whole.
func (s *eventStream) Ready() bool { return s.direct || s.err != nil || s.p.r.Ready() }

// end records the stream's outcome and aborts the request: nothing after
// a final status or an error is read, however large.
func (s *eventStream) end(err error) {
	s.err = err
	s.cancel()
	s.body.Close()
	s.p.r.Release()
}

// Close aborts the run if it is still going.
func (s *eventStream) Close() error {
	if s.err == nil {
		s.end(io.ErrClosedPipe)
	}
	return nil
}

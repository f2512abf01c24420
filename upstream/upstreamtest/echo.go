// Package upstreamtest holds agents for the tests and benchmarks of the
// packages that run agents (the handler, the bindings).
package upstreamtest

import (
	"context"
	"io"

	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// Echo answers every run with one text event, "hello", and ends: the
// cheapest agent there is, so a benchmark over it measures the handler,
// the binding and the store.
type Echo struct{}

// Run implements upstream.Agent.
func (Echo) Run(context.Context, *upstream.RunRequest) (upstream.Stream, error) {
	return &echoStream{}, nil
}

type echoStream struct{ sent bool }

func (s *echoStream) Next() (upstream.Event, error) {
	if s.sent {
		return upstream.Event{}, io.EOF
	}
	s.sent = true
	return upstream.Event{Kind: upstream.EventText, Text: "hello"}, nil
}

func (s *echoStream) Close() error { return nil }

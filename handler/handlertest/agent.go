package handlertest

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// agent is the suite's upstream.Agent. With a script, every run plays the
// events the script gives for its request and ends; without, each run is
// handed to the scenario (next), which plays the agent's side step by
// step. Either way every request is kept for the scenario to read
// (request), since what the agent is told is behaviour too.
type agent struct {
	mu     sync.Mutex
	script func(req *upstream.RunRequest) []step
	runs   chan *agentRun
	reqs   chan *upstream.RunRequest
}

// step is one thing a run yields: an event, or an error that breaks the
// run; with atRun, the error is Run's own (the agent could not be
// called), and a script holding one plays nothing else.
type step struct {
	ev    upstream.Event
	err   error
	atRun bool
}

func newAgent() *agent {
	return &agent{runs: make(chan *agentRun, 16), reqs: make(chan *upstream.RunRequest, 64)}
}

// play makes every later run play script. The service's runs read it
// from their own goroutines, so it is set under the lock.
func (a *agent) play(script func(req *upstream.RunRequest) []step) {
	a.mu.Lock()
	a.script = script
	a.mu.Unlock()
}

// playAlways makes every later run play steps.
func (a *agent) playAlways(steps ...step) {
	a.play(func(*upstream.RunRequest) []step { return steps })
}

// Run implements upstream.Agent.
func (a *agent) Run(ctx context.Context, req *upstream.RunRequest) (upstream.Stream, error) {
	select {
	case a.reqs <- req:
	default:
	}
	a.mu.Lock()
	script := a.script
	a.mu.Unlock()
	r := &agentRun{req: req, ctx: ctx, closed: make(chan struct{})}
	if script != nil {
		steps := script(req)
		if len(steps) > 0 && steps[0].atRun {
			return nil, steps[0].err
		}
		r.steps = make(chan step, len(steps))
		for _, s := range steps {
			r.steps <- s
		}
		close(r.steps)
		return r, nil
	}
	r.steps = make(chan step)
	a.runs <- r
	return r, nil
}

// next is the next run the agent was asked for, to be played by the
// scenario.
func (a *agent) next(t *testing.T) *agentRun {
	t.Helper()
	select {
	case r := <-a.runs:
		return r
	case <-time.After(waitTimeout):
		t.Fatal("the agent was not called")
		return nil
	}
}

// request is the request of the next run the agent was asked for.
func (a *agent) request(t *testing.T) *upstream.RunRequest {
	t.Helper()
	select {
	case r := <-a.reqs:
		return r
	case <-time.After(waitTimeout):
		t.Fatal("the agent was not called")
		return nil
	}
}

// agentRun is one run of the agent: the service reads its steps (Next),
// the scenario feeds them (send, end).
type agentRun struct {
	req    *upstream.RunRequest
	ctx    context.Context
	steps  chan step
	closed chan struct{}
	once   sync.Once
}

// Next implements upstream.Stream.
func (r *agentRun) Next() (upstream.Event, error) {
	select {
	case s, ok := <-r.steps:
		if !ok {
			return upstream.Event{}, io.EOF
		}
		return s.ev, s.err
	case <-r.ctx.Done():
		return upstream.Event{}, r.ctx.Err()
	case <-r.closed:
		return upstream.Event{}, errors.New("handlertest: stream closed")
	}
}

// Close implements upstream.Stream.
func (r *agentRun) Close() error {
	r.once.Do(func() { close(r.closed) })
	return nil
}

// send feeds one step and returns once the run has taken it.
func (r *agentRun) send(t *testing.T, s step) {
	t.Helper()
	select {
	case r.steps <- s:
	case <-time.After(waitTimeout):
		t.Fatal("the run did not take the agent's step")
	}
}

// end ends the run cleanly (io.EOF).
func (r *agentRun) end() { close(r.steps) }

// canceled waits for the run's context to end, as a cancel ends it.
func (r *agentRun) canceled(t *testing.T) {
	t.Helper()
	select {
	case <-r.ctx.Done():
		if !errors.Is(r.ctx.Err(), context.Canceled) {
			t.Fatalf("the run's context ended with %v, want context.Canceled", r.ctx.Err())
		}
	case <-time.After(waitTimeout):
		t.Fatal("the run's context was not canceled")
	}
}

// text is a chunk of the task's main artifact.
func text(s string) step { return step{ev: upstream.Event{Kind: upstream.EventText, Text: s}} }

// status is a change of state, with a status message when msg is set.
func status(st protocol.TaskState, msg string) step {
	ev := upstream.Event{Kind: upstream.EventStatus, State: st}
	if msg != "" {
		ev.Parts = []protocol.Part{{Kind: protocol.PartText, Text: msg}}
	}
	return step{ev: ev}
}

// data appends a data part holding js to the main artifact.
func data(js string) step {
	return step{ev: upstream.Event{Kind: upstream.EventParts, Parts: []protocol.Part{{Kind: protocol.PartData, Data: []byte(js)}}}}
}

// artifact is a separate artifact named name holding one text part.
func artifact(name, s string) step {
	return step{ev: upstream.Event{Kind: upstream.EventArtifact, Artifact: &protocol.Artifact{Name: name,
		Parts: []protocol.Part{{Kind: protocol.PartText, Text: s}}}}}
}

// messageMark marks the turn's answer as a direct message (ReplyAuto).
var messageMark = step{ev: upstream.Event{Kind: upstream.EventMessage}}

// fail breaks the run with err.
func fail(err error) step { return step{err: err} }

// refuse makes Run itself fail with err.
func refuse(err error) step { return step{err: err, atRun: true} }

package handlertest

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// Agent is an in-process upstream.Agent for the suite and the bindings'
// own tests. With a Script, every run plays the steps the script gives for
// its request and ends; without, each run is handed to the test (Next),
// which plays the agent's side step by step (Send, End). An agent from
// NewAgent also keeps every request for the test to read (Request), since
// what the agent is told is behaviour too. RunErr, when set, fails every
// Run: the agent could not be called.
type Agent struct {
	mu sync.Mutex
	// Script is read under mu by the runs (Play sets it under mu; a
	// test may set it directly before its first call).
	Script func(req *upstream.RunRequest) []Step
	RunErr error
	// Runs hands the unscripted runs to the test; nil: none expected.
	Runs chan *AgentRun
	reqs chan *upstream.RunRequest
	// calls counts the calls of Run.
	calls atomic.Int64
}

// Step is one thing a run yields: an event, or an error that breaks the
// run; with AtRun, the error is Run's own (the agent could not be
// called), and a script holding one plays nothing else.
type Step struct {
	Event upstream.Event
	Err   error
	AtRun bool
}

// NewAgent is an agent that hands its unscripted runs to the test and
// keeps its requests.
func NewAgent() *Agent {
	return &Agent{Runs: make(chan *AgentRun, 16), reqs: make(chan *upstream.RunRequest, 64)}
}

// Play makes every later run play script. The service's runs read it
// from their own goroutines, so it is set under the lock.
func (a *Agent) Play(script func(req *upstream.RunRequest) []Step) {
	a.mu.Lock()
	a.Script = script
	a.mu.Unlock()
}

// PlayAlways makes every later run play steps.
func (a *Agent) PlayAlways(steps ...Step) {
	a.Play(func(*upstream.RunRequest) []Step { return steps })
}

// Run implements upstream.Agent.
func (a *Agent) Run(ctx context.Context, req *upstream.RunRequest) (upstream.Stream, error) {
	a.calls.Add(1)
	if a.RunErr != nil {
		return nil, a.RunErr
	}
	select {
	case a.reqs <- req:
	default:
	}
	a.mu.Lock()
	script := a.Script
	a.mu.Unlock()
	r := &AgentRun{Req: req, Ctx: ctx, closed: make(chan struct{})}
	if script != nil {
		steps := script(req)
		if len(steps) > 0 && steps[0].AtRun {
			return nil, steps[0].Err
		}
		r.Steps = make(chan Step, len(steps))
		for _, s := range steps {
			r.Steps <- s
		}
		close(r.Steps)
		return r, nil
	}
	r.Steps = make(chan Step)
	a.Runs <- r
	return r, nil
}

// Next is the next run the agent was asked for, to be played by the
// scenario.
func (a *Agent) Next(t testing.TB) *AgentRun {
	t.Helper()
	select {
	case r := <-a.Runs:
		return r
	case <-time.After(waitTimeout):
		t.Fatal("the agent was not called")
		return nil
	}
}

// Request is the request of the next run the agent was asked for.
func (a *Agent) Request(t testing.TB) *upstream.RunRequest {
	t.Helper()
	select {
	case r := <-a.reqs:
		return r
	case <-time.After(waitTimeout):
		t.Fatal("the agent was not called")
		return nil
	}
}

// AgentRun is one run of the agent: the service reads its steps (Next),
// the test feeds them (Send, End).
type AgentRun struct {
	Req    *upstream.RunRequest
	Ctx    context.Context
	Steps  chan Step
	closed chan struct{}
	once   sync.Once
}

// Next implements upstream.Stream.
func (r *AgentRun) Next() (upstream.Event, error) {
	select {
	case s, ok := <-r.Steps:
		if !ok {
			return upstream.Event{}, io.EOF
		}
		return s.Event, s.Err
	case <-r.Ctx.Done():
		return upstream.Event{}, r.Ctx.Err()
	case <-r.closed:
		return upstream.Event{}, errors.New("handlertest: stream closed")
	}
}

// Close implements upstream.Stream.
func (r *AgentRun) Close() error {
	r.once.Do(func() { close(r.closed) })
	return nil
}

// Send feeds one step and returns once the run has taken it.
func (r *AgentRun) Send(t testing.TB, s Step) {
	t.Helper()
	select {
	case r.Steps <- s:
	case <-time.After(waitTimeout):
		t.Fatal("the run did not take the agent's step")
	}
}

// End ends the run cleanly (io.EOF).
func (r *AgentRun) End() { close(r.Steps) }

// Canceled waits for the run's context to end, as a cancel ends it.
func (r *AgentRun) Canceled(t testing.TB) {
	t.Helper()
	select {
	case <-r.Ctx.Done():
		if !errors.Is(r.Ctx.Err(), context.Canceled) {
			t.Fatalf("the run's context ended with %v, want context.Canceled", r.Ctx.Err())
		}
	case <-time.After(waitTimeout):
		t.Fatal("the run's context was not canceled")
	}
}

// Text is a chunk of the task's main artifact.
func Text(s string) Step { return Step{Event: upstream.Event{Kind: upstream.EventText, Text: s}} }

// Status is a change of state, with a status message when msg is set.
func Status(st protocol.TaskState, msg string) Step {
	ev := upstream.Event{Kind: upstream.EventStatus, State: st}
	if msg != "" {
		ev.Parts = []protocol.Part{{Kind: protocol.PartText, Text: msg}}
	}
	return Step{Event: ev}
}

// data appends a data part holding js to the main artifact.
func data(js string) Step {
	return Step{Event: upstream.Event{Kind: upstream.EventParts, Parts: []protocol.Part{{Kind: protocol.PartData, Data: []byte(js)}}}}
}

// artifact is a separate artifact named name holding one text part.
func artifact(name, s string) Step {
	return Step{Event: upstream.Event{Kind: upstream.EventArtifact, Artifact: &protocol.Artifact{Name: name,
		Parts: []protocol.Part{{Kind: protocol.PartText, Text: s}}}}}
}

// messageMark marks the turn's answer as a direct message (ReplyAuto).
var messageMark = Step{Event: upstream.Event{Kind: upstream.EventMessage}}

// fail breaks the run with err.
func fail(err error) Step { return Step{Err: err} }

// refuse makes Run itself fail with err.
func refuse(err error) Step { return Step{Err: err, AtRun: true} }

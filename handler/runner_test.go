package handler

import (
	"context"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// waitTimeout bounds every wait of a test; tests poll or block with it and
// never sleep for a fixed time.
const waitTimeout = 5 * time.Second

// waitFor polls cond until it holds or the test times out.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// chanAgent hands each run to the test (next), which feeds its events;
// closing events ends the run cleanly.
type chanAgent struct{ runs chan *chanRun }

func newChanAgent() chanAgent { return chanAgent{runs: make(chan *chanRun, 16)} }

// chanRun is one run of a chanAgent.
type chanRun struct {
	ctx    context.Context
	events chan upstream.Event
}

func (a chanAgent) Run(ctx context.Context, _ *upstream.RunRequest) (upstream.Stream, error) {
	r := &chanRun{ctx: ctx, events: make(chan upstream.Event)}
	a.runs <- r
	return r, nil
}

// next is the next run the agent was asked for.
func (a chanAgent) next(t testing.TB) *chanRun {
	t.Helper()
	select {
	case r := <-a.runs:
		return r
	case <-time.After(waitTimeout):
		t.Fatal("the agent was not called")
		return nil
	}
}

func (r *chanRun) Next() (upstream.Event, error) {
	select {
	case ev, ok := <-r.events:
		if !ok {
			return upstream.Event{}, io.EOF
		}
		return ev, nil
	case <-r.ctx.Done():
		return upstream.Event{}, r.ctx.Err()
	}
}

func (r *chanRun) Close() error { return nil }

// workers counts the goroutines in Runner.work, busy or idle.
func workers() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "handler.(*Runner).work(")
}

// parkedWorkers counts the workers waiting in their select for the next
// run: only those can take one. A run counts as ended (Running) a moment
// before its worker gets back there.
func parkedWorkers() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "handler.(*Runner).work(") && strings.Contains(g, " [select") {
			n++
		}
	}
	return n
}

// Runs one after another share one worker, and Close ends it.
func TestRunnerReusesWorkers(t *testing.T) {
	// Every earlier test closed its runner, but Close returns once its
	// workers are done, a moment before their goroutines are gone.
	waitFor(t, "earlier tests' workers to end", func() bool { return workers() == 0 })
	svc := newTestService(t, stepsAgent{text("hi")})
	runner := svc.opts.Runner
	before := workers()
	for i := range 5 {
		ev, perr := svc.SendMessage(context.Background(), Caller{Owner: "alice"}, &protocol.SendParams{Message: userMessage("m", "hello"), Blocking: true})
		if perr != nil || ev.Task == nil || ev.Task.Status.State != protocol.StateCompleted {
			t.Fatalf("send %d: %+v, %v", i, ev.Task, perr)
		}
		waitFor(t, "run to end", func() bool { return runner.Running() == 0 && parkedWorkers() == workers()-before })
	}
	if n := workers() - before; n != 1 {
		t.Fatalf("%d workers for 5 runs in a row, want 1", n)
	}
	if err := runner.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "worker to end", func() bool { return workers() == before })
}

// Close ends the runs going (their agent calls first), recording their
// tasks as failed; a send after it is refused.
func TestRunnerCloseEndsRuns(t *testing.T) {
	agent := newChanAgent()
	svc := newTestService(t, agent)
	ctx := context.Background()
	ev, perr := svc.SendMessage(ctx, Caller{}, &protocol.SendParams{Message: userMessage("m", "hello")})
	if perr != nil {
		t.Fatal(perr)
	}
	run := agent.next(t)
	if err := svc.opts.Runner.Close(); err != nil {
		t.Fatal(err)
	}
	if run.ctx.Err() == nil {
		t.Fatal("Close returned while the run's upstream call was still going")
	}
	rec, err := svc.opts.Store.Get(ctx, "", ev.Task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st := rec.Task.Status.State; st != protocol.StateFailed {
		t.Fatalf("state after runner close %v", st)
	}
	_, perr = svc.SendMessage(ctx, Caller{}, &protocol.SendParams{Message: userMessage("m2", "hello"), Blocking: true})
	if perr == nil || perr.Code != protocol.CodeInternal || perr.Message == "" {
		t.Fatalf("a send after Close: %v, want -32603", perr)
	}
}

package handler

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/memory"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// obsRecorder is an Observer that keeps what it was told.
type obsRecorder struct {
	mu       sync.Mutex
	states   []string
	started  int
	outcomes []RunOutcome
	open     int
	streams  int
}

func (r *obsRecorder) TaskState(s protocol.TaskState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.states = append(r.states, s.String())
}
func (r *obsRecorder) RunStarted() { r.mu.Lock(); r.started++; r.mu.Unlock() }
func (r *obsRecorder) RunEnded(d time.Duration, o RunOutcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.outcomes = append(r.outcomes, o)
}
func (r *obsRecorder) StreamOpened() { r.mu.Lock(); r.open++; r.streams++; r.mu.Unlock() }
func (r *obsRecorder) StreamClosed() { r.mu.Lock(); r.open--; r.mu.Unlock() }

// settled is snapshot once n runs have ended (for at most 5s): a
// blocking send returns when the run's last state is stored, and the
// runner tells the observer how the run ended just after.
func (r *obsRecorder) settled(n int) (string, int, []RunOutcome, int, int) {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, _, o, _, _ := r.snapshot(); len(o) >= n {
			break
		}
	}
	return r.snapshot()
}

func (r *obsRecorder) snapshot() (string, int, []RunOutcome, int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.states, ","), r.started, append([]RunOutcome(nil), r.outcomes...), r.open, r.streams
}

// failingAgent fails every run with err.
type failingAgent struct{ err error }

func (a failingAgent) Run(context.Context, *upstream.RunRequest) (upstream.Stream, error) {
	return nil, a.err
}

// TestObserver: a blocking send tells the observer each state its writes
// stored, one run and how it ended; a cancel its canceled state; a refusal
// and a failure their outcomes.
func TestObserver(t *testing.T) {
	rec := &obsRecorder{}
	svc := newTestService(t, stepsAgent{text("hi")}, func(o *Options) { o.Observer = rec })
	alice := Caller{Owner: "alice"}
	ctx := context.Background()
	if _, perr := svc.SendMessage(ctx, alice, &protocol.SendParams{Message: userMessage("m-1", "hi"), Blocking: true}); perr != nil {
		t.Fatal(perr)
	}
	states, started, outcomes, open, _ := rec.settled(1)
	if states != "submitted,working,completed" || started != 1 || len(outcomes) != 1 || outcomes[0] != RunOK || open != 0 {
		t.Errorf("after a send: states %s, %d runs %v, %d streams open", states, started, outcomes, open)
	}

	for _, tc := range []struct {
		err  error
		want RunOutcome
	}{
		{&upstream.Refusal{Code: protocol.CodeInvalidParams, Detail: "no"}, RunRefused},
		{errors.New("connection refused"), RunError},
		{context.DeadlineExceeded, RunTimeout},
	} {
		rec := &obsRecorder{}
		svc := newTestService(t, failingAgent{tc.err}, func(o *Options) { o.Observer = rec })
		svc.SendMessage(ctx, alice, &protocol.SendParams{Message: userMessage("m-2", "hi"), Blocking: true})
		states, _, outcomes, _, _ := rec.settled(1)
		if len(outcomes) != 1 || outcomes[0] != tc.want || !strings.HasSuffix(states, "failed") {
			t.Errorf("%v: outcomes %v states %s, want %s and failed", tc.err, outcomes, states, tc.want)
		}
	}
}

// TestObserverStreams: a served stream is open while it is served.
func TestObserverStreams(t *testing.T) {
	rec := &obsRecorder{}
	svc := newTestService(t, stepsAgent{text("a"), text("b")}, func(o *Options) { o.Observer = rec })
	st, perr := svc.SendStreamingMessage(context.Background(), Caller{Owner: "alice"}, &protocol.SendParams{Message: userMessage("m-3", "hi")})
	if perr != nil {
		t.Fatal(perr)
	}
	w := &countingWriter{during: func() int { _, _, _, open, _ := rec.snapshot(); return open }}
	st.Serve(w)
	if w.maxOpen != 1 {
		t.Errorf("streams open while serving: %d, want 1", w.maxOpen)
	}
	if _, _, _, open, streams := rec.snapshot(); open != 0 || streams != 1 {
		t.Errorf("after the stream: %d open, %d served", open, streams)
	}
}

// countingWriter is an EventWriter that notes the most streams the
// observer had open while events were written.
type countingWriter struct {
	during  func() int
	maxOpen int
}

func (w *countingWriter) note() {
	if n := w.during(); n > w.maxOpen {
		w.maxOpen = n
	}
}
func (w *countingWriter) Open() error                         { w.note(); return nil }
func (w *countingWriter) Queue(string, *protocol.Event) error { w.note(); return nil }
func (w *countingWriter) Flush() error                        { return nil }
func (w *countingWriter) Idle()                               {}
func (w *countingWriter) Heartbeat() error                    { return nil }
func (w *countingWriter) Fail(*protocol.Error)                {}
func (w *countingWriter) CutOnUnload(context.Context)         {}

// TestRunLogFields: a run's log lines carry the task and context ids, the
// fields the request's placeholders and access log line use.
func TestRunLogFields(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	st := memory.New(memory.Options{})
	runner := NewRunner(zap.New(core))
	svc, err := New(Options{Store: st, Agent: failingAgent{errors.New("connection refused")}, Runner: runner, Streaming: true, Heartbeat: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { runner.Close(); st.Close() })
	res, perr := svc.SendMessage(context.Background(), Caller{Owner: "alice"}, &protocol.SendParams{Message: userMessage("m-9", "hi"), Blocking: true})
	if perr != nil {
		t.Fatal(perr)
	}
	entries := logs.FilterMessage("a2a: agent run failed").All()
	if len(entries) != 1 {
		t.Fatalf("%d failure lines", len(entries))
	}
	f := entries[0].ContextMap()
	if f["task_id"] != res.Task.ID || f["context_id"] != res.Task.ContextID {
		t.Errorf("log fields %v, want task_id %s context_id %s", f, res.Task.ID, res.Task.ContextID)
	}
}

// sickStore fails every Get as a store fault would.
type sickStore struct{ store.Store }

func (sickStore) Get(context.Context, string, string) (*store.Record, error) {
	return nil, errors.New("connection reset")
}

// TestRequestLogFields: the line a store fault leaves carries the
// request's method and version and the task id, with the error id the
// caller is answered.
func TestRequestLogFields(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	mem := memory.New(memory.Options{})
	t.Cleanup(func() { mem.Close() })
	svc := newTestService(t, failingAgent{errors.New("unused")}, func(o *Options) {
		o.Store = sickStore{mem}
		o.Logger = zap.New(core)
	})
	info := &RequestInfo{}
	info.SetMethod(protocol.MethodGetTask, protocol.V03)
	_, perr := svc.GetTask(context.Background(), Caller{Owner: "alice", Info: info}, &protocol.GetTaskParams{ID: "t-1"})
	if perr == nil || perr.Code != protocol.CodeInternal {
		t.Fatalf("answer %v, want -32603", perr)
	}
	entries := logs.FilterMessage("a2a: get task failed").All()
	if len(entries) != 1 {
		t.Fatalf("%d lines, want 1: %v", len(entries), logs.All())
	}
	f := entries[0].ContextMap()
	if f["method"] != "GetTask" || f["version"] != "0.3" || f["task_id"] != "t-1" || f["error_id"] == nil {
		t.Errorf("log fields %v, want method GetTask, version 0.3, task_id t-1 and an error_id", f)
	}
	if _, traced := f["traceID"]; traced {
		t.Errorf("an untraced request's line has a traceID: %v", f)
	}
}

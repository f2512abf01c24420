package jsonrpc

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/memory"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// wantLimit checks a -32080 answer naming limit with its value max.
func wantLimit(t *testing.T, resp map[string]any, limit, max string) {
	t.Helper()
	wantError(t, resp, protocol.CodeResourceExhausted, 7, true, "RESOURCE_EXHAUSTED")
	if got := str(t, resp, "error", "data", 0, "metadata", "limit"); got != limit {
		t.Fatalf("limit %q, want %q", got, limit)
	}
	if got := str(t, resp, "error", "data", 0, "metadata", "max"); got != max {
		t.Fatalf("max %q, want %q", got, max)
	}
}

// failedFor reads a task that ended failed because the agent's output hit
// limit, and returns it.
func failedFor(t *testing.T, task any, limit string) {
	t.Helper()
	if got := str(t, task, "status", "state"); got != "TASK_STATE_FAILED" {
		t.Fatalf("state %s, want failed: %v", got, task)
	}
	if msg := str(t, task, "status", "message", "parts", 0, "text"); !strings.Contains(msg, limit) {
		t.Fatalf("status message %q does not name %s", msg, limit)
	}
}

// An agent that streams more than max_task_output ends its task failed,
// saying so; what it sent before is kept, and the store holds no more than
// the limit allows.
func TestMaxTaskOutput(t *testing.T) {
	chunk := strings.Repeat("x", 64<<10)
	agent := &fakeAgent{Script: func(*upstream.RunRequest) []step {
		var steps []step
		for range 100 { // 6.4 MiB
			steps = append(steps, text(chunk))
		}
		return steps
	}}
	h := newHarness(t, agent, func(o *handler.Options) { o.MaxTaskOutput = 1 << 20 })
	task := at(t, h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m-1", "", "")}), "result", "task")
	failedFor(t, task, "max_task_output 1048576")
	got := str(t, task, "artifacts", 0, "parts", 0, "text")
	if len(got) != 16*len(chunk) {
		t.Errorf("kept %d bytes of output, want the 16 chunks within 1 MiB", len(got))
	}
	if b := h.store.Bytes(); b > 3<<20 {
		t.Errorf("store holds %d bytes for a task bounded to 1 MiB of output", b)
	}
}

// The events of one run are bounded (max_run_events), each turn anew: a
// conversation of chatty turns goes on, because earlier turns are
// compacted; one turn over the bound fails, naming it.
func TestMaxRunEventsPerTurn(t *testing.T) {
	const perTurn = 4000
	agent := &fakeAgent{Script: func(req *upstream.RunRequest) []step {
		n := perTurn
		if req.Message.Parts[0].Text == "flood" {
			n = 5001
		}
		steps := make([]step, 0, n+1)
		for range n {
			steps = append(steps, text("t"))
		}
		return append(steps, status(protocol.StateInputRequired, "more?"))
	}}
	h := newHarness(t, agent, func(o *handler.Options) { o.MaxRunEvents = 5000 })
	id := ""
	for turn := range 5 {
		extra := ""
		if id != "" {
			extra = `,"taskId":"` + id + `"`
		}
		task := at(t, h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m-"+strconv.Itoa(turn), extra, "")}), "result", "task")
		if got := str(t, task, "status", "state"); got != "TASK_STATE_INPUT_REQUIRED" {
			t.Fatalf("turn %d: %s %v", turn, got, at(t, task, "status"))
		}
		id = str(t, task, "id")
	}
	flood := strings.Replace(sendV10("SendMessage", "m-flood", `,"taskId":"`+id+`"`, ""), `"text":"hello"`, `"text":"flood"`, 1)
	failedFor(t, at(t, h.rpc(req{version: "1.0", owner: "alice", body: flood}), "result", "task"), "max_run_events 5000")
}

// A task holds at most max_artifacts artifacts; and many artifacts cost
// linear work (they were copied once per artifact).
func TestArtifactsBoundedAndLinear(t *testing.T) {
	art := func(i int) step {
		return step{Event: upstream.Event{Kind: upstream.EventArtifact, Artifact: &protocol.Artifact{
			Name: "a" + strconv.Itoa(i), Parts: []protocol.Part{{Kind: protocol.PartText, Text: "x"}}}}}
	}
	many := func(n int) *fakeAgent {
		return &fakeAgent{Script: func(*upstream.RunRequest) []step {
			steps := make([]step, n)
			for i := range steps {
				steps[i] = art(i)
			}
			return steps
		}}
	}
	h := newHarness(t, many(300))
	failedFor(t, at(t, h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m-1", "", "")}), "result", "task"),
		"max_artifacts 256")

	h = newHarness(t, many(3000), func(o *handler.Options) { o.MaxArtifacts = 10000 })
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	task := at(t, h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m-1", "", "")}), "result", "task")
	runtime.ReadMemStats(&ms)
	if got := str(t, task, "status", "state"); got != "TASK_STATE_COMPLETED" {
		t.Fatalf("state %s", got)
	}
	if arts := at(t, task, "artifacts").([]any); len(arts) != 3000 {
		t.Fatalf("%d artifacts", len(arts))
	}
	// A copy of the list per artifact allocated ~600 MB for 3,000 of them.
	if got := ms.TotalAlloc - before; got > 120<<20 {
		t.Errorf("3,000 artifacts allocated %d MB", got>>20)
	}
}

// One owner cannot run more than max_runs_per_owner tasks at once: the
// next send is -32080 and creates nothing; another owner is not held up,
// and the slot comes back when a run ends.
func TestMaxRunsPerOwner(t *testing.T) {
	agent := controlledAgent()
	h := newHarness(t, agent, func(o *handler.Options) { o.MaxRunsPerOwner = 2 })
	nonBlocking := `{"returnImmediately":true}`
	var runs []*fakeRun
	for i := range 2 {
		h.rpc(req{version: "1.0", owner: "bob", body: sendV10("SendMessage", "b-"+strconv.Itoa(i), "", nonBlocking)})
		runs = append(runs, agent.Next(t))
	}
	before := h.store.Len()
	wantLimit(t, h.rpc(req{version: "1.0", owner: "bob", body: sendV10("SendMessage", "b-3", "", nonBlocking)}), "max_runs_per_owner", "2")
	if h.store.Len() != before {
		t.Fatalf("a refused send stored a task")
	}
	select {
	case r := <-agent.Runs:
		t.Fatalf("a refused send reached the agent: %+v", r.Req)
	default:
	}
	// 0.3 says it in the message.
	e := h.rpc(req{owner: "bob", body: sendV03("message/send", "b-4", "", `{"blocking":false}`)})
	if num(t, e, "error", "code") != protocol.CodeResourceExhausted || !strings.Contains(str(t, e, "error", "message"), "max_runs_per_owner") {
		t.Fatalf("0.3: %v", e)
	}
	// Alice is not held up by bob.
	h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "a-1", "", nonBlocking)})
	agent.Next(t).Close()
	// A run that ends gives its slot back.
	close(runs[0].Steps)
	waitFor(t, "a slot back", func() bool {
		resp := h.rpc(req{version: "1.0", owner: "bob", body: sendV10("SendMessage", "b-5", "", nonBlocking)})
		if has(resp, "result") {
			agent.Next(t).Close()
			return true
		}
		return false
	})
	runs[1].Close()
	// Anonymous callers are many: not bounded per owner.
	for i := range 3 {
		h.rpc(req{version: "1.0", body: sendV10("SendMessage", "n-"+strconv.Itoa(i), "", nonBlocking)})
		agent.Next(t).Close()
	}
}

// A full store and an owner at its store quota answer -32080 naming the
// store's bound, not -32603, and nothing changes.
func TestStoreFullIsRetryable(t *testing.T) {
	agent := controlledAgent()
	h := newHarnessWith(t, agent, memory.Options{MaxTasks: 3, MaxTasksPerOwner: 2})
	nonBlocking := `{"returnImmediately":true}`
	for i := range 2 {
		h.rpc(req{version: "1.0", owner: "bob", body: sendV10("SendMessage", "b-"+strconv.Itoa(i), "", nonBlocking)})
		defer agent.Next(t).Close()
	}
	wantLimit(t, h.rpc(req{version: "1.0", owner: "bob", body: sendV10("SendMessage", "b-2", "", nonBlocking)}), "max_tasks_per_owner", "2")
	h.rpc(req{version: "1.0", owner: "carol", body: sendV10("SendMessage", "c-1", "", nonBlocking)})
	defer agent.Next(t).Close()
	wantLimit(t, h.rpc(req{version: "1.0", owner: "dave", body: sendV10("SendMessage", "d-1", "", nonBlocking)}), "max_tasks", "3")
	if h.store.Len() != 3 {
		t.Fatalf("store holds %d tasks", h.store.Len())
	}
}

// History is bounded in bytes as well as messages: the agent is re-sent
// no more than max_history_size of earlier turns, the newest kept.
func TestHistoryBytes(t *testing.T) {
	big := strings.Repeat("y", 300<<10)
	agent := &fakeAgent{Script: func(*upstream.RunRequest) []step { return []step{status(protocol.StateInputRequired, big)} }, Runs: make(chan *fakeRun, 16)}
	var seen [][]protocol.Message
	rec := &historyAgent{inner: agent, seen: &seen}
	h := newHarness(t, rec, func(o *handler.Options) { o.MaxHistoryBytes = 1 << 20 })
	id := ""
	for turn := range 4 {
		extra := ""
		if id != "" {
			extra = `,"taskId":"` + id + `"`
		}
		task := at(t, h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m-"+strconv.Itoa(turn), extra, "")}), "result", "task")
		id = str(t, task, "id")
		size := 0
		for _, m := range at(t, task, "history").([]any) {
			for _, p := range m.(map[string]any)["parts"].([]any) {
				size += len(p.(map[string]any)["text"].(string))
			}
		}
		if size > 1<<20 {
			t.Fatalf("turn %d: task keeps %d bytes of history", turn, size)
		}
	}
	for i, hist := range seen {
		if n := protocol.MessagesSize(hist); n > 1<<20 {
			t.Errorf("run %d was sent %d bytes of history", i, n)
		}
	}
	if last := seen[len(seen)-1]; len(last) == 0 || last[len(last)-1].Parts[0].Text != big {
		t.Errorf("the newest earlier turn was not re-sent: %d messages", len(last))
	}
}

// historyAgent records the history of every run it passes on.
type historyAgent struct {
	inner upstream.Agent
	seen  *[][]protocol.Message
}

func (a *historyAgent) Run(ctx context.Context, req *upstream.RunRequest) (upstream.Stream, error) {
	*a.seen = append(*a.seen, req.History)
	return a.inner.Run(ctx, req)
}

// A run that panics is logged, its task failed, and the server goes on.
func TestRunPanicIsContained(t *testing.T) {
	agent := &fakeAgent{Script: func(r *upstream.RunRequest) []step {
		if r.Message.Parts[0].Text == "boom" {
			return []step{{Err: errPanicStep}}
		}
		return []step{text("fine")}
	}}
	h := newHarness(t, &panicAgent{agent})
	boom := strings.Replace(sendV10("SendMessage", "m-1", "", `{"returnImmediately":true}`), `"text":"hello"`, `"text":"boom"`, 1)
	id := str(t, at(t, h.rpc(req{version: "1.0", owner: "alice", body: boom}), "result", "task"), "id")
	waitFor(t, "the panicked task to fail", func() bool {
		r, err := h.store.Get(context.Background(), "alice", id)
		return err == nil && r.Task.Status.State == protocol.StateFailed
	})
	task := at(t, h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m-2", "", "")}), "result", "task")
	if got := str(t, task, "status", "state"); got != "TASK_STATE_COMPLETED" {
		t.Fatalf("after a panic the next run is %s", got)
	}
}

var errPanicStep = errors.New("panic here")

// panicAgent panics in Next where its inner stream would return
// errPanicStep.
type panicAgent struct{ inner *fakeAgent }

func (a *panicAgent) Run(ctx context.Context, req *upstream.RunRequest) (upstream.Stream, error) {
	s, err := a.inner.Run(ctx, req)
	return &panicStream{s}, err
}

type panicStream struct{ upstream.Stream }

func (s *panicStream) Next() (upstream.Event, error) {
	ev, err := s.Stream.Next()
	if errors.Is(err, errPanicStep) {
		panic("agent stream blew up")
	}
	return ev, err
}

var _ = store.ErrFull

// One blocking send after another never runs into the caller's own bound
// on running tasks: a run's slot is free once the task settles, before
// the run has finished tearing down.
func TestSequentialSendsKeepWithinRunsBound(t *testing.T) {
	h := newHarness(t, scriptAgent(text("ok")), func(o *handler.Options) { o.MaxRunsPerOwner = 1 })
	body := []byte(sendV10("SendMessage", "m-1", "", ""))
	// In process, without HTTP in between: as fast as a caller can be.
	for i := range 2000 {
		r := httptest.NewRequest(http.MethodPost, "/a2a", nil)
		r.Header.Set("A2A-Version", "1.0")
		w := httptest.NewRecorder()
		h.ep.Serve(w, r, body, handler.Caller{Owner: "alice"})
		if !strings.Contains(w.Body.String(), "TASK_STATE_COMPLETED") {
			t.Fatalf("send %d: %s", i, w.Body.String())
		}
	}
}

// A subscriber to an auth-required task whose idle_ttl passes while it
// waits gets a last frame, -32001 as any later call about the task, and
// the stream ends; it is not just cut.
func TestSubscriberOfExpiredTaskTold(t *testing.T) {
	agent := controlledAgent()
	h := newHarnessWith(t, agent, memory.Options{IdleTTL: 100 * time.Millisecond, SweepInterval: 10 * time.Millisecond})
	id, run := startTask(t, h, agent)
	run.Send(t, status(protocol.StateAuthRequired, "sign in"))
	waitFor(t, "auth-required", func() bool {
		r, err := h.store.Get(context.Background(), "alice", id)
		return err == nil && r.Task.Status.State == protocol.StateAuthRequired
	})
	s := h.openStream(t, req{version: "1.0", owner: "alice", body: rpcCall("SubscribeToTask", `{"id":"`+id+`"}`)})
	if _, m := s.event(t); str(t, m, "result", "task", "status", "state") != "TASK_STATE_AUTH_REQUIRED" {
		t.Fatalf("first frame %v", m)
	}
	_, m := s.event(t)
	wantError(t, m, protocol.CodeTaskNotFound, 3, true, "TASK_NOT_FOUND")
	if f, err := s.next(); err != io.EOF {
		t.Fatalf("the stream goes on after the task is gone: %+v %v", f, err)
	}
	wantError(t, h.rpc(req{version: "1.0", owner: "alice", body: rpcCall("GetTask", `{"id":"`+id+`"}`)}), protocol.CodeTaskNotFound, 3, true, "TASK_NOT_FOUND")
}

package handler

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// peerAgent plays the part of an A2A agent behind the module: it gives each
// task a reference, streams its own artifacts as chunks, may refuse a run
// and is told of cancels.
type peerAgent struct {
	mu      sync.Mutex
	steps   []step
	refuse  error
	reqs    []upstream.RunRequest
	cancels []upstream.CancelRequest
	// canceled is signalled on every Cancel.
	canceled chan struct{}
}

func (a *peerAgent) Run(ctx context.Context, req *upstream.RunRequest) (upstream.Stream, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reqs = append(a.reqs, *req)
	if a.refuse != nil {
		return nil, a.refuse
	}
	return &stepsStream{ctx: ctx, steps: a.steps}, nil
}

func (a *peerAgent) Refuses() bool { return true }

func (a *peerAgent) Cancel(_ context.Context, req *upstream.CancelRequest) error {
	a.mu.Lock()
	a.cancels = append(a.cancels, *req)
	a.mu.Unlock()
	a.canceled <- struct{}{}
	return nil
}

func ref(r string) step { return step{ev: upstream.Event{Kind: upstream.EventRef, Ref: r}} }

func chunk(id, text string, appendTo, last bool) step {
	return step{ev: upstream.Event{Kind: upstream.EventChunk, Append: appendTo, LastChunk: last,
		Artifact: &protocol.Artifact{ID: id, Parts: []protocol.Part{{Kind: protocol.PartText, Text: text}}}}}
}

// The agent's artifacts become the task's own, one per agent id, their
// chunks appended in the snapshot and relayed with the agent's flags; the
// reference is kept on the task, never shown, and handed back on the
// task's next turn.
func TestGatewayChunksAndRef(t *testing.T) {
	a := &peerAgent{steps: []step{
		ref("agent-task-1"),
		chunk("a", "x", false, false), chunk("a", "y", true, false), chunk("b", "whole", false, true),
		chunk("a", "z", true, true),
		status(protocol.StateInputRequired, "more?"),
	}, canceled: make(chan struct{}, 1)}
	svc := newTestService(t, a)
	alice := Caller{Owner: "alice"}
	st, perr := svc.SendStreamingMessage(context.Background(), alice, &protocol.SendParams{Message: userMessage("m-1", "hi")})
	if perr != nil {
		t.Fatal(perr)
	}
	var w recorder
	st.Serve(&w)
	type upd struct {
		text              string
		appendTo, last    bool
		sameAsFirst, mine bool
	}
	var got []upd
	var firstID string
	for _, ev := range w.events {
		if ev.Artifact == nil {
			continue
		}
		u := ev.Artifact
		if firstID == "" {
			firstID = u.Artifact.ID
		}
		got = append(got, upd{u.Artifact.Parts[0].Text, u.Append, u.LastChunk, u.Artifact.ID == firstID,
			u.Artifact.ID != "a" && u.Artifact.ID != "b"})
	}
	want := []upd{{"x", false, false, true, true}, {"y", true, false, true, true}, {"whole", false, true, false, true}, {"z", true, true, true, true}}
	if len(got) != len(want) {
		t.Fatalf("artifact updates %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("update %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	task, perr := svc.GetTask(context.Background(), alice, &protocol.GetTaskParams{ID: w.events[0].Task.ID})
	if perr != nil {
		t.Fatal(perr)
	}
	if len(task.Artifacts) != 2 || task.Artifacts[0].Parts[0].Text+task.Artifacts[0].Parts[1].Text+task.Artifacts[0].Parts[2].Text != "xyz" ||
		task.Artifacts[1].Parts[0].Text != "whole" || task.Upstream != "agent-task-1" {
		t.Fatalf("task %+v", task)
	}

	// The next turn carries the reference to the agent.
	a.steps = []step{status(protocol.StateInputRequired, "again?")}
	m := userMessage("m-2", "more")
	m.TaskID = task.ID
	if _, perr := svc.SendMessage(context.Background(), alice, &protocol.SendParams{Message: m, Blocking: true}); perr != nil {
		t.Fatal(perr)
	}
	if a.reqs[0].Upstream != "" || a.reqs[1].Upstream != "agent-task-1" {
		t.Fatalf("run requests' upstream refs %q, %q", a.reqs[0].Upstream, a.reqs[1].Upstream)
	}

	// Canceling the task while it waits for input tells the agent.
	if _, perr := svc.CancelTask(context.Background(), alice, &protocol.TaskIDParams{ID: task.ID}); perr != nil {
		t.Fatal(perr)
	}
	select {
	case <-a.canceled:
	case <-time.After(5 * time.Second):
		t.Fatal("the agent was not told of the cancel")
	}
	if c := a.cancels[0]; c.TaskID != task.ID || c.Upstream != "agent-task-1" || c.User != "alice" {
		t.Fatalf("cancel request %+v", c)
	}
}

// An agent's refusal before any output is the send's own error, with the
// agent's code and the module's text, for a blocking and a streaming
// send; a code that does not pass through is the generic failure.
func TestGatewayRefusal(t *testing.T) {
	for _, tc := range []struct {
		code, want int
		msg        string
	}{
		{protocol.CodeInvalidParams, protocol.CodeInvalidParams, "The agent refused the request's parameters"},
		{protocol.CodeUnsupportedOperation, protocol.CodeUnsupportedOperation, "The agent does not support this operation"},
		{-32099, protocol.CodeInternal, ""},
	} {
		a := &peerAgent{refuse: &upstream.Refusal{Code: tc.code, Detail: "agent internals"}}
		svc := newTestService(t, a)
		alice := Caller{Owner: "alice"}
		_, perr := svc.SendMessage(context.Background(), alice, &protocol.SendParams{Message: userMessage("m-1", "hi"), Blocking: true})
		if perr == nil || perr.Code != tc.want || (tc.msg != "" && perr.Message != tc.msg) {
			t.Fatalf("code %d, blocking send: %+v", tc.code, perr)
		}
		_, perr = svc.SendStreamingMessage(context.Background(), alice, &protocol.SendParams{Message: userMessage("m-2", "hi")})
		if perr == nil || perr.Code != tc.want || (tc.msg != "" && perr.Message != tc.msg) {
			t.Fatalf("code %d, streaming send: %+v", tc.code, perr)
		}
	}
	// A broken run that is no refusal streams as a failed task.
	a := &peerAgent{refuse: errors.New("connection refused")}
	svc := newTestService(t, a)
	st, perr := svc.SendStreamingMessage(context.Background(), Caller{Owner: "alice"}, &protocol.SendParams{Message: userMessage("m-1", "hi")})
	if perr != nil {
		t.Fatal(perr)
	}
	var w recorder
	st.Serve(&w)
	last := w.events[len(w.events)-1]
	if last.Status == nil || last.Status.Status.State != protocol.StateFailed {
		t.Fatalf("last event %+v", last)
	}
}

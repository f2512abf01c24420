package handler

import (
	"context"
	"errors"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

var marker = step{ev: upstream.Event{Kind: upstream.EventMessage}}

func auto(o *Options) { o.Reply = ReplyAuto }

// noTasks fails t if alice has any task.
func noTasks(t *testing.T, svc *Service, alice Caller) {
	t.Helper()
	page, perr := svc.ListTasks(context.Background(), alice, &protocol.ListTasksParams{})
	if perr != nil {
		t.Fatal(perr)
	}
	if len(page.Tasks) != 0 {
		t.Fatalf("a direct answer left tasks: %+v", page.Tasks)
	}
}

// checkDirect fails t unless m is the direct answer "hello world" in the
// caller's context ctxID.
func checkDirect(t *testing.T, m *protocol.Message, ctxID string) {
	t.Helper()
	if m == nil {
		t.Fatal("no message")
	}
	if m.Role != protocol.RoleAgent || m.TaskID != "" || m.ContextID != ctxID || m.ID == "" ||
		len(m.Parts) != 1 || m.Parts[0].Text != "hello world" {
		t.Fatalf("message %+v", m)
	}
}

// With ReplyAuto, an agent that marks its answer as a direct message
// answers the send with that Message, blocking or not, and no task is
// stored; a streaming send gets it as its one event.
func TestDirectAnswer(t *testing.T) {
	agent := stepsAgent{marker, text("hello "), text("world"), status(protocol.StateCompleted, "")}
	agent[3].ev.Parts = nil
	svc := newTestService(t, agent, auto)
	alice := Caller{Owner: "alice"}
	for _, blocking := range []bool{true, false} {
		m := userMessage("m-1", "hi")
		m.ContextID = "ctx-1"
		ev, perr := svc.SendMessage(context.Background(), alice, &protocol.SendParams{Message: m, Blocking: blocking})
		if perr != nil {
			t.Fatal(perr)
		}
		if ev.Task != nil {
			t.Fatalf("blocking %v: a task %+v", blocking, ev.Task)
		}
		checkDirect(t, ev.Message, "ctx-1")
	}
	m := userMessage("m-2", "hi")
	m.ContextID = "ctx-2"
	st, perr := svc.SendStreamingMessage(context.Background(), alice, &protocol.SendParams{Message: m})
	if perr != nil {
		t.Fatal(perr)
	}
	var w recorder
	st.Serve(&w)
	if !w.opened || w.fail != nil || len(w.events) != 1 || w.ids[0] != "" {
		t.Fatalf("stream: %d events, fail %v", len(w.events), w.fail)
	}
	checkDirect(t, w.events[0].Message, "ctx-2")
	noTasks(t, svc, alice)
}

// With ReplyAuto, an answer without the marker makes a task exactly as
// ReplyTask does: a blocking send answers it completed, a non-blocking
// one submitted, a stream starts with the Task.
func TestAutoTaskAnswer(t *testing.T) {
	svc := newTestService(t, stepsAgent{text("a task")}, auto)
	alice := Caller{Owner: "alice"}
	ev, perr := svc.SendMessage(context.Background(), alice, &protocol.SendParams{Message: userMessage("m-1", "hi"), Blocking: true})
	if perr != nil {
		t.Fatal(perr)
	}
	if ev.Message != nil || ev.Task == nil || ev.Task.Status.State != protocol.StateCompleted ||
		ev.Task.Artifacts[0].Parts[0].Text != "a task" {
		t.Fatalf("blocking: %+v", ev)
	}
	ev, perr = svc.SendMessage(context.Background(), alice, &protocol.SendParams{Message: userMessage("m-2", "hi")})
	if perr != nil {
		t.Fatal(perr)
	}
	if ev.Task == nil || ev.Task.Status.State != protocol.StateSubmitted {
		t.Fatalf("non-blocking: %+v", ev)
	}
	st, perr := svc.SendStreamingMessage(context.Background(), alice, &protocol.SendParams{Message: userMessage("m-3", "hi")})
	if perr != nil {
		t.Fatal(perr)
	}
	var w recorder
	st.Serve(&w)
	if len(w.events) < 2 || w.events[0].Task == nil {
		t.Fatalf("stream events %+v", w.events)
	}
	last := w.events[len(w.events)-1]
	if last.Status == nil || last.Status.Status.State != protocol.StateCompleted {
		t.Fatalf("stream ended with %+v", last)
	}
	got, perr := svc.GetTask(context.Background(), alice, &protocol.GetTaskParams{ID: w.events[0].Task.ID})
	if perr != nil || got.Status.State != protocol.StateCompleted {
		t.Fatalf("stored %+v, %v", got, perr)
	}
	page, perr := svc.ListTasks(context.Background(), alice, &protocol.ListTasksParams{})
	if perr != nil || len(page.Tasks) != 3 {
		t.Fatalf("tasks %+v, %v", page, perr)
	}
}

// A run that breaks before its first event is a task's failure, as with
// ReplyTask: the task is stored failed.
func TestAutoAgentFailsFirst(t *testing.T) {
	svc := newTestService(t, failingAgent{err: errors.New("connection refused")}, auto)
	ev, perr := svc.SendMessage(context.Background(), Caller{}, &protocol.SendParams{Message: userMessage("m-1", "hi"), Blocking: true})
	if perr != nil {
		t.Fatal(perr)
	}
	if ev.Task == nil || ev.Task.Status.State != protocol.StateFailed {
		t.Fatalf("answer %+v", ev)
	}
}

// Only a turn that starts a task can be answered with a message: the
// marker on a continued task's turn fails the task. With ReplyTask the
// task of a new turn exists already and takes the message as its answer.
func TestDirectAnswerOnATask(t *testing.T) {
	agent := &switchAgent{steps: stepsAgent{status(protocol.StateInputRequired, "which?")}}
	svc := newTestService(t, agent, auto)
	alice := Caller{Owner: "alice"}
	ev, perr := svc.SendMessage(context.Background(), alice, &protocol.SendParams{Message: userMessage("m-1", "hi"), Blocking: true})
	if perr != nil || ev.Task == nil || ev.Task.Status.State != protocol.StateInputRequired {
		t.Fatalf("first turn %+v, %v", ev, perr)
	}
	agent.steps = stepsAgent{marker, text("an answer")}
	m := userMessage("m-2", "this")
	m.TaskID = ev.Task.ID
	ev, perr = svc.SendMessage(context.Background(), alice, &protocol.SendParams{Message: m, Blocking: true})
	if perr != nil {
		t.Fatal(perr)
	}
	if ev.Message != nil || ev.Task == nil || ev.Task.Status.State != protocol.StateFailed ||
		ev.Task.Status.Message.Parts[0].Text != failedText {
		t.Fatalf("continued turn %+v", ev)
	}

	svc = newTestService(t, stepsAgent{marker, text("hello world")})
	ev, perr = svc.SendMessage(context.Background(), alice, &protocol.SendParams{Message: userMessage("m-3", "hi"), Blocking: true})
	if perr != nil {
		t.Fatal(perr)
	}
	if ev.Message != nil || ev.Task == nil || ev.Task.Status.State != protocol.StateCompleted ||
		ev.Task.Artifacts[0].Parts[0].Text != "hello world" {
		t.Fatalf("reply task: %+v", ev)
	}
}

// switchAgent plays steps, which a test may change between runs.
type switchAgent struct{ steps stepsAgent }

func (a *switchAgent) Run(ctx context.Context, req *upstream.RunRequest) (upstream.Stream, error) {
	return a.steps.Run(ctx, req)
}

// A direct answer is held to the run limits, as a message reply is.
func TestDirectAnswerLimits(t *testing.T) {
	svc := newTestService(t, stepsAgent{marker, text("0123456789")}, auto, func(o *Options) { o.MaxTaskOutput = 5 })
	_, perr := svc.SendMessage(context.Background(), Caller{Owner: "alice"}, &protocol.SendParams{Message: userMessage("m-1", "hi"), Blocking: true})
	if perr == nil || perr.Code != protocol.CodeInternal {
		t.Fatalf("error %v, want -32603", perr)
	}
	noTasks(t, svc, Caller{Owner: "alice"})
}

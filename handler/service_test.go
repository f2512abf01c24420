package handler

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store/memory"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// The service is binding-neutral: these tests call it as a binding would,
// with typed params and an EventWriter of their own, no JSON and no HTTP.
// Its behaviour over a wire is handler/handlertest's suite, which every
// binding runs; each binding's own tests pin its bytes.

// stepsAgent plays its steps on every run.
type stepsAgent []step

func (a stepsAgent) Run(ctx context.Context, _ *upstream.RunRequest) (upstream.Stream, error) {
	return &stepsStream{ctx: ctx, steps: a}, nil
}

type stepsStream struct {
	ctx   context.Context
	steps []step
}

func (s *stepsStream) Next() (upstream.Event, error) {
	if err := s.ctx.Err(); err != nil {
		return upstream.Event{}, err
	}
	if len(s.steps) == 0 {
		return upstream.Event{}, io.EOF
	}
	ev := s.steps[0].ev
	s.steps = s.steps[1:]
	return ev, nil
}

func (s *stepsStream) Close() error { return nil }

// recorder is an EventWriter that keeps what it is given.
type recorder struct {
	ids    []string
	events []protocol.Event
	fail   *protocol.Error
	opened bool
}

func (r *recorder) Open() error { r.opened = true; return nil }
func (r *recorder) Queue(id string, ev *protocol.Event) error {
	r.ids = append(r.ids, id)
	r.events = append(r.events, *ev)
	return nil
}
func (r *recorder) Flush() error                  { return nil }
func (r *recorder) Idle()                         {}
func (r *recorder) Heartbeat() error              { return nil }
func (r *recorder) Fail(perr *protocol.Error)     { r.fail = perr }
func (r *recorder) CutOnUnload(_ context.Context) {}

func newTestService(t *testing.T, agent upstream.Agent, mods ...func(*Options)) *Service {
	t.Helper()
	st := memory.New(memory.Options{})
	runner := NewRunner(nil)
	o := Options{Store: st, Agent: agent, Runner: runner, Streaming: true, Heartbeat: time.Hour}
	for _, m := range mods {
		m(&o)
	}
	svc, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := runner.Close(); err != nil {
			t.Error(err)
		}
		st.Close()
	})
	return svc
}

func userMessage(id, text string) protocol.Message {
	return protocol.Message{ID: id, Role: protocol.RoleUser, Parts: []protocol.Part{{Kind: protocol.PartText, Text: text}}}
}

func TestServiceSendGetCancel(t *testing.T) {
	svc := newTestService(t, stepsAgent{text("hel"), text("lo"), status(protocol.StateInputRequired, "more?")})
	alice := Caller{Owner: "alice"}
	ctx := context.Background()

	res, perr := svc.SendMessage(ctx, alice, &protocol.SendParams{Message: userMessage("m-1", "hi"), Blocking: true})
	if perr != nil || res.Task == nil || res.Message != nil {
		t.Fatalf("send: %+v, %v", res, perr)
	}
	task := res.Task
	if task.Status.State != protocol.StateInputRequired || len(task.Artifacts) != 1 ||
		task.Artifacts[0].Parts[0].Text != "hello" || task.Status.Message.Parts[0].Text != "more?" {
		t.Fatalf("task %+v", task)
	}
	if got, perr := svc.GetTask(ctx, alice, &protocol.GetTaskParams{ID: task.ID}); perr != nil || got.ID != task.ID {
		t.Fatalf("get: %+v, %v", got, perr)
	}
	// Another owner's task is a missing one.
	if _, perr := svc.GetTask(ctx, Caller{Owner: "bob"}, &protocol.GetTaskParams{ID: task.ID}); perr == nil || perr.Code != protocol.CodeTaskNotFound {
		t.Fatalf("bob's get: %v", perr)
	}
	list, perr := svc.ListTasks(ctx, alice, &protocol.ListTasksParams{})
	if perr != nil || len(list.Tasks) != 1 || list.Tasks[0].ID != task.ID {
		t.Fatalf("list: %+v, %v", list, perr)
	}
	canceled, perr := svc.CancelTask(ctx, alice, &protocol.TaskIDParams{ID: task.ID})
	if perr != nil || canceled.Status.State != protocol.StateCanceled {
		t.Fatalf("cancel: %+v, %v", canceled, perr)
	}
	if _, perr := svc.CancelTask(ctx, alice, &protocol.TaskIDParams{ID: task.ID}); perr == nil || perr.Code != protocol.CodeTaskNotCancelable {
		t.Fatalf("second cancel: %v", perr)
	}
}

// A stream is served to any EventWriter: the Task first, then every
// event with its log id, until the status that closes the stream.
func TestServiceStreamToAnyWriter(t *testing.T) {
	svc := newTestService(t, stepsAgent{text("a"), text("b")})
	alice := Caller{Owner: "alice"}
	st, perr := svc.SendStreamingMessage(context.Background(), alice, &protocol.SendParams{Message: userMessage("m-1", "hi")})
	if perr != nil {
		t.Fatal(perr)
	}
	var w recorder
	st.Serve(&w)
	if w.fail != nil || len(w.events) < 4 || w.events[0].Task == nil {
		t.Fatalf("events %+v, fail %v", w.events, w.fail)
	}
	last := w.events[len(w.events)-1]
	if last.Status == nil || last.Status.Status.State != protocol.StateCompleted || !last.Status.Final {
		t.Fatalf("last event %+v", last)
	}
	for i, id := range w.ids {
		if id == "" {
			t.Fatalf("event %d has no log id", i)
		}
	}
	// A subscribe to the finished task is refused before any frame.
	if _, perr := svc.SubscribeToTask(context.Background(), alice, &protocol.TaskIDParams{ID: w.events[0].Task.ID}, ""); perr == nil ||
		perr.Code != protocol.CodeUnsupportedOperation {
		t.Fatalf("subscribe to a finished task: %v", perr)
	}
}

// Admit refuses, before any params are read, what the service does not
// offer; and a service without streaming refuses its streaming calls
// even when a binding skips Admit.
func TestServiceAdmit(t *testing.T) {
	svc := newTestService(t, stepsAgent{}, func(o *Options) {
		o.Streaming = false
		o.Extensions = []protocol.Extension{{URI: "urn:x", Required: true}}
	})
	none := svc.Negotiate()
	if perr := svc.Admit(protocol.MethodGetTask, &none); perr == nil || perr.Code != protocol.CodeExtensionSupportRequired {
		t.Fatalf("without the required extension: %v", perr)
	}
	with := svc.Negotiate([]string{"urn:y, urn:x"})
	if len(with.Activated) != 1 || with.Activated[0] != "urn:x" {
		t.Fatalf("activated %v", with.Activated)
	}
	for m, code := range map[protocol.Method]int{
		protocol.MethodGetTask:   0,
		protocol.MethodStream:    protocol.CodeUnsupportedOperation,
		protocol.MethodSubscribe: protocol.CodeUnsupportedOperation,
		protocol.MethodPushSet:   protocol.CodePushNotSupported,
	} {
		perr := svc.Admit(m, &with)
		if (code == 0) != (perr == nil) || (perr != nil && perr.Code != code) {
			t.Fatalf("method %v: %v, want code %d", m, perr, code)
		}
	}
	if _, perr := svc.SendStreamingMessage(context.Background(), Caller{}, &protocol.SendParams{Message: userMessage("m", "x")}); perr == nil ||
		perr.Code != protocol.CodeUnsupportedOperation {
		t.Fatalf("streaming send without streaming: %v", perr)
	}
}

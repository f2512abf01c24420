package a2aagent

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// question is the agent's status message when it asks for input.
func question(id, text string) *protocol.Message {
	return &protocol.Message{ID: id, Role: protocol.RoleAgent, Parts: []protocol.Part{{Kind: protocol.PartText, Text: text}}}
}

func statusEv(st protocol.TaskState, m *protocol.Message) protocol.Event {
	return protocol.Event{Status: &protocol.StatusUpdate{TaskID: "at", ContextID: "mod-ctx",
		Status: protocol.TaskStatus{State: st, Message: m, Timestamp: time.Unix(2, 0).UTC()}}}
}

func artifactEv(id, text string) protocol.Event {
	return protocol.Event{Artifact: &protocol.ArtifactUpdate{TaskID: "at", ContextID: "mod-ctx", LastChunk: true,
		Artifact: protocol.Artifact{ID: id, Parts: []protocol.Part{{Kind: protocol.PartText, Text: text}}}}}
}

// lastRef is the reference the module keeps after a run: its last EventRef.
func lastRef(evs []upstream.Event) string {
	r := ""
	for _, ev := range evs {
		if ev.Kind == upstream.EventRef {
			r = ev.Ref
		}
	}
	return r
}

// A continued turn as @a2a-js/sdk streams it: the executor publishes the
// stored task first (still input-required, the old question), then
// working, the answer, completed. The first frame only restates the task:
// the turn's outcome is the answer. In both versions.
func TestRunContinuedTurnSnapshot(t *testing.T) {
	for _, v := range []protocol.Version{protocol.V03, protocol.V10} {
		t.Run(v.String(), func(t *testing.T) {
			q := question("q1", "what is your name?")
			f := newFake(t, v, true, nil)
			f.rpc = func(w http.ResponseWriter, r *http.Request, req *protocol.Request) {
				p, _ := f.codec.DecodeSend(req.Params)
				if p.Message.TaskID == "" {
					first := task("at", protocol.StateSubmitted)
					first.History = []protocol.Message{p.Message}
					f.frames(w, req, protocol.Event{Task: first}, statusEv(protocol.StateInputRequired, q))
					return
				}
				snap := task("at", protocol.StateInputRequired)
				snap.Status.Message = q
				snap.History = []protocol.Message{p.Message}
				f.frames(w, req, protocol.Event{Task: snap}, statusEv(protocol.StateWorking, nil),
					artifactEv("a1", "hello Ada"), statusEv(protocol.StateCompleted, nil))
			}
			a := newAgent(t, f)
			evs, err := collect(t, a, userReq("ask", ""))
			if err != nil {
				t.Fatal(err)
			}
			want := `ref:{"t":"at","c":"mod-ctx"} | ref:{"t":"at","c":"mod-ctx","s":6,"m":"q1"} | status:input-required=what is your name?`
			if got := describe(evs); got != want {
				t.Fatalf("first turn\n%s\nwant\n%s", got, want)
			}
			evs, err = collect(t, a, userReq("Ada", lastRef(evs)))
			if err != nil {
				t.Fatal(err)
			}
			want = `chunk:a1=hello Ada+last | ref:{"t":"at","c":"mod-ctx","n":1} | status:completed`
			if got := describe(evs); got != want {
				t.Fatalf("follow-up\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// Only a first event that restates the task the turn continues is a
// snapshot (the run then reads on: here the stream ends and the task is
// read, completed); anything new in it is the turn's outcome.
func TestRunContinuedTurnFirstEvent(t *testing.T) {
	const left = `{"t":"at","c":"mod-ctx","n":1,"s":6,"m":"q1"}`
	withQ := func(id string, st protocol.TaskState, m *protocol.Message, artifacts ...string) *protocol.Task {
		t := task(id, st, artifacts...)
		t.Status.Message = m
		return t
	}
	q1 := question("q1", "what is your name?")
	polled := `chunk:a2=text of a2+last | ref:{"t":"at","c":"mod-ctx","n":2} | status:completed`
	for _, tc := range []struct {
		name  string
		ref   string
		first *protocol.Task
		want  string
	}{
		{"the task as it was left", left, withQ("at", protocol.StateInputRequired, q1, "a1"), polled},
		{"without its status message", left, withQ("at", protocol.StateInputRequired, nil, "a1"), polled},
		{"a reference that did not record the state", `{"t":"at","c":"mod-ctx","n":1}`,
			withQ("at", protocol.StateInputRequired, question("q0", "x"), "a1"), polled},
		{"a new question", left, withQ("at", protocol.StateInputRequired, question("q2", "and your age?"), "a1"),
			`ref:{"t":"at","c":"mod-ctx","n":1,"s":6,"m":"q2"} | status:input-required=and your age?`},
		{"another interrupted state", left, withQ("at", protocol.StateAuthRequired, q1, "a1"),
			`ref:{"t":"at","c":"mod-ctx","n":1,"s":8,"m":"q1"} | status:auth-required=what is your name?`},
		{"a new artifact", left, withQ("at", protocol.StateInputRequired, q1, "a1", "a2"),
			`chunk:a2=text of a2+last | ref:{"t":"at","c":"mod-ctx","n":2,"s":6,"m":"q1"} | status:input-required=what is your name?`},
		{"another task", left, withQ("other", protocol.StateInputRequired, q1),
			`ref:{"t":"other","c":"mod-ctx"} | ref:{"t":"other","c":"mod-ctx","s":6,"m":"q1"} | status:input-required=what is your name?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, protocol.V10, true, nil)
			f.rpc = func(w http.ResponseWriter, r *http.Request, req *protocol.Request) {
				switch req.Method {
				case "SendStreamingMessage":
					f.frames(w, req, protocol.Event{Task: tc.first})
				case "GetTask":
					f.result(w, req, f.codec.AppendTask(nil, task("at", protocol.StateCompleted, "a1", "a2")))
				}
			}
			evs, err := collect(t, newAgent(t, f), userReq("Ada", tc.ref))
			if err != nil {
				t.Fatal(err)
			}
			if got := describe(evs); got != tc.want {
				t.Fatalf("events\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// An agent that does not stream and answers a blocking send on a
// continued turn with the task as it was left (before the turn was done)
// is read again until the task settles.
func TestRunContinuedTurnBlockingSnapshot(t *testing.T) {
	f := newFake(t, protocol.V03, false, nil)
	f.rpc = func(w http.ResponseWriter, r *http.Request, req *protocol.Request) {
		switch req.Method {
		case "message/send":
			snap := task("at", protocol.StateInputRequired)
			snap.Status.Message = question("q1", "what is your name?")
			f.result(w, req, f.codec.AppendSendResult(nil, &protocol.Event{Task: snap}))
		case "tasks/get":
			f.result(w, req, f.codec.AppendTask(nil, task("at", protocol.StateCompleted, "a1")))
		}
	}
	evs, err := collect(t, newAgent(t, f), userReq("Ada", `{"t":"at","c":"mod-ctx","s":6,"m":"q1"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := describe(evs), `chunk:a1=text of a1+last | ref:{"t":"at","c":"mod-ctx","n":1} | status:completed`; got != want {
		t.Fatalf("events\n%s\nwant\n%s", got, want)
	}
	if m := strings.Join(f.Methods(), ","); m != "message/send,tasks/get" {
		t.Fatalf("methods %s", m)
	}
}

// An agent whose stream goes on after the state that settled the turn,
// to another state: the module's turn stands, and a warning names both
// states and both tasks.
func TestRunStreamGoesOnAfterSettling(t *testing.T) {
	f := newFake(t, protocol.V10, true, nil)
	f.rpc = func(w http.ResponseWriter, r *http.Request, req *protocol.Request) {
		f.frames(w, req, protocol.Event{Task: task("at", protocol.StateSubmitted)},
			statusEv(protocol.StateInputRequired, question("q1", "what is your name?")),
			statusEv(protocol.StateWorking, nil), artifactEv("a1", "late"), statusEv(protocol.StateCompleted, nil))
	}
	core, logs := observer.New(zapcore.WarnLevel)
	a := newAgent(t, f, func(c *Config) { c.Logger = zap.New(core) })
	evs, err := collect(t, a, userReq("ask", ""))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := describe(evs), `ref:{"t":"at","c":"mod-ctx"} | ref:{"t":"at","c":"mod-ctx","s":6,"m":"q1"} | status:input-required=what is your name?`; got != want {
		t.Fatalf("events\n%s\nwant\n%s", got, want)
	}
	deadline := time.Now().Add(5 * time.Second)
	for logs.Len() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	entries := logs.All()
	if len(entries) != 1 {
		t.Fatalf("%d warnings, want 1: %+v", len(entries), entries)
	}
	e := entries[0]
	fields := e.ContextMap()
	if e.Level != zapcore.WarnLevel || e.Message != "a2a: the agent's task went on to another state after the module settled the turn" ||
		fields["task_id"] != "mod-task" || fields["agent_task_id"] != "at" ||
		fields["state"] != "input-required" || fields["agent_state"] != "completed" {
		t.Fatalf("warning %q %v", e.Message, fields)
	}
}

// A stream that ends with the state that settled the turn logs nothing.
func TestRunStreamEndsWithTheTurn(t *testing.T) {
	f := newFake(t, protocol.V10, true, nil)
	f.rpc = func(w http.ResponseWriter, r *http.Request, req *protocol.Request) {
		f.frames(w, req, protocol.Event{Task: task("at", protocol.StateSubmitted)}, artifactEv("a1", "x"),
			statusEv(protocol.StateCompleted, nil), statusEv(protocol.StateCompleted, nil))
	}
	core, logs := observer.New(zapcore.DebugLevel)
	a := newAgent(t, f, func(c *Config) { c.Logger = zap.New(core) })
	if _, err := collect(t, a, userReq("hi", "")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if n := logs.FilterLevelExact(zapcore.WarnLevel).Len(); n != 0 {
		t.Fatalf("%d warnings: %+v", n, logs.All())
	}
}

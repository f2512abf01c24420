package integration

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	a2apb03 "github.com/a2aproject/a2a-go/a2apb"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"
)

// pingCounter passes an SSE body through and counts its heartbeat
// comments, which sseStream skips: a subscription that waits for the next
// turn shows it is alive by them alone.
type pingCounter struct {
	io.ReadCloser
	line  []byte
	pings atomic.Int64
}

func (p *pingCounter) Read(b []byte) (int, error) {
	n, err := p.ReadCloser.Read(b)
	for _, c := range b[:n] {
		if c == '\n' {
			if string(p.line) == ": ping" {
				p.pings.Add(1)
			}
			p.line = p.line[:0]
			continue
		}
		// A line longer than the comment cannot be it; its head is enough.
		if len(p.line) < 8 {
			p.line = append(p.line, c)
		}
	}
	return n, err
}

// waitPings waits for n more heartbeats than have come so far.
func (p *pingCounter) waitPings(t *testing.T, n int64) {
	t.Helper()
	want := p.pings.Load() + n
	deadline := time.Now().Add(5 * time.Second)
	for p.pings.Load() < want {
		if time.Now().After(deadline) {
			t.Fatalf("%d heartbeats in 5s, want %d", p.pings.Load(), want)
		}
		waitBriefly()
	}
}

// openCounted is openSSE with the body's heartbeats counted.
func openCounted(t *testing.T, req *http.Request) (*sseStream, *pingCounter) {
	t.Helper()
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		t.Fatalf("stream %s %s: %v", req.Method, req.URL, err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("stream %s %s: %d %s %s", req.Method, req.URL, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	pc := &pingCounter{ReadCloser: resp.Body}
	resp.Body = pc
	s := &sseStream{resp: resp, frames: make(chan sseFrame, 64), done: make(chan error, 1)}
	go s.read()
	t.Cleanup(s.close)
	return s, pc
}

// rpcSubscribe opens a JSON-RPC subscription to id with method
// (SubscribeToTask with A2A-Version 1.0, else 0.3's tasks/resubscribe).
func rpcSubscribe(t *testing.T, method, id string) (*sseStream, *pingCounter) {
	t.Helper()
	version := ""
	if method == "SubscribeToTask" {
		version = "1.0"
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"sub-%d","method":%q,"params":{"id":%q}}`, rpcIDs.Add(1), method, id)
	req, _ := http.NewRequest("POST", rpcURL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	return openCounted(t, req)
}

// describeREST is describe for an HTTP+JSON frame, whose data is the
// StreamResponse a JSON-RPC frame holds as its result.
func describeREST(t *testing.T, f sseFrame) string {
	t.Helper()
	return describe(t, sseFrame{ID: f.ID, Data: []byte(`{"jsonrpc":"2.0","id":1,"result":` + string(f.Data) + `}`)})
}

// describeREST03 is describe03 for a 0.3 HTTP+JSON frame, the 0.3
// proto's StreamResponse in ProtoJSON.
func describeREST03(t *testing.T, f sseFrame) string {
	t.Helper()
	var m a2apb03.StreamResponse
	// Only states, final and artifacts are read: the module's 0.3 message
	// shape (content, not a2a-go's parts) is TestRESTV03's.
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(f.Data, &m); err != nil {
		t.Fatalf("a 0.3 HTTP+JSON frame: %v: %s", err, f.Data)
	}
	return describe03(&m)
}

// turnAgent asks for a city on a task's first turn and on any turn whose
// input is "again" (input-required, the question in the status); any
// other later turn gets a plain 200 answer, which completes the task.
func turnAgent(t *testing.T) *agent {
	return newAgent(t, func(w http.ResponseWriter, _ *http.Request, c agentCall) {
		w.Header().Set("Content-Type", "text/plain")
		if len(c.History) == 0 || c.inputText() == "again" {
			w.Header().Set("A2A-Task-State", "input-required")
			io.WriteString(w, "Which city?")
			return
		}
		fmt.Fprintf(w, "Sunny in %s", c.inputText())
	})
}

// subscription is one binding's view of a subscription: its next event
// described as describe does ("" when the stream ended), whether it has
// ended with nothing more, and its heartbeats where the binding has them.
type subscription struct {
	next  func() string
	ended func()
	pings *pingCounter
}

func sseSubscription(t *testing.T, s *sseStream, pc *pingCounter, desc func(*testing.T, sseFrame) string) subscription {
	return subscription{
		next: func() string {
			t.Helper()
			f, ok := s.next(t)
			if !ok {
				return ""
			}
			return desc(t, f)
		},
		ended: func() { t.Helper(); s.ended(t) },
		pings: pc,
	}
}

// grpcSubscription reads a server stream of either version's
// StreamResponse, described as describe would its JSON.
func grpcSubscription[M any](t *testing.T, recv func() (*M, error), desc func(*M) string) subscription {
	type item struct {
		d   string
		err error
	}
	items := make(chan item, 64)
	go func() {
		for {
			m, err := recv()
			if err != nil {
				items <- item{err: err}
				close(items)
				return
			}
			items <- item{d: desc(m)}
		}
	}()
	next := func() (string, bool) {
		select {
		case it, ok := <-items:
			if !ok || errors.Is(it.err, io.EOF) {
				return "", false
			}
			if it.err != nil {
				t.Fatalf("subscription: %v", it.err)
			}
			return it.d, true
		case <-timeout():
			t.Fatal("no stream message within 5s")
			return "", false
		}
	}
	return subscription{
		next: func() string { d, _ := next(); return d },
		ended: func() {
			if d, ok := next(); ok {
				t.Fatalf("stream goes on: %s", d)
			}
		},
	}
}

func describe10(m *a2apb.StreamResponse) string {
	switch {
	case m.GetTask() != nil:
		return "task:" + m.GetTask().GetStatus().GetState().String()
	case m.GetStatusUpdate() != nil:
		return "status:" + m.GetStatusUpdate().GetStatus().GetState().String()
	case m.GetArtifactUpdate() != nil:
		var b strings.Builder
		for _, p := range m.GetArtifactUpdate().GetArtifact().GetParts() {
			b.WriteString(p.GetText())
		}
		return "artifact:" + b.String()
	}
	return "unknown:" + m.String()
}

// states03 names 0.3's proto states as 0.3's JSON does, so that one
// expectation serves both of 0.3's streaming bindings.
var states03 = map[a2apb03.TaskState]string{
	a2apb03.TaskState_TASK_STATE_SUBMITTED: "submitted", a2apb03.TaskState_TASK_STATE_WORKING: "working",
	a2apb03.TaskState_TASK_STATE_COMPLETED: "completed", a2apb03.TaskState_TASK_STATE_FAILED: "failed",
	a2apb03.TaskState_TASK_STATE_CANCELLED: "canceled", a2apb03.TaskState_TASK_STATE_INPUT_REQUIRED: "input-required",
	a2apb03.TaskState_TASK_STATE_REJECTED: "rejected", a2apb03.TaskState_TASK_STATE_AUTH_REQUIRED: "auth-required",
}

func describe03(m *a2apb03.StreamResponse) string {
	switch {
	case m.GetTask() != nil:
		return "task:" + states03[m.GetTask().GetStatus().GetState()]
	case m.GetStatusUpdate() != nil:
		d := "status:" + states03[m.GetStatusUpdate().GetStatus().GetState()]
		if m.GetStatusUpdate().GetFinal() {
			d += "(final)"
		}
		return d
	case m.GetArtifactUpdate() != nil:
		var b strings.Builder
		for _, p := range m.GetArtifactUpdate().GetArtifact().GetParts() {
			b.WriteString(p.GetText())
		}
		return "artifact:" + b.String()
	}
	return "unknown:" + m.String()
}

// TestSubscribeWaitsForTheNextTurn: a subscription to a task that waits
// for input stays open (A2A 1.0 §3.1.6: it ends at a terminal state
// only), on every binding and in both versions: the task as it is, then
// the events of each turn that continues it, sent by other requests; a
// turn that asks again leaves it open, heartbeats flowing; the turn that
// completes the task ends it. A send's own stream still ends with its
// turn, at input-required.
func TestSubscribeWaitsForTheNextTurn(t *testing.T) {
	a := turnAgent(t)
	loadGlobal(t, h2cGlobal, minimal("heartbeat 40ms", "rest_path /a2a/rest", "grpc on"), map[string]any{"Agent": a.URL()})
	conn, err := grpc.NewClient(strings.TrimPrefix(base, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	g10, g03 := a2apb.NewA2AServiceClient(conn), a2apb03.NewA2AServiceClient(conn)
	v10 := []string{"task:TASK_STATE_INPUT_REQUIRED", "status:TASK_STATE_WORKING", "status:TASK_STATE_INPUT_REQUIRED",
		"status:TASK_STATE_WORKING", "artifact:Sunny in Paris", "status:TASK_STATE_COMPLETED"}
	// On a subscription only the terminal status is final: it goes on
	// past the interrupted one, and a 0.3 client stops at final (a send's
	// stream, which ends there, marks input-required final: see below).
	v03 := []string{"task:input-required", "status:working", "status:input-required",
		"status:working", "artifact:Sunny in Paris", "status:completed(final)"}

	for _, tc := range []struct {
		name string
		open func(t *testing.T, id string) subscription
		want []string
	}{
		{"JSON-RPC 1.0", func(t *testing.T, id string) subscription {
			s, pc := rpcSubscribe(t, "SubscribeToTask", id)
			return sseSubscription(t, s, pc, describe)
		}, v10},
		{"JSON-RPC 0.3", func(t *testing.T, id string) subscription {
			s, pc := rpcSubscribe(t, "tasks/resubscribe", id)
			return sseSubscription(t, s, pc, describe)
		}, v03},
		{"HTTP+JSON 1.0", func(t *testing.T, id string) subscription {
			req, _ := http.NewRequest("GET", restURL+"/tasks/"+id+":subscribe", nil)
			s, pc := openCounted(t, req)
			return sseSubscription(t, s, pc, describeREST)
		}, v10},
		{"HTTP+JSON 0.3", func(t *testing.T, id string) subscription {
			req, _ := http.NewRequest("GET", restURL+"/v1/tasks/"+id+":subscribe", nil)
			s, pc := openCounted(t, req)
			return sseSubscription(t, s, pc, describeREST03)
		}, v03},
		{"gRPC 1.0", func(t *testing.T, id string) subscription {
			st, err := g10.SubscribeToTask(grpcCtx(t), &a2apb.SubscribeToTaskRequest{Id: id})
			if err != nil {
				t.Fatal(err)
			}
			return grpcSubscription(t, st.Recv, describe10)
		}, v10},
		{"gRPC 0.3", func(t *testing.T, id string) subscription {
			ctx := metadata.NewOutgoingContext(grpcCtx(t), metadata.Pairs("a2a-version", "0.3"))
			st, err := g03.TaskSubscription(ctx, &a2apb03.TaskSubscriptionRequest{Name: "tasks/" + id})
			if err != nil {
				t.Fatal(err)
			}
			return grpcSubscription(t, st.Recv, describe03)
		}, v03},
	} {
		t.Run(tc.name, func(t *testing.T) {
			task := send10(t, rpcURL, msg10("weather?", "", ""))
			if task.Status.State != "TASK_STATE_INPUT_REQUIRED" {
				t.Fatalf("first turn: %s", task.Status.State)
			}
			sub := tc.open(t, task.ID)
			var seen []string
			read := func(n int) {
				t.Helper()
				for range n {
					d := sub.next()
					if d == "" {
						t.Fatalf("the subscription ended after %q", seen)
					}
					seen = append(seen, d)
				}
			}
			read(1)
			if sub.pings != nil {
				sub.pings.waitPings(t, 2)
			}
			if again := send10(t, rpcURL, msg10("again", task.ID, "")); again.Status.State != "TASK_STATE_INPUT_REQUIRED" {
				t.Fatalf("the turn that asks again: %s", again.Status.State)
			}
			read(2)
			if sub.pings != nil {
				// Still open and alive after the turn that asked again.
				sub.pings.waitPings(t, 2)
			}
			if done := send10(t, rpcURL, msg10("Paris", task.ID, "")); done.Status.State != "TASK_STATE_COMPLETED" {
				t.Fatalf("the last turn: %s", done.Status.State)
			}
			read(3)
			sub.ended()
			if strings.Join(seen, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("subscription:\n got  %q\n want %q", seen, tc.want)
			}
		})
	}

	t.Run("a send's stream ends with its turn", func(t *testing.T) {
		task := send10(t, rpcURL, msg10("weather?", "", ""))
		s := openStream(t, rpcURL, "1.0", "SendStreamingMessage", map[string]any{"message": msg10("again", task.ID, "")})
		readUntil(t, s, "status:TASK_STATE_INPUT_REQUIRED")
		s.ended(t)
		s = openStream(t, rpcURL, "", "message/stream", map[string]any{"message": msg03("again", task.ID)})
		readUntil(t, s, "status:input-required(final)")
		s.ended(t)
		req, _ := http.NewRequest("POST", restURL+"/message:stream", strings.NewReader(
			`{"message":{"messageId":"sub-rest-1","role":"ROLE_USER","taskId":"`+task.ID+`","parts":[{"text":"again"}]}}`))
		req.Header.Set("Content-Type", "application/json")
		rs := openSSE(t, req)
		for {
			f, ok := rs.next(t)
			if !ok {
				t.Fatal("message:stream ended before input-required")
			}
			if describeREST(t, f) == "status:TASK_STATE_INPUT_REQUIRED" {
				break
			}
		}
		rs.ended(t)
		if got := getTask10(t, rpcURL, task.ID); got.Status.State != "TASK_STATE_INPUT_REQUIRED" {
			t.Fatalf("the task after three turns that asked: %s", got.Status.State)
		}
	})
}

package a2aagent

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// fakeAgent is an A2A agent of one version whose answers each test
// scripts: rpc gets the decoded request and writes the answer.
type fakeAgent struct {
	t       *testing.T
	srv     *httptest.Server
	version protocol.Version
	codec   protocol.Codec
	streams bool
	rpc     func(w http.ResponseWriter, r *http.Request, req *protocol.Request)

	mu      sync.Mutex
	methods []string
	headers []http.Header
}

func newFake(t *testing.T, v protocol.Version, streams bool, rpc func(w http.ResponseWriter, r *http.Request, req *protocol.Request)) *fakeAgent {
	f := &fakeAgent{t: t, version: v, codec: protocol.NewCodec(v, protocol.Limits{}), streams: streams, rpc: rpc}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == DefaultCardPath {
			card := &protocol.AgentCard{Name: "Fake", Description: "Fake.", Version: "1", Streaming: streams,
				DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
				Skills:     []protocol.Skill{{ID: "s", Name: "S", Description: "S.", Tags: []string{"t"}}},
				Interfaces: []protocol.Interface{{URL: "http://" + r.Host + "/rpc", Binding: "JSONRPC", Version: v}}}
			w.Header().Set("Content-Type", "application/json")
			w.Write(protocol.RenderCard(card, protocol.CardHybrid))
			return
		}
		body, _ := io.ReadAll(r.Body)
		req, perr := protocol.DecodeRequestLimit(body, 0)
		if perr != nil {
			t.Errorf("the agent got a bad request: %v: %s", perr, body)
			return
		}
		f.mu.Lock()
		f.methods = append(f.methods, req.Method)
		f.headers = append(f.headers, r.Header.Clone())
		f.mu.Unlock()
		f.rpc(w, r, req)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAgent) Methods() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.methods...)
}

func (f *fakeAgent) result(w http.ResponseWriter, req *protocol.Request, result []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(protocol.AppendResponseEnd(append(protocol.AppendResultHead(nil, req.ID), result...)))
}

func (f *fakeAgent) rpcError(w http.ResponseWriter, req *protocol.Request, e *protocol.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(protocol.AppendResponseEnd(f.codec.AppendError(protocol.AppendErrorHead(nil, req.ID), e)))
}

func (f *fakeAgent) frames(w http.ResponseWriter, req *protocol.Request, evs ...protocol.Event) {
	w.Header().Set("Content-Type", "text/event-stream")
	for i := range evs {
		b := protocol.AppendResponseEnd(f.codec.AppendStreamResult(protocol.AppendResultHead(nil, req.ID), &evs[i]))
		w.Write(append(append([]byte("data: "), b...), "\n\n"...))
	}
}

func newAgent(t *testing.T, f *fakeAgent, mod ...func(*Config)) *Agent {
	t.Helper()
	cards, err := NewCards(CardsConfig{BaseURL: f.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Cards: cards, HTTPConfig: upstream.HTTPConfig{Timeout: 5 * time.Second}}
	for _, m := range mod {
		m(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// collect runs req and returns its events until the end.
func collect(t *testing.T, a *Agent, req *upstream.RunRequest) ([]upstream.Event, error) {
	t.Helper()
	s, err := a.Run(context.Background(), req)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var evs []upstream.Event
	for range 1000 {
		ev, err := s.Next()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	t.Fatal("the stream did not end")
	return nil, nil
}

func userReq(text, ref string) *upstream.RunRequest {
	return &upstream.RunRequest{TaskID: "mod-task", ContextID: "mod-ctx", Upstream: ref,
		Message: protocol.Message{ID: "m1", Role: protocol.RoleUser, Parts: []protocol.Part{{Kind: protocol.PartText, Text: text}}}}
}

func task(id string, st protocol.TaskState, artifacts ...string) *protocol.Task {
	t := &protocol.Task{ID: id, ContextID: "mod-ctx", Status: protocol.TaskStatus{State: st, Timestamp: time.Unix(1, 0).UTC()}}
	for _, a := range artifacts {
		t.Artifacts = append(t.Artifacts, protocol.Artifact{ID: a, Parts: []protocol.Part{{Kind: protocol.PartText, Text: "text of " + a}}})
	}
	return t
}

// describe renders events as kind:detail for comparison.
func describe(evs []upstream.Event) string {
	var out []string
	for _, ev := range evs {
		switch ev.Kind {
		case upstream.EventRef:
			out = append(out, "ref:"+ev.Ref)
		case upstream.EventChunk:
			s := "chunk:" + ev.Artifact.ID + "=" + ev.Artifact.Parts[0].Text
			if ev.Append {
				s += "+append"
			}
			if ev.LastChunk {
				s += "+last"
			}
			out = append(out, s)
		case upstream.EventStatus:
			s := "status:" + ev.State.String()
			if len(ev.Parts) > 0 {
				s += "=" + ev.Parts[0].Text
			}
			out = append(out, s)
		case upstream.EventParts:
			out = append(out, "parts:"+ev.Parts[0].Text)
		case upstream.EventMessage:
			out = append(out, "message")
		default:
			out = append(out, "other")
		}
	}
	return strings.Join(out, " | ")
}

// A streaming 1.0 agent: its task named first (a reference), the chunks
// with their flags, a working note, the end; the request carries the
// turn in the agent's version with A2A-Version and the extensions.
func TestRunStream(t *testing.T) {
	f := newFake(t, protocol.V10, true, nil)
	f.rpc = func(w http.ResponseWriter, r *http.Request, req *protocol.Request) {
		p, err := f.codec.DecodeSend(req.Params)
		if err != nil || p.Message.ContextID != "mod-ctx" || p.Message.TaskID != "" || p.Message.Parts[0].Text != "hi" {
			t.Errorf("send params %+v, %v", p, err)
		}
		st := func(s protocol.TaskState, note string) protocol.Event {
			u := &protocol.StatusUpdate{TaskID: "at", ContextID: "mod-ctx", Status: protocol.TaskStatus{State: s, Timestamp: time.Unix(1, 0).UTC()}}
			if note != "" {
				u.Status.Message = &protocol.Message{ID: "n", Role: protocol.RoleAgent, Parts: []protocol.Part{{Kind: protocol.PartText, Text: note}}}
			}
			return protocol.Event{Status: u}
		}
		chunk := func(text string, app, last bool) protocol.Event {
			return protocol.Event{Artifact: &protocol.ArtifactUpdate{TaskID: "at", ContextID: "mod-ctx", Append: app, LastChunk: last,
				Artifact: protocol.Artifact{ID: "a1", Parts: []protocol.Part{{Kind: protocol.PartText, Text: text}}}}}
		}
		f.frames(w, req, protocol.Event{Task: task("at", protocol.StateSubmitted)}, st(protocol.StateWorking, "thinking"),
			chunk("x", false, false), chunk("y", true, true), st(protocol.StateCompleted, ""))
	}
	a := newAgent(t, f)
	req := userReq("hi", "")
	req.Extensions = []string{"urn:a", "urn:b"}
	evs, err := collect(t, a, req)
	if err != nil {
		t.Fatal(err)
	}
	want := `ref:{"t":"at","c":"mod-ctx"} | status:working=thinking | chunk:a1=x | chunk:a1=y+append+last | ` +
		`ref:{"t":"at","c":"mod-ctx","n":1} | status:completed`
	if got := describe(evs); got != want {
		t.Fatalf("events\n%s\nwant\n%s", got, want)
	}
	h := f.headers[0]
	if f.Methods()[0] != "SendStreamingMessage" || h.Get("A2A-Version") != "1.0" || h.Get("A2A-Extensions") != "urn:a, urn:b" ||
		!strings.HasPrefix(h.Get("Accept"), "text/event-stream") {
		t.Fatalf("request %v %v", f.Methods(), h)
	}
}

// A 0.3 agent that does not stream: a blocking send answered before the
// task settled is polled with tasks/get; a second turn adds only the
// artifacts the earlier turns did not bring.
func TestRunBlockingPollsAndCountsArtifacts(t *testing.T) {
	f := newFake(t, protocol.V03, false, nil)
	var gets int
	f.rpc = func(w http.ResponseWriter, r *http.Request, req *protocol.Request) {
		switch req.Method {
		case "message/send":
			p, _ := f.codec.DecodeSend(req.Params)
			if !p.Blocking || p.Message.TaskID != "at" {
				t.Errorf("send params %+v", p)
			}
			f.result(w, req, f.codec.AppendSendResult(nil, &protocol.Event{Task: task("at", protocol.StateWorking, "old")}))
		case "tasks/get":
			gets++
			st := protocol.StateWorking
			if gets == 2 {
				st = protocol.StateInputRequired
			}
			f.result(w, req, f.codec.AppendTask(nil, task("at", st, "old", "new")))
		}
	}
	a := newAgent(t, f)
	evs, err := collect(t, a, userReq("more", `{"t":"at","c":"mod-ctx","n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `chunk:new=text of new+last | ref:{"t":"at","c":"mod-ctx","n":2,"s":6} | status:input-required`
	if got := describe(evs); got != want {
		t.Fatalf("events\n%s\nwant\n%s", got, want)
	}
	if m := strings.Join(f.Methods(), ","); m != "message/send,tasks/get,tasks/get" {
		t.Fatalf("methods %s", m)
	}
}

// A message instead of a task is the whole answer, marked as a direct
// one, by a blocking send's result and a stream's first frame alike.
func TestRunMessage(t *testing.T) {
	f := newFake(t, protocol.V10, false, nil)
	f.rpc = func(w http.ResponseWriter, r *http.Request, req *protocol.Request) {
		m := &protocol.Message{ID: "am", Role: protocol.RoleAgent, Parts: []protocol.Part{{Kind: protocol.PartText, Text: "hello"}}}
		f.result(w, req, f.codec.AppendSendResult(nil, &protocol.Event{Message: m}))
	}
	evs, err := collect(t, newAgent(t, f), userReq("hi", ""))
	if err != nil || describe(evs) != "message | parts:hello" || !evs[1].Whole {
		t.Fatalf("events %s, %v", describe(evs), err)
	}

	s := newFake(t, protocol.V03, true, nil)
	s.rpc = func(w http.ResponseWriter, r *http.Request, req *protocol.Request) {
		m := &protocol.Message{ID: "am", Role: protocol.RoleAgent, Parts: []protocol.Part{{Kind: protocol.PartText, Text: "streamed"}}}
		s.frames(w, req, protocol.Event{Message: m})
	}
	evs, err = collect(t, newAgent(t, s), userReq("hi", ""))
	if err != nil || describe(evs) != "message | parts:streamed" {
		t.Fatalf("stream events %s, %v", describe(evs), err)
	}
}

// The agent's errors: the ones about the request are refusals with their
// code, anything else, and anything that is not A2A, a plain failure.
func TestRunErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(f *fakeAgent, w http.ResponseWriter, req *protocol.Request)
		code   int // a refusal's; 0: a plain error
		bad    bool
	}{
		{"invalid params", func(f *fakeAgent, w http.ResponseWriter, req *protocol.Request) {
			f.rpcError(w, req, protocol.ErrInvalidParams("no"))
		}, protocol.CodeInvalidParams, false},
		{"task not found", func(f *fakeAgent, w http.ResponseWriter, req *protocol.Request) {
			f.rpcError(w, req, protocol.ErrTaskNotFound("x"))
		}, protocol.CodeTaskNotFound, false},
		{"internal", func(f *fakeAgent, w http.ResponseWriter, req *protocol.Request) {
			f.rpcError(w, req, &protocol.Error{Code: protocol.CodeInternal, Message: "secret"})
		}, 0, false},
		{"version not supported is the module's own business", func(f *fakeAgent, w http.ResponseWriter, req *protocol.Request) {
			f.rpcError(w, req, &protocol.Error{Code: protocol.CodeVersionNotSupported, Message: "v"})
		}, 0, false},
		{"not json", func(f *fakeAgent, w http.ResponseWriter, req *protocol.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte("{oops"))
		}, 0, true},
		{"not a2a", func(f *fakeAgent, w http.ResponseWriter, req *protocol.Request) {
			f.result(w, req, []byte(`{"task":{"id":"t"}}`))
		}, 0, true},
		{"html", func(f *fakeAgent, w http.ResponseWriter, req *protocol.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html>"))
		}, 0, true},
		{"500", func(f *fakeAgent, w http.ResponseWriter, req *protocol.Request) {
			http.Error(w, "down", http.StatusInternalServerError)
		}, 0, false},
		{"over the body bound", func(f *fakeAgent, w http.ResponseWriter, req *protocol.Request) {
			f.result(w, req, []byte(`"`+strings.Repeat("x", 2048)+`"`))
		}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, protocol.V10, false, nil)
			f.rpc = func(w http.ResponseWriter, r *http.Request, req *protocol.Request) { tc.answer(f, w, req) }
			_, err := collect(t, newAgent(t, f, func(c *Config) { c.MaxBodyBytes = 1024 }), userReq("hi", ""))
			r, refused := errors.AsType[*upstream.Refusal](err)
			switch {
			case err == nil:
				t.Fatal("no error")
			case tc.code != 0 && (!refused || r.Code != tc.code):
				t.Fatalf("err %v, want a refusal %d", err, tc.code)
			case tc.code == 0 && refused:
				t.Fatalf("err %v is a refusal", err)
			case tc.bad != errors.Is(err, upstream.ErrBadOutput):
				t.Fatalf("err %v: bad output %v", err, !tc.bad)
			}
			if tc.name == "500" {
				// The log names the interface the status came from.
				want := "upstream: the agent at " + f.srv.URL + "/rpc answered 500 Internal Server Error: \"down\\n\""
				if err.Error() != want {
					t.Fatalf("err %q, want %q", err, want)
				}
			}
		})
	}
}

// A stream that ends before the task settles is read on with tasks/get; a
// run aborted while the agent works tells it with CancelTask.
func TestRunStreamEndsEarlyAndAbort(t *testing.T) {
	f := newFake(t, protocol.V10, true, nil)
	hold := make(chan struct{})
	canceled := make(chan struct{}, 1)
	f.rpc = func(w http.ResponseWriter, r *http.Request, req *protocol.Request) {
		switch req.Method {
		case "SendStreamingMessage":
			p, _ := f.codec.DecodeSend(req.Params)
			f.frames(w, req, protocol.Event{Task: task("at", protocol.StateWorking)})
			if p.Message.Parts[0].Text == "hold" {
				http.NewResponseController(w).Flush()
				select {
				case <-hold:
				case <-r.Context().Done():
				}
			}
		case "GetTask":
			f.result(w, req, f.codec.AppendTask(nil, task("at", protocol.StateCompleted, "a")))
		case "CancelTask":
			f.result(w, req, f.codec.AppendTask(nil, task("at", protocol.StateCanceled)))
			canceled <- struct{}{}
		}
	}
	a := newAgent(t, f)
	evs, err := collect(t, a, userReq("short", ""))
	if err != nil || describe(evs) != `ref:{"t":"at","c":"mod-ctx"} | chunk:a=text of a+last | ref:{"t":"at","c":"mod-ctx","n":1} | status:completed` {
		t.Fatalf("events %s, %v", describe(evs), err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	s, err := a.Run(ctx, userReq("hold", ""))
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := s.Next(); err != nil || ev.Kind != upstream.EventRef {
		t.Fatalf("first event %+v, %v", ev, err)
	}
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, err := s.Next(); !errors.Is(err, context.Canceled) {
		t.Fatalf("after the abort: %v", err)
	}
	s.Close()
	select {
	case <-canceled:
	case <-time.After(5 * time.Second):
		t.Fatal("the agent was not told of the aborted run")
	}
	close(hold)
}

// The card: refreshed with its ETag, a bad card keeps the one before, an
// agent with no JSON-RPC interface is refused naming what it offers.
func TestCards(t *testing.T) {
	var mu sync.Mutex
	body := `{"name":"A","description":"D","version":"1","capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],` +
		`"skills":[{"id":"s","name":"S","description":"S.","tags":["t"]}],"supportedInterfaces":[{"url":"http://x.example/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`
	etag, conditional := `"1"`, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.Header.Get("If-None-Match") == etag {
			conditional++
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		w.Write([]byte(body))
	}))
	defer srv.Close()
	c, err := NewCards(CardsConfig{BaseURL: srv.URL, AllowOrigins: []string{"http://x.example"}})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	c.Subscribe(func(card *Card) { seen = append(seen, card.Card.Name) })
	if card, err := c.fetch(); err != nil || card.Interface.URL != "http://x.example/rpc" || card.Interface.Version != protocol.V10 {
		t.Fatalf("card %+v, %v", card, err)
	}
	if _, err := c.fetch(); err != nil || conditional != 1 {
		t.Fatalf("refresh: %v, conditional %d", err, conditional)
	}
	mu.Lock()
	body, etag = `{"name":""}`, `"2"`
	mu.Unlock()
	if _, err := c.fetch(); err == nil || c.Current().Card.Name != "A" {
		t.Fatalf("a bad card: %v, current %q", err, c.Current().Card.Name)
	}
	mu.Lock()
	body = strings.Replace(strings.Replace(body0(), `"JSONRPC"`, `"GRPC"`, 1), `"name":"A"`, `"name":"B"`, 1)
	mu.Unlock()
	if _, err := c.fetch(); err == nil || !strings.Contains(err.Error(), "no JSON-RPC interface of A2A 0.3 or 1.0 (it offers GRPC 1.0)") {
		t.Fatalf("a gRPC-only agent: %v", err)
	}
	mu.Lock()
	body = `{"name":"` + strings.Repeat("x", DefaultMaxCardBytes) + `"}`
	mu.Unlock()
	if _, err := c.fetch(); err == nil || !strings.Contains(err.Error(), "the card is over 1048576 bytes") || c.Current().Card.Name != "A" {
		t.Fatalf("a card over the bound: %v", err)
	}
	if strings.Join(seen, ",") != "A" {
		t.Fatalf("subscribers saw %v", seen)
	}
}

func body0() string {
	return `{"name":"A","description":"D","version":"1","capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],` +
		`"skills":[{"id":"s","name":"S","description":"S.","tags":["t"]}],"supportedInterfaces":[{"url":"http://x.example/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`
}

// A run aborted before the agent named its task: the send is read on
// until it does, and the agent is then told to cancel that task.
func TestRunAbortedBeforeTheAgentNamesItsTask(t *testing.T) {
	f := newFake(t, protocol.V03, true, nil)
	canceled := make(chan string, 1)
	f.rpc = func(w http.ResponseWriter, r *http.Request, req *protocol.Request) {
		switch req.Method {
		case "message/stream":
			time.Sleep(100 * time.Millisecond) // the abort comes before the first frame
			f.frames(w, req, protocol.Event{Task: task("late", protocol.StateWorking)})
			http.NewResponseController(w).Flush()
			<-r.Context().Done()
		case "tasks/cancel":
			p, _ := f.codec.DecodeTaskID(req.Params)
			f.result(w, req, f.codec.AppendTask(nil, task(p.ID, protocol.StateCanceled)))
			canceled <- p.ID
		}
	}
	a := newAgent(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	s, err := a.Run(ctx, userReq("slow", ""))
	if err == nil {
		for range 10 {
			if _, err = s.Next(); err != nil {
				break
			}
		}
		s.Close()
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the aborted run ended with %v", err)
	}
	select {
	case id := <-canceled:
		if id != "late" {
			t.Fatalf("canceled %q", id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the agent was not told of the run aborted before it named its task")
	}
}

package integration

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	a2apb03 "github.com/a2aproject/a2a-go/a2apb"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// What the official A2A conformance kit and @a2a-js/sdk expect of the
// JSON-RPC endpoint, the Agent Card and the placeholders, through Caddy.

// rpcBody is a JSON-RPC request with a fresh numeric id, and that id.
func rpcBody(method, params string) (string, int64) {
	id := rpcIDs.Add(1)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params), id
}

// errorAnswer is the exact JSON-RPC error response to request id.
func errorAnswer(id any, errObj string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"error":%s}`, id, errObj)
}

// TestRPCTrailingSlash: a client whose base URL is the card's interface
// URL resolves "/" against it: POST /a2a/ is the JSON-RPC endpoint, in
// both versions, and the card still names /a2a. A gate written path /a2a
// /a2a/* covers both; /a2a// and /a2a/x still go to the next handler.
func TestRPCTrailingSlash(t *testing.T) {
	a := textAgent(t)
	load(t, `http://:9080 {
	@a2a path /a2a /a2a/*
	basic_auth @a2a {
		alice {{.Alice}}
	}
	route {
		a2a {
			upstream {{.Agent}}`+skillBlock+`
		}
		respond "passed on" 404
	}
}
`, map[string]any{"Agent": a.URL(), "Alice": aliceHash})
	alice := withAuth("alice", "alice-pw")
	body, _ := rpcBody("SendMessage", `{"message":{"messageId":"ts-1","role":"ROLE_USER","parts":[{"text":"x"}]}}`)
	for _, path := range []string{"/a2a", "/a2a/"} {
		if ans := post(t, base+path, "1.0", body); ans.Status != http.StatusUnauthorized {
			t.Fatalf("POST %s without credentials: %d %s", path, ans.Status, ans.Body)
		}
	}
	if n := len(a.Calls()); n != 0 {
		t.Fatalf("unauthenticated posts called the agent %d times", n)
	}

	task := send10(t, base+"/a2a/", msg10("slash", "", ""), alice)
	if task.Status.State != "TASK_STATE_COMPLETED" || task.text() != "Hello, slash" {
		t.Fatalf("1.0 send at /a2a/: %s %q", task.Status.State, task.text())
	}
	if got := getTask10(t, base+"/a2a", task.ID, alice); got.ID != task.ID {
		t.Fatalf("the task made at /a2a/ is not the one /a2a reads: %+v", got)
	}
	task03 := send03(t, base+"/a2a/", msg03("slash", ""), alice)
	if task03.Status.State != "completed" || task03.text() != "Hello, slash" {
		t.Fatalf("0.3 send at /a2a/: %s %q", task03.Status.State, task03.text())
	}
	e := call(t, base+"/a2a/", "", "tasks/get", map[string]any{"id": "nope"}, alice)
	if string(e.Body) != errorAnswer(string(e.ID), `{"code":-32001,"message":"Task not found"}`) {
		t.Fatalf("0.3 tasks/get at /a2a/: %s", e.Body)
	}

	for _, path := range []string{"/a2a//", "/a2a/x"} {
		ans := post(t, base+path, "1.0", body, alice)
		if ans.Status != http.StatusNotFound || string(ans.Body) != "passed on" {
			t.Errorf("POST %s: %d %q, want the next handler's 404", path, ans.Status, ans.Body)
		}
	}
	if n := len(a.Calls()); n != 2 {
		t.Errorf("the agent was called %d times, want twice (the sends at /a2a/)", n)
	}

	_, card := fetchCard(t, base+"/.well-known/agent-card.json")
	if card.URL != base+"/a2a" || len(card.SupportedInterfaces) != 2 {
		t.Fatalf("card: url %q interfaces %+v", card.URL, card.SupportedInterfaces)
	}
	for _, in := range card.SupportedInterfaces {
		if in.URL != base+"/a2a" {
			t.Errorf("interface %+v, want %s/a2a", in, base)
		}
	}
}

// TestStreamErrorsBeforeFirstEvent: an error a streaming call meets
// before its first event is the plain JSON-RPC error response (200,
// application/json, nothing else), for SendStreamingMessage,
// SubscribeToTask and 0.3's message/stream alike; 0.3's tasks/resubscribe
// keeps its one SSE data frame (a2a-go v0.3 reads nothing else there).
// HTTP+JSON answers the same errors as google.rpc.Status and gRPC as a
// status, never a stream; no refused send leaves a task behind.
func TestStreamErrorsBeforeFirstEvent(t *testing.T) {
	a := textAgent(t)
	loadGlobal(t, h2cGlobal, `http://:9080 {
	a2a {
		upstream {{.Agent}}
		rest_path /a2a/rest
		grpc on
		store memory {
			share streams-on
		}
		owner {http.request.header.X-Caller}`+skillBlock+`
	}
}
http://:9081 {
	a2a {
		upstream {{.Agent}}
		rest_path /a2a/rest
		grpc on
		streaming off
		store memory {
			share streams-off
		}
		owner {http.request.header.X-Caller}`+skillBlock+`
	}
}
`, map[string]any{"Agent": a.URL()})
	sam := withHeader("X-Caller", "sam")
	done := send10(t, rpcURL, msg10("done", "", ""), sam)
	on, off := base+"/a2a", base2+"/a2a"
	const (
		info       = `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":`
		unsup      = info + `"UNSUPPORTED_OPERATION","domain":"a2a-protocol.org"}`
		badMessage = `{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[` +
			`{"field":"message.messageId","description":"is required"},{"field":"message.role","description":"is required"},` +
			`{"field":"message.parts","description":"must contain at least one part"}]}`
		notFound   = `{"code":-32001,"message":"Task not found","data":[` + info + `"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"nope"}}]}`
		terminal   = `{"code":-32004,"message":"Task is in a terminal state; there is nothing to subscribe to","data":[` + unsup + `]}`
		streamsOff = `{"code":-32004,"message":"Streaming is not supported by this agent","data":[` + unsup + `]}`
	)
	msg10JSON := `{"message":{"messageId":"se-1","role":"ROLE_USER","parts":[{"text":"x"}]}}`
	msg03JSON := `{"message":{"kind":"message","messageId":"se-2","role":"user","parts":[{"kind":"text","text":"x"}]}}`
	answers := map[string]*rpcError{}
	for _, tc := range []struct {
		name, url, version, method, params, err string
		sse                                     bool
	}{
		{"subscribe, terminal task", on, "1.0", "SubscribeToTask", `{"id":"` + done.ID + `"}`, terminal, false},
		{"subscribe, unknown task", on, "1.0", "SubscribeToTask", `{"id":"nope"}`, notFound, false},
		{"subscribe, bad params", on, "1.0", "SubscribeToTask", `{}`,
			`{"code":-32602,"message":"Invalid parameters: id: is required","data":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"id","description":"is required"}]}]}`, false},
		{"subscribe, streaming off", off, "1.0", "SubscribeToTask", `{"id":"nope"}`, streamsOff, false},
		{"streaming send, bad params", on, "1.0", "SendStreamingMessage", `{"message":{}}`,
			`{"code":-32602,"message":"Invalid parameters: message.messageId: is required","data":[` + badMessage + `]}`, false},
		{"streaming send, unknown task", on, "1.0", "SendStreamingMessage", `{"message":{"messageId":"se-3","role":"ROLE_USER","taskId":"nope","parts":[{"text":"x"}]}}`, notFound, false},
		{"streaming send, terminal task", on, "1.0", "SendStreamingMessage", `{"message":{"messageId":"se-4","role":"ROLE_USER","taskId":"` + done.ID + `","parts":[{"text":"x"}]}}`,
			`{"code":-32004,"message":"Task is in a terminal state and cannot accept messages","data":[` + unsup + `]}`, false},
		{"streaming send, streaming off", off, "1.0", "SendStreamingMessage", msg10JSON, streamsOff, false},
		{"0.3 message/stream, bad params", on, "", "message/stream", `{"message":{}}`, `{"code":-32602,"message":"Invalid parameters: message.messageId: is required"}`, false},
		{"0.3 message/stream, unknown task", on, "", "message/stream",
			`{"message":{"kind":"message","messageId":"se-5","role":"user","taskId":"nope","parts":[{"kind":"text","text":"x"}]}}`, `{"code":-32001,"message":"Task not found"}`, false},
		{"0.3 message/stream, streaming off", off, "", "message/stream", msg03JSON, `{"code":-32004,"message":"Streaming is not supported by this agent"}`, false},
		{"0.3 tasks/resubscribe, terminal task", on, "", "tasks/resubscribe", `{"id":"` + done.ID + `"}`,
			`{"code":-32004,"message":"Task is in a terminal state; there is nothing to subscribe to"}`, true},
		{"0.3 tasks/resubscribe, unknown task", on, "", "tasks/resubscribe", `{"id":"nope"}`, `{"code":-32001,"message":"Task not found"}`, true},
		{"0.3 tasks/resubscribe, bad params", on, "", "tasks/resubscribe", `{}`, `{"code":-32602,"message":"Invalid parameters: id: is required"}`, true},
		{"0.3 tasks/resubscribe, streaming off", off, "", "tasks/resubscribe", `{"id":"nope"}`, `{"code":-32004,"message":"Streaming is not supported by this agent"}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, id := rpcBody(tc.method, tc.params)
			ans := post(t, tc.url, tc.version, body, sam, withHeader("Accept", "text/event-stream"))
			want, ct := errorAnswer(id, tc.err), "application/json"
			if tc.sse {
				want, ct = "data: "+want+"\n\n", "text/event-stream"
			}
			if ans.Status != 200 || ans.Header.Get("Content-Type") != ct || string(ans.Body) != want {
				t.Fatalf("got %d %s\n%s\nwant %s\n%s", ans.Status, ans.Header.Get("Content-Type"), ans.Body, ct, want)
			}
			if !tc.sse {
				answers[tc.name] = ans.Error
			}
		})
	}

	// HTTP+JSON: the same errors, each its google.rpc.Status.
	for _, tc := range []struct {
		method, url, body string
		code              int
		status, same      string
	}{
		{"GET", restURL + "/tasks/" + done.ID + ":subscribe", "", 400, "FAILED_PRECONDITION", "subscribe, terminal task"},
		{"GET", restURL + "/tasks/nope:subscribe", "", 404, "NOT_FOUND", "subscribe, unknown task"},
		{"POST", restURL + "/message:stream", `{"message":{}}`, 400, "INVALID_ARGUMENT", "streaming send, bad params"},
		{"GET", base2 + "/a2a/rest/tasks/nope:subscribe", "", 400, "FAILED_PRECONDITION", "subscribe, streaming off"},
		{"POST", base2 + "/a2a/rest/message:stream", msg10JSON, 400, "FAILED_PRECONDITION", "streaming send, streaming off"},
		{"POST", base2 + "/a2a/rest/v1/message:stream", `{"message":{"messageId":"se-6","role":"ROLE_USER","content":[{"text":"x"}]}}`, 400, "FAILED_PRECONDITION", "streaming send, streaming off"},
	} {
		st := restDo(t, tc.method, tc.url, tc.body, sam).fails(t, tc.code, tc.status)
		if e := answers[tc.same]; e == nil {
			t.Errorf("%s %s: no JSON-RPC answer %q to compare with", tc.method, tc.url, tc.same)
		} else {
			sameError(t, st, e)
		}
	}

	// gRPC: the call's status, with no message before it.
	dial := func(addr string) *grpc.ClientConn {
		conn, err := grpc.NewClient(strings.TrimPrefix(addr, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	gOn, gOff := dial(base), dial(base2)
	ctx := grpcCtx(t, "x-caller", "sam")
	ctx03 := metadata.NewOutgoingContext(grpcCtx(t), metadata.Pairs("a2a-version", "0.3", "x-caller", "sam"))
	first10 := func(s grpc.ServerStreamingClient[a2apb.StreamResponse], err error) error {
		if err != nil {
			return err
		}
		m, err := s.Recv()
		if m != nil {
			t.Errorf("a refused stream sent %v", m)
		}
		return err
	}
	first03 := func(s grpc.ServerStreamingClient[a2apb03.StreamResponse], err error) error {
		if err != nil {
			return err
		}
		m, err := s.Recv()
		if m != nil {
			t.Errorf("a refused 0.3 stream sent %v", m)
		}
		return err
	}
	c10, c10off := a2apb.NewA2AServiceClient(gOn), a2apb.NewA2AServiceClient(gOff)
	part := []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "x"}}}
	grpcFails(t, first10(c10.SubscribeToTask(ctx, &a2apb.SubscribeToTaskRequest{Id: done.ID})), codes.FailedPrecondition, "UNSUPPORTED_OPERATION")
	grpcFails(t, first10(c10.SubscribeToTask(ctx, &a2apb.SubscribeToTaskRequest{Id: "nope"})), codes.NotFound, "TASK_NOT_FOUND")
	grpcFails(t, first10(c10.SendStreamingMessage(ctx, &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "se-7", Role: a2apb.Role_ROLE_USER}})), codes.InvalidArgument, "")
	grpcFails(t, first10(c10off.SendStreamingMessage(ctx, &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "se-8", Role: a2apb.Role_ROLE_USER, Parts: part}})), codes.FailedPrecondition, "UNSUPPORTED_OPERATION")
	grpcFails(t, first10(c10off.SubscribeToTask(ctx, &a2apb.SubscribeToTaskRequest{Id: "nope"})), codes.FailedPrecondition, "UNSUPPORTED_OPERATION")
	c03, c03off := a2apb03.NewA2AServiceClient(gOn), a2apb03.NewA2AServiceClient(gOff)
	grpcFails(t, first03(c03.TaskSubscription(ctx03, &a2apb03.TaskSubscriptionRequest{Name: "tasks/nope"})), codes.NotFound, "TASK_NOT_FOUND")
	grpcFails(t, first03(c03off.SendStreamingMessage(ctx03, &a2apb03.SendMessageRequest{
		Request: &a2apb03.Message{MessageId: "se-9", Role: a2apb03.Role_ROLE_USER, Parts: []*a2apb03.Part{{Part: &a2apb03.Part_Text{Text: "x"}}}},
	})), codes.FailedPrecondition, "UNSUPPORTED_OPERATION")

	// Nothing was created: sam holds the one task made on purpose.
	for _, url := range []string{on, off} {
		var list struct {
			Tasks []wireTask `json:"tasks"`
		}
		call(t, url, "1.0", "ListTasks", map[string]any{}, sam).ok(t, &list)
		if want := map[string]int{on: 1, off: 0}[url]; len(list.Tasks) != want {
			t.Errorf("%s lists %d tasks, want %d", url, len(list.Tasks), want)
		}
	}
	if n := len(a.Calls()); n != 1 {
		t.Errorf("the agent was called %d times, want once (the task made on purpose)", n)
	}
}

// TestRequestsWithoutID: a request without id is refused (notifications
// are not served), but its own faults come first, as JSON-RPC clients
// and the conformance kit expect: an unknown method is -32601, params its
// method cannot take -32602; an otherwise valid one, or one whose jsonrpc
// is not "2.0", -32600; each with id null, in both versions. None runs.
func TestRequestsWithoutID(t *testing.T) {
	a := textAgent(t)
	load(t, minimal("owner {http.request.header.X-Caller}"), map[string]any{"Agent": a.URL()})
	nia := withHeader("X-Caller", "nia")
	const (
		valid10 = `"method":"SendMessage","params":{"message":{"messageId":"n-1","role":"ROLE_USER","parts":[{"text":"x"}]}}`
		valid03 = `"method":"message/send","params":{"message":{"kind":"message","messageId":"n-2","role":"user","parts":[{"kind":"text","text":"x"}]}}`
		notes   = `{"code":-32600,"message":"Request has no id: notifications are not supported"}`
		jsonrpc = `{"code":-32600,"message":"jsonrpc must be \"2.0\""}`
	)
	for _, tc := range []struct {
		name, version, body, err string
	}{
		{"1.0 unknown method", "1.0", `{"jsonrpc":"2.0","method":"NoSuchMethod","params":{}}`,
			`{"code":-32601,"message":"Method not found","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"METHOD_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"method":"NoSuchMethod"}}]}`},
		{"0.3 unknown method", "", `{"jsonrpc":"2.0","method":"tasks/nothing","params":{}}`, `{"code":-32601,"message":"Method not found"}`},
		{"1.0 bad params", "1.0", `{"jsonrpc":"2.0","method":"GetTask","params":{"historyLength":1}}`,
			`{"code":-32602,"message":"Invalid parameters: id: is required","data":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"id","description":"is required"}]}]}`},
		{"0.3 bad params", "", `{"jsonrpc":"2.0","method":"message/send","params":{"":"not_a_dict"}}`, `{"code":-32602,"message":"Invalid parameters: message: is required"}`},
		{"1.0 valid", "1.0", `{"jsonrpc":"2.0",` + valid10 + `}`, notes},
		{"0.3 valid", "", `{"jsonrpc":"2.0",` + valid03 + `}`, notes},
		{"1.0 jsonrpc aaa", "1.0", `{"jsonrpc":"aaa",` + valid10 + `}`, jsonrpc},
		{"0.3 jsonrpc aaa", "", `{"jsonrpc":"aaa","method":"message/send","params":{"":"not_a_dict"}}`, jsonrpc},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ans := post(t, rpcURL, tc.version, tc.body, nia)
			if want := errorAnswer("null", tc.err); ans.Status != 200 || ans.Header.Get("Content-Type") != "application/json" || string(ans.Body) != want {
				t.Fatalf("got %d %s\n%s\nwant\n%s", ans.Status, ans.Header.Get("Content-Type"), ans.Body, want)
			}
		})
	}
	var list struct {
		Tasks []wireTask `json:"tasks"`
	}
	call(t, rpcURL, "1.0", "ListTasks", map[string]any{}, nia).ok(t, &list)
	if len(list.Tasks) != 0 || len(a.Calls()) != 0 {
		t.Fatalf("requests without id ran: %d tasks, %d agent calls", len(list.Tasks), len(a.Calls()))
	}
}

// TestV03PartNeedsKind: kind is 0.3's part discriminator; a part without
// it ({"type":…,"text":…} is some other format) is -32602 naming the
// member, for message/send and message/stream, and reaches no agent.
func TestV03PartNeedsKind(t *testing.T) {
	a := textAgent(t)
	load(t, minimal(), map[string]any{"Agent": a.URL()})
	for _, method := range []string{"message/send", "message/stream"} {
		body, id := rpcBody(method, `{"message":{"kind":"message","messageId":"k-1","role":"user","parts":[{"type":"unsupported_type","text":"x"}]}}`)
		ans := post(t, rpcURL, "", body, withHeader("Accept", "text/event-stream"))
		want := errorAnswer(id, `{"code":-32602,"message":"Invalid parameters: message.parts[0].kind: is required"}`)
		if ans.Status != 200 || ans.Header.Get("Content-Type") != "application/json" || string(ans.Body) != want {
			t.Errorf("%s: got %d %s\n%s\nwant\n%s", method, ans.Status, ans.Header.Get("Content-Type"), ans.Body, want)
		}
	}
	if n := len(a.Calls()); n != 0 {
		t.Fatalf("kind-less parts reached the agent %d times", n)
	}
	// The same message with its kind runs.
	if task := send03(t, rpcURL, msg03("x", "")); task.text() != "Hello, x" {
		t.Fatalf("control send: %+v", task)
	}
}

// TestCardLastModified: the card says when it began to be served
// (Last-Modified, an HTTP date, next to its ETag), and If-Modified-Since
// revalidates it as If-None-Match does: 304 with no body for that date or
// a later one, the card for an earlier one; If-None-Match, when sent,
// decides alone (RFC 9110 §13.2.2).
func TestCardLastModified(t *testing.T) {
	a := textAgent(t)
	before := time.Now().UTC().Truncate(time.Second)
	load(t, minimal(), map[string]any{"Agent": a.URL()})
	cardURL := base + "/.well-known/agent-card.json"
	// The date is the second after the load, sent from then on.
	resp, card, lm := cardWithDate(t, cardURL)
	etag := resp.Header.Get("ETag")
	mod, err := http.ParseTime(lm)
	if err != nil || mod.Format(http.TimeFormat) != lm || !mod.After(before) || mod.After(time.Now()) || etag == "" {
		t.Fatalf("Last-Modified %q (%v), ETag %q: want an HTTP date from the load, beside the ETag", lm, err, etag)
	}
	for _, tc := range []struct {
		name string
		opts []reqOpt
		want int
	}{
		{"the same date", []reqOpt{withHeader("If-Modified-Since", lm)}, 304},
		{"a later date, now", []reqOpt{withHeader("If-Modified-Since", time.Now().UTC().Format(http.TimeFormat))}, 304},
		{"a date in the future", []reqOpt{withHeader("If-Modified-Since", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat))}, 200},
		{"an earlier date", []reqOpt{withHeader("If-Modified-Since", mod.Add(-time.Second).Format(http.TimeFormat))}, 200},
		{"not a date", []reqOpt{withHeader("If-Modified-Since", "yesterday")}, 200},
		{"the ETag", []reqOpt{withHeader("If-None-Match", etag)}, 304},
		{"another ETag and the date", []reqOpt{withHeader("If-None-Match", `"other"`), withHeader("If-Modified-Since", lm)}, 200},
		{"the 1.0 variant", []reqOpt{withHeader("If-Modified-Since", lm), withHeader("A2A-Version", "1.0")}, 304},
	} {
		for _, method := range []string{"GET", "HEAD"} {
			r, body := get(t, method, cardURL, tc.opts...)
			if r.StatusCode != tc.want || r.Header.Get("Last-Modified") != lm {
				t.Errorf("%s, %s: %d Last-Modified %q, want %d %q", tc.name, method, r.StatusCode, r.Header.Get("Last-Modified"), tc.want, lm)
			}
			if wantBody := tc.want == 200 && method == "GET"; wantBody != (len(body) > 0) {
				t.Errorf("%s, %s: %d with a body of %d bytes", tc.name, method, r.StatusCode, len(body))
			}
			if tc.want == 200 && method == "GET" && len(tc.opts) == 1 && !bytes.Equal(body, card) {
				t.Errorf("%s: another card than the first GET's:\n%s\n%s", tc.name, body, card)
			}
		}
	}

	// A reload that changes the card, within the second or not: the old
	// date never keeps a client on the old card.
	load(t, minimal("version 9.9.9"), map[string]any{"Agent": a.URL()})
	r, body := get(t, "GET", cardURL, withHeader("If-Modified-Since", lm))
	if r.StatusCode != 200 || !bytes.Contains(body, []byte(`"version":"9.9.9"`)) {
		t.Fatalf("the changed card with the old date: %d %s", r.StatusCode, body)
	}
	if _, _, lm2 := cardWithDate(t, cardURL); lm2 == lm {
		t.Fatalf("the changed card has the old card's Last-Modified %q", lm)
	}
}

// cardWithDate GETs the card until it carries Last-Modified (from the
// second after its load on), within 3s.
func cardWithDate(t *testing.T, cardURL string) (*http.Response, []byte, string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		resp, card := get(t, "GET", cardURL)
		if lm := resp.Header.Get("Last-Modified"); lm != "" {
			return resp, card, lm
		}
		if time.Now().After(deadline) {
			t.Fatal("the card carries no Last-Modified 3s after its load")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPlaceholderHeaders: the {http.a2a.*} placeholders are set before the
// answer is written, so that a deferred response header carries their
// values, on every binding, for an answer, a stream and a refusal alike.
func TestPlaceholderHeaders(t *testing.T) {
	a := textAgent(t)
	loadGlobal(t, h2cGlobal, `http://:9080 {
	header >X-A2A-Method {http.a2a.method}
	header >X-A2A-Version {http.a2a.version}
	header >X-A2A-Binding {http.a2a.binding}
	header >X-A2A-Task {http.a2a.task_id}
	header >X-A2A-Context {http.a2a.context_id}
	header >X-A2A-State {http.a2a.task_state}
	header >X-A2A-Error {http.a2a.error_code}
	a2a {
		upstream {{.Agent}}
		rest_path /a2a/rest
		grpc on`+skillBlock+`
	}
}
`, map[string]any{"Agent": a.URL()})
	names := []string{"Method", "Version", "Binding", "Task", "Context", "State", "Error"}
	check := func(what string, h http.Header, want ...string) {
		t.Helper()
		for i, n := range names {
			if got := h.Get("X-A2A-" + n); got != want[i] {
				t.Errorf("%s: X-A2A-%s %q, want %q", what, n, got, want[i])
			}
		}
	}

	ans := call(t, rpcURL, "1.0", "SendMessage", map[string]any{"message": msg10("Ada", "", "")})
	var res struct {
		Task wireTask `json:"task"`
	}
	ans.ok(t, &res)
	id, ctx := res.Task.ID, res.Task.ContextID
	check("JSON-RPC send", ans.Header, "SendMessage", "1.0", "jsonrpc", id, ctx, "completed", "")
	ans = call(t, rpcURL, "", "tasks/get", map[string]any{"id": id})
	ans.ok(t, nil)
	check("JSON-RPC 0.3 get", ans.Header, "GetTask", "0.3", "jsonrpc", id, ctx, "completed", "")
	// With no task in the answer, task_id and context_id are known and
	// empty, as the others: a header gets nothing, not the placeholder.
	const noTask, noContext = "", ""
	ans = call(t, rpcURL, "", "tasks/get", map[string]any{"id": "nope"})
	ans.fails(t, -32001)
	check("JSON-RPC refusal", ans.Header, "GetTask", "0.3", "jsonrpc", noTask, noContext, "", "-32001")
	ans = call(t, rpcURL, "1.0", "SubscribeToTask", map[string]any{"id": id})
	streamError(t, ans, -32004)
	check("JSON-RPC refused stream", ans.Header, "SubscribeToTask", "1.0", "jsonrpc", noTask, noContext, "", "-32004")

	r := restDo(t, "GET", restURL+"/tasks/"+id, "")
	r.ok(t, nil)
	check("HTTP+JSON get", r.Header, "GetTask", "1.0", "rest", id, ctx, "completed", "")
	r = restDo(t, "POST", restURL+"/tasks/"+id+":cancel", "")
	r.fails(t, 400, "FAILED_PRECONDITION")
	check("HTTP+JSON refusal", r.Header, "CancelTask", "1.0", "rest", noTask, noContext, "", "-32002")

	s := openStream(t, rpcURL, "1.0", "SendStreamingMessage", map[string]any{"message": msg10("Bo", "", "")})
	sid := openingTaskID(t, s)
	readUntil(t, s, "status:TASK_STATE_COMPLETED")
	if got := s.resp.Header.Get("X-A2A-State"); got != "submitted" && got != "working" {
		t.Errorf("stream: X-A2A-State %q, want the state it opened in", got)
	}
	check("JSON-RPC stream", s.resp.Header, "SendStreamingMessage", "1.0", "jsonrpc", sid, s.resp.Header.Get("X-A2A-Context"), s.resp.Header.Get("X-A2A-State"), "")
	if s.resp.Header.Get("X-A2A-Context") == "" {
		t.Error("stream: no X-A2A-Context")
	}

	var md metadata.MD
	_, err := grpcClient(t).GetTask(grpcCtx(t), &a2apb.GetTaskRequest{Id: id}, grpc.Header(&md))
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	for k, v := range md {
		h[http.CanonicalHeaderKey(k)] = v
	}
	check("gRPC get", h, "GetTask", "1.0", "grpc", id, ctx, "completed", "")
}

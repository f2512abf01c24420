package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The HTTP+JSON binding (rest_path) beside JSON-RPC on one mount: the
// same service, so a task made over one binding reads the same, byte for
// byte, over the other, and every error carries the same message and
// details (ErrorInfo, BadRequest), with the HTTP status of A2A 1.0.1.

const (
	rpcURL  = base + "/a2a"
	restURL = base + "/a2a/rest"
)

// restAnswer is one HTTP+JSON exchange.
type restAnswer struct {
	Status int
	Header http.Header
	Body   []byte
}

// restDo sends method to url with body ("" for none; a body is sent as
// application/json).
func restDo(t *testing.T, method, url, body string, opts ...reqOpt) restAnswer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, o := range opts {
		o(req)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return restAnswer{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// ok asserts 200 application/json and decodes the body into v (nil: not).
func (a restAnswer) ok(t *testing.T, v any) {
	t.Helper()
	if a.Status != 200 || a.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("want 200 JSON, got %d %s: %s", a.Status, a.Header.Get("Content-Type"), a.Body)
	}
	if v != nil {
		if err := json.Unmarshal(a.Body, v); err != nil {
			t.Fatalf("%v: %s", err, a.Body)
		}
	}
}

// restStatus is the google.rpc.Status body of an HTTP+JSON error.
type restStatus struct {
	Code    int             `json:"code"`
	Status  string          `json:"status"`
	Message string          `json:"message"`
	Details json.RawMessage `json:"details"`
}

// fails asserts an error answer with HTTP status code and canonical
// status, its body code the same HTTP status.
func (a restAnswer) fails(t *testing.T, code int, status string) restStatus {
	t.Helper()
	var env struct {
		Error *restStatus `json:"error"`
	}
	if err := json.Unmarshal(a.Body, &env); err != nil || env.Error == nil {
		t.Fatalf("want a google.rpc.Status body, got %d: %s", a.Status, a.Body)
	}
	if a.Status != code || env.Error.Code != code || env.Error.Status != status || a.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("want %d %s, got HTTP %d %s: %s", code, status, a.Status, a.Header.Get("Content-Type"), a.Body)
	}
	return *env.Error
}

// sameError asserts that the HTTP+JSON error st says what the JSON-RPC
// error e says: the message, and details identical to data.
func sameError(t *testing.T, st restStatus, e *rpcError) {
	t.Helper()
	if st.Message != e.Message || !bytes.Equal(st.Details, e.Data) {
		t.Fatalf("HTTP+JSON error\n  %s %s\nJSON-RPC error\n  %s %s", st.Message, st.Details, e.Message, e.Data)
	}
}

// streamError is the JSON-RPC error a streaming call found before its
// first event: a plain JSON-RPC answer (200, application/json, the error
// and no result), not a stream, as clients that look at the media type
// (the official conformance kit, @a2a-js/sdk) read it.
func streamError(t *testing.T, a rpcAnswer, code int) *rpcError {
	t.Helper()
	if ct := a.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("want a plain JSON-RPC error %d, got %d %s: %s", code, a.Status, ct, a.Body)
	}
	return a.fails(t, code)
}

// restConfig is a mount with both bindings, the owner from X-Caller.
func restConfig(extra ...string) string {
	return minimal(append([]string{"rest_path /a2a/rest", "owner {http.request.header.X-Caller}"}, extra...)...)
}

// TestRESTEquivalence runs the operations over HTTP+JSON and checks each
// against JSON-RPC on the same mount.
func TestRESTEquivalence(t *testing.T) {
	a := textAgent(t)
	load(t, restConfig(), map[string]any{"Agent": a.URL()})
	dave := withHeader("X-Caller", "dave")

	// A blocking send over HTTP+JSON answers {"task":…}; the task reads
	// the same over both bindings.
	var sent struct {
		Task json.RawMessage `json:"task"`
	}
	sendBody := `{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"Ada"}]}}`
	restDo(t, "POST", restURL+"/message:send", sendBody, dave).ok(t, &sent)
	var task wireTask
	if err := json.Unmarshal(sent.Task, &task); err != nil || task.Status.State != "TASK_STATE_COMPLETED" || task.text() != "Hello, Ada" {
		t.Fatalf("send over HTTP+JSON: %s", sent.Task)
	}
	byREST := restDo(t, "GET", restURL+"/tasks/"+task.ID, "", dave)
	byREST.ok(t, nil)
	byRPC := call(t, rpcURL, "1.0", "GetTask", map[string]any{"id": task.ID}, dave)
	byRPC.ok(t, nil)
	if !bytes.Equal(byREST.Body, byRPC.Result) || !bytes.Equal(byREST.Body, sent.Task) {
		t.Fatalf("one task, three readings:\nREST get %s\nRPC get  %s\nREST send %s", byREST.Body, byRPC.Result, sent.Task)
	}
	// historyLength in the query, as in params.
	h0 := restDo(t, "GET", restURL+"/tasks/"+task.ID+"?historyLength=0", "", dave)
	r0 := call(t, rpcURL, "1.0", "GetTask", map[string]any{"id": task.ID, "historyLength": 0}, dave)
	r0.ok(t, nil)
	if h0.ok(t, nil); !bytes.Equal(h0.Body, r0.Result) || bytes.Contains(h0.Body, []byte(`"history"`)) {
		t.Fatalf("historyLength=0:\nREST %s\nRPC  %s", h0.Body, r0.Result)
	}
	s0 := restDo(t, "GET", restURL+"/tasks/"+task.ID+"?history_length=0", "", dave)
	if s0.ok(t, nil); !bytes.Equal(s0.Body, h0.Body) {
		t.Fatalf("history_length=0: %s, want %s", s0.Body, h0.Body)
	}

	// A task made over JSON-RPC is the caller's over HTTP+JSON too, and
	// no one else's.
	var viaRPC struct {
		Task wireTask `json:"task"`
	}
	call(t, rpcURL, "1.0", "SendMessage", map[string]any{"message": msg10("Bob", "", "")}, dave).ok(t, &viaRPC)
	restDo(t, "GET", restURL+"/tasks/"+viaRPC.Task.ID, "", dave).ok(t, nil)
	notYours := restDo(t, "GET", restURL+"/tasks/"+viaRPC.Task.ID, "", withHeader("X-Caller", "eve")).fails(t, 404, "NOT_FOUND")
	sameError(t, notYours, call(t, rpcURL, "1.0", "GetTask", map[string]any{"id": viaRPC.Task.ID}, withHeader("X-Caller", "eve")).fails(t, -32001))
	if !strings.Contains(string(notYours.Details), `"reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"`) {
		t.Fatalf("details: %s", notYours.Details)
	}

	// ListTasks: the query is the params; pages are the same pages.
	for _, q := range []struct {
		query  string
		params map[string]any
	}{
		{"", map[string]any{}},
		{"?pageSize=1", map[string]any{"pageSize": 1}},
		{"?pageSize=1&includeArtifacts=true&status=TASK_STATE_COMPLETED", map[string]any{"pageSize": 1, "includeArtifacts": true, "status": "TASK_STATE_COMPLETED"}},
		{"?contextId=" + task.ContextID, map[string]any{"contextId": task.ContextID}},
	} {
		lr := restDo(t, "GET", restURL+"/tasks"+q.query, "", dave)
		lr.ok(t, nil)
		rr := call(t, rpcURL, "1.0", "ListTasks", q.params, dave)
		rr.ok(t, nil)
		if !bytes.Equal(lr.Body, rr.Result) {
			t.Fatalf("ListTasks %q:\nREST %s\nRPC  %s", q.query, lr.Body, rr.Result)
		}
	}
	var page struct {
		Tasks         []wireTask `json:"tasks"`
		NextPageToken string     `json:"nextPageToken"`
	}
	restDo(t, "GET", restURL+"/tasks?pageSize=1", "", dave).ok(t, &page)
	if len(page.Tasks) != 1 || page.Tasks[0].ID != viaRPC.Task.ID || page.NextPageToken == "" {
		t.Fatalf("first page: %+v", page)
	}
	var page2 struct {
		Tasks []wireTask `json:"tasks"`
	}
	restDo(t, "GET", restURL+"/tasks?pageSize=1&pageToken="+page.NextPageToken, "", dave).ok(t, &page2)
	if len(page2.Tasks) != 1 || page2.Tasks[0].ID != task.ID {
		t.Fatalf("second page: %+v", page2)
	}

	// Every error class, the same error as JSON-RPC's.
	bad := restDo(t, "GET", restURL+"/tasks?pageSize=0", "", dave).fails(t, 400, "INVALID_ARGUMENT")
	sameError(t, bad, call(t, rpcURL, "1.0", "ListTasks", map[string]any{"pageSize": 0}, dave).fails(t, -32602))
	if !strings.Contains(string(bad.Details), `"fieldViolations":[{"field":"pageSize"`) {
		t.Fatalf("details: %s", bad.Details)
	}
	badState := restDo(t, "GET", restURL+"/tasks?status=DONE", "", dave).fails(t, 400, "INVALID_ARGUMENT")
	sameError(t, badState, call(t, rpcURL, "1.0", "ListTasks", map[string]any{"status": "DONE"}, dave).fails(t, -32602))
	// A name that is neither spelling (A2A's camelCase, the proto's
	// snake_case) is refused.
	restDo(t, "GET", restURL+"/tasks?pagesize=3", "", dave).fails(t, 400, "INVALID_ARGUMENT")
	noParts := `{"message":{"messageId":"m-2","role":"ROLE_USER","parts":[]}}`
	sameError(t, restDo(t, "POST", restURL+"/message:send", noParts, dave).fails(t, 400, "INVALID_ARGUMENT"),
		post(t, rpcURL, "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":`+noParts+`}`, dave).fails(t, -32602))
	sameError(t, restDo(t, "POST", restURL+"/message:send", `{"message":`, dave).fails(t, 400, "INVALID_ARGUMENT"),
		post(t, rpcURL, "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":}`, dave).fails(t, -32700))
	done := restDo(t, "POST", restURL+"/tasks/"+task.ID+":cancel", "", dave).fails(t, 400, "FAILED_PRECONDITION")
	sameError(t, done, call(t, rpcURL, "1.0", "CancelTask", map[string]any{"id": task.ID}, dave).fails(t, -32002))
	sub := restDo(t, "GET", restURL+"/tasks/"+task.ID+":subscribe", "", dave).fails(t, 400, "FAILED_PRECONDITION")
	sameError(t, sub, streamError(t, call(t, rpcURL, "1.0", "SubscribeToTask", map[string]any{"id": task.ID}, dave), -32004))
	push := restDo(t, "GET", restURL+"/tasks/"+task.ID+"/pushNotificationConfigs", "", dave).fails(t, 400, "FAILED_PRECONDITION")
	if !strings.Contains(string(push.Details), `"reason":"PUSH_NOTIFICATION_NOT_SUPPORTED"`) {
		t.Fatalf("push: %s", push.Details)
	}
	restDo(t, "POST", restURL+"/tasks/"+task.ID+"/pushNotificationConfigs", `{"url":"https://example.com/hook"}`, dave).fails(t, 400, "FAILED_PRECONDITION")
	restDo(t, "DELETE", restURL+"/tasks/"+task.ID+"/pushNotificationConfigs/c1", "", dave).fails(t, 400, "FAILED_PRECONDITION")
	card := restDo(t, "GET", restURL+"/extendedAgentCard", "", dave).fails(t, 400, "FAILED_PRECONDITION")
	sameError(t, card, call(t, rpcURL, "1.0", "GetExtendedAgentCard", map[string]any{}, dave).fails(t, -32004))
	ver := restDo(t, "GET", restURL+"/tasks/"+task.ID, "", dave, withHeader("A2A-Version", "0.3")).fails(t, 400, "FAILED_PRECONDITION")
	if !strings.Contains(string(ver.Details), `"reason":"VERSION_NOT_SUPPORTED"`) || !strings.Contains(string(ver.Details), `"supportedVersions":"1.0"`) {
		t.Fatalf("version: %s", ver.Details)
	}
	restDo(t, "GET", restURL+"/tasks/"+task.ID+"?A2A-Version=1.0", "", dave).ok(t, nil)
}

// TestRESTEnvelope: what is refused before an operation runs, each a
// google.rpc.Status body.
func TestRESTEnvelope(t *testing.T) {
	a := textAgent(t)
	load(t, restConfig("max_request_body 2KB"), map[string]any{"Agent": a.URL()})
	send := `{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"x"}]}}`

	nf := restDo(t, "GET", restURL+"/nothing", "").fails(t, 404, "NOT_FOUND")
	if !strings.Contains(nf.Message, "/a2a/rest/nothing") {
		t.Fatalf("404 message: %s", nf.Message)
	}
	restDo(t, "GET", restURL+"/v1/tasks", "").fails(t, 404, "NOT_FOUND")
	wrong := restDo(t, "GET", restURL+"/message:send", "")
	wrong.fails(t, 405, "UNIMPLEMENTED")
	if got := wrong.Header.Get("Allow"); got != "POST, OPTIONS" {
		t.Fatalf("Allow %q", got)
	}
	for path, want := range map[string]string{"/tasks/x:subscribe": "GET, POST, OPTIONS", "/tasks/x/pushNotificationConfigs/c": "GET, DELETE, OPTIONS", "/tasks/x": "GET, OPTIONS"} {
		if got := restDo(t, "PUT", restURL+path, "").Header.Get("Allow"); got != want {
			t.Fatalf("PUT %s: Allow %q, want %q", path, got, want)
		}
	}
	big := restDo(t, "POST", restURL+"/message:send", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"`+strings.Repeat("x", 3000)+`"}]}}`)
	big.fails(t, 413, "INVALID_ARGUMENT")
	for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded"} {
		ans := restDo(t, "POST", restURL+"/message:send", "", func(r *http.Request) {
			r.Body = io.NopCloser(strings.NewReader(send))
			r.ContentLength = int64(len(send))
			if ct != "" {
				r.Header.Set("Content-Type", ct)
			}
		})
		ans.fails(t, 415, "INVALID_ARGUMENT")
	}
	restDo(t, "POST", restURL+"/message:send", send, withHeader("Content-Type", "application/a2a+json")).ok(t, nil)
	if n := len(a.Calls()); n != 1 {
		t.Fatalf("the agent was called %d times, want once (only the accepted send)", n)
	}
	// A cross-site POST from a browser is refused before it runs.
	ans := restDo(t, "POST", restURL+"/tasks/x:cancel", "", withHeader("Sec-Fetch-Site", "cross-site"))
	if ans.Status != 403 {
		t.Fatalf("cross-site cancel: %d %s", ans.Status, ans.Body)
	}
	// The paths JSON-RPC and the card answer are not the binding's.
	if r, _ := get(t, "GET", base+"/a2a/restless"); r.StatusCode == 404 && r.Header.Get("Content-Type") == "application/json" {
		t.Fatal("a path beside rest_path is answered by the binding")
	}
}

// TestRESTStreams: message:stream frames are StreamResponses; a
// subscription over HTTP+JSON and one over JSON-RPC, both resumed after the
// same Last-Event-ID, get the same frames: same ids, and each REST frame
// the JSON-RPC frame's result.
func TestRESTStreams(t *testing.T) {
	gate := make(chan struct{})
	a := streamAgent(t, gate)
	load(t, restConfig(), map[string]any{"Agent": a.URL()})
	frank := withHeader("X-Caller", "frank")

	req, _ := http.NewRequest("POST", restURL+"/message:stream", strings.NewReader(`{"message":{"messageId":"s-1","role":"ROLE_USER","parts":[{"text":"go"}]}}`))
	req.Header.Set("Content-Type", "application/json")
	frank(req)
	s := openSSE(t, req)
	first, _ := s.next(t)
	var head struct {
		Task wireTask `json:"task"`
	}
	if err := json.Unmarshal(first.Data, &head); err != nil || head.Task.ID == "" || first.ID == "" {
		t.Fatalf("first frame: id %q %s", first.ID, first.Data)
	}
	var seen []sseFrame
	for {
		f, _ := s.next(t)
		seen = append(seen, f)
		if strings.Contains(string(f.Data), "chunk one") {
			break
		}
	}
	after := seen[0].ID
	id := head.Task.ID
	rreq, _ := http.NewRequest("GET", restURL+"/tasks/"+id+":subscribe", nil)
	rreq.Header.Set("Last-Event-ID", after)
	frank(rreq)
	rs := openSSE(t, rreq)
	js := openStream(t, rpcURL, "1.0", "SubscribeToTask", map[string]any{"id": id}, withHeader("Last-Event-ID", after), frank)
	close(gate)
	var restFrames, rpcFrames []sseFrame
	for f, ok := rs.next(t); ok; f, ok = rs.next(t) {
		restFrames = append(restFrames, f)
	}
	for f, ok := js.next(t); ok; f, ok = js.next(t) {
		rpcFrames = append(rpcFrames, f)
	}
	if len(restFrames) < 3 || len(restFrames) != len(rpcFrames) {
		t.Fatalf("%d frames over HTTP+JSON, %d over JSON-RPC", len(restFrames), len(rpcFrames))
	}
	for i := range restFrames {
		var env struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(rpcFrames[i].Data, &env); err != nil {
			t.Fatal(err)
		}
		// The subscription's first frame is the task as it is now
		// (no SSE id); the replayed events keep their ids.
		if restFrames[i].ID != rpcFrames[i].ID || !bytes.Equal(restFrames[i].Data, env.Result) {
			t.Fatalf("frame %d:\nREST id %q %s\nRPC  id %q %s", i, restFrames[i].ID, restFrames[i].Data, rpcFrames[i].ID, env.Result)
		}
	}
	last := string(restFrames[len(restFrames)-1].Data)
	if !strings.Contains(last, `"statusUpdate"`) || !strings.Contains(last, "TASK_STATE_COMPLETED") {
		t.Fatalf("last frame: %s", last)
	}
	// The resume is the task as it is now, which holds chunk one, then
	// only the events after it: applied in order, each chunk once.
	if first := string(restFrames[0].Data); !strings.Contains(first, `{"task":`) || !strings.Contains(first, "chunk one") {
		t.Fatalf("the subscription's first frame: %s", first)
	}
	var replayed []string
	for _, f := range restFrames[1:] {
		replayed = append(replayed, string(f.Data))
	}
	if all := strings.Join(replayed, "\n"); strings.Count(all, "chunk one") != 0 || strings.Count(all, "chunk two") != 1 {
		t.Fatalf("the events after the task, resumed after %s:\n%s", after, all)
	}
	// The stream that made the task ends the same way.
	for f, ok := s.next(t); ok; f, ok = s.next(t) {
		last = string(f.Data)
	}
	if !strings.Contains(last, "TASK_STATE_COMPLETED") {
		t.Fatalf("message:stream ended with %s", last)
	}
}

// TestRESTCancelAndMultiTurn: a cancel with no body (as a2a-go sends it)
// aborts the agent's call; an input-required task continues over
// HTTP+JSON.
func TestRESTCancelAndMultiTurn(t *testing.T) {
	slow := slowAgent(t)
	load(t, restConfig(), map[string]any{"Agent": slow.URL()})
	var res struct {
		Task wireTask `json:"task"`
	}
	restDo(t, "POST", restURL+"/message:send", `{"message":{"messageId":"c-1","role":"ROLE_USER","parts":[{"text":"long"}]},"configuration":{"returnImmediately":true}}`).ok(t, &res)
	if res.Task.Status.State != "TASK_STATE_SUBMITTED" && res.Task.Status.State != "TASK_STATE_WORKING" {
		t.Fatalf("non-blocking send: %s", res.Task.Status.State)
	}
	slow.next(t)
	var canceled wireTask
	restDo(t, "POST", restURL+"/tasks/"+res.Task.ID+":cancel", "").ok(t, &canceled)
	if canceled.Status.State != "TASK_STATE_CANCELED" {
		t.Fatalf("cancel: %s", canceled.Status.State)
	}
	select {
	case id := <-slow.aborted:
		if id != res.Task.ID {
			t.Fatalf("aborted %s", id)
		}
	case <-timeout():
		t.Fatal("the agent's call was not aborted")
	}
	// A body with metadata is fine too; the task is done by now.
	restDo(t, "POST", restURL+"/tasks/"+res.Task.ID+":cancel", `{"metadata":{"why":"again"}}`).fails(t, 400, "FAILED_PRECONDITION")
	restDo(t, "POST", restURL+"/tasks/"+res.Task.ID+":cancel", `[1]`).fails(t, 400, "INVALID_ARGUMENT")

	ask := askAgent(t)
	load(t, restConfig(), map[string]any{"Agent": ask.URL()})
	var first struct {
		Task wireTask `json:"task"`
	}
	restDo(t, "POST", restURL+"/message:send", `{"message":{"messageId":"a-1","role":"ROLE_USER","parts":[{"text":"weather?"}]}}`).ok(t, &first)
	if first.Task.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("first turn: %s", first.Task.Status.State)
	}
	var second struct {
		Task wireTask `json:"task"`
	}
	restDo(t, "POST", restURL+"/message:send", fmt.Sprintf(`{"message":{"messageId":"a-2","role":"ROLE_USER","taskId":%q,"parts":[{"text":"Oslo"}]}}`, first.Task.ID)).ok(t, &second)
	if second.Task.ID != first.Task.ID || second.Task.Status.State != "TASK_STATE_COMPLETED" || second.Task.text() != "Sunny in Oslo" {
		t.Fatalf("second turn: %+v", second.Task)
	}
}

// TestRESTCard: the card lists the HTTP+JSON interface after each
// version's JSON-RPC one, under a stripped prefix too.
func TestRESTCard(t *testing.T) {
	a := textAgent(t)
	load(t, `http://:9080 {
	handle_path /agent/* {
		a2a {
			upstream {{.Agent}}`+skillBlock+`
			rest_path /a2a/rest
		}
	}
}
`, map[string]any{"Agent": a.URL()})
	_, body := get(t, "GET", base+"/agent/.well-known/agent-card.json")
	want := `"supportedInterfaces":[{"url":"http://127.0.0.1:9080/agent/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"},` +
		`{"url":"http://127.0.0.1:9080/agent/a2a/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"},` +
		`{"url":"http://127.0.0.1:9080/agent/a2a","protocolBinding":"JSONRPC","protocolVersion":"0.3"},` +
		`{"url":"http://127.0.0.1:9080/agent/a2a/rest","protocolBinding":"HTTP+JSON","protocolVersion":"0.3"}]`
	if !strings.Contains(string(body), want) || !strings.Contains(string(body), `"additionalInterfaces":[{"url":"http://127.0.0.1:9080/agent/a2a","transport":"JSONRPC"},{"url":"http://127.0.0.1:9080/agent/a2a/rest","transport":"HTTP+JSON"}]`) {
		t.Fatalf("card:\n%s\nwant %s", body, want)
	}
	restDo(t, "POST", base+"/agent/a2a/rest/message:send", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}`).ok(t, nil)
}

// TestRESTGated: basic_auth on the paths the README gates covers the
// binding: no credentials, 401; another user's task, 404.
func TestRESTGated(t *testing.T) {
	a := textAgent(t)
	load(t, `http://:9080 {
	@rpc path /a2a /a2a/*
	basic_auth @rpc {
		alice {{.Alice}}
		bob {{.Bob}}
	}
	a2a {
		upstream {{.Agent}}`+skillBlock+`
		rest_path /a2a/rest
	}
}
`, map[string]any{"Agent": a.URL(), "Alice": aliceHash, "Bob": bobHash})
	send := `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}`
	if ans := restDo(t, "POST", restURL+"/message:send", send); ans.Status != 401 {
		t.Fatalf("no credentials: %d %s", ans.Status, ans.Body)
	}
	if n := len(a.Calls()); n != 0 {
		t.Fatalf("the agent was called %d times", n)
	}
	var res struct {
		Task wireTask `json:"task"`
	}
	restDo(t, "POST", restURL+"/message:send", send, withAuth("alice", "alice-pw")).ok(t, &res)
	restDo(t, "GET", restURL+"/tasks/"+res.Task.ID, "", withAuth("bob", "bob-pw")).fails(t, 404, "NOT_FOUND")
	restDo(t, "GET", restURL+"/tasks/"+res.Task.ID, "", withAuth("alice", "alice-pw")).ok(t, nil)
	if r, _ := get(t, "GET", base+"/.well-known/agent-card.json"); r.StatusCode != 200 {
		t.Fatalf("the card is gated: %d", r.StatusCode)
	}
}

// TestRESTV03: 0.3's HTTP+JSON routes under /v1, in the 0.3 proto's
// ProtoJSON (what a2a-go's and a2a-js's 0.3 REST clients send): the same
// tasks as JSON-RPC 0.3 reads, the proto's spellings, blocking only when
// asked (the proto's bool), final on status updates.
func TestRESTV03(t *testing.T) {
	slow := slowAgent(t)
	a := textAgent(t)
	load(t, `http://:9080 {
	a2a {
		upstream {{.Agent}}`+skillBlock+`
		rest_path /a2a/rest
	}
}
http://:9081 {
	a2a {
		upstream {{.Slow}}`+skillBlock+`
		rest_path /a2a/rest
	}
}
`, map[string]any{"Agent": a.URL(), "Slow": slow.URL()})
	v1 := restURL + "/v1"
	var sent struct {
		Task struct {
			ID     string `json:"id"`
			Status struct {
				State string `json:"state"`
			} `json:"status"`
			History []struct {
				Role    string            `json:"role"`
				Content []json.RawMessage `json:"content"`
				Kind    string            `json:"kind"`
			} `json:"history"`
			Artifacts []struct {
				Parts []json.RawMessage `json:"parts"`
			} `json:"artifacts"`
			Kind string `json:"kind"`
		} `json:"task"`
	}
	restDo(t, "POST", v1+"/message:send", `{"message":{"messageId":"v03-1","role":"ROLE_USER","content":[{"text":"Ada"},{"data":{"data":{"n":1}}}]},"configuration":{"blocking":true}}`).ok(t, &sent)
	task := sent.Task
	if task.Status.State != "TASK_STATE_COMPLETED" || task.Kind != "" || len(task.History) == 0 ||
		task.History[0].Role != "ROLE_USER" || len(task.History[0].Content) != 2 || string(task.History[0].Content[1]) != `{"data":{"data":{"n":1}}}` ||
		len(task.Artifacts) != 1 || !strings.HasPrefix(string(task.Artifacts[0].Parts[0]), `{"text":"Hello, `) {
		t.Fatalf("0.3 proto send: %+v", sent)
	}
	got := restDo(t, "GET", v1+"/tasks/"+task.ID+"?historyLength=0", "")
	got.ok(t, nil)
	if !strings.HasPrefix(string(got.Body), `{"id":"`+task.ID+`"`) || strings.Contains(string(got.Body), `"kind"`) || strings.Contains(string(got.Body), `"history"`) {
		t.Fatalf("0.3 get: %s", got.Body)
	}
	// The proto's field name reads the same (gRPC-to-HTTP transcoding's
	// spelling, which the official kit's 0.3 client sends).
	snake := restDo(t, "GET", v1+"/tasks/"+task.ID+"?history_length=0", "")
	if snake.ok(t, nil); !bytes.Equal(snake.Body, got.Body) {
		t.Fatalf("0.3 get with history_length: %s, want %s", snake.Body, got.Body)
	}
	// The same task over JSON-RPC 0.3: the same id, state and text.
	var rpcTask wireTask
	call(t, rpcURL, "", "tasks/get", map[string]any{"id": task.ID}).ok(t, &rpcTask)
	if rpcTask.Status.State != "completed" || !strings.HasPrefix(rpcTask.text(), "Hello, ") {
		t.Fatalf("the task over JSON-RPC 0.3: %+v", rpcTask)
	}
	// The 0.3 routes are 0.3's: A2A-Version 1.0 there is refused, and so is
	// the 1.0 shape of a message (parts, not content).
	ver := restDo(t, "GET", v1+"/tasks/"+task.ID, "", withHeader("A2A-Version", "1.0")).fails(t, 400, "FAILED_PRECONDITION")
	if !strings.Contains(string(ver.Details), `"supportedVersions":"0.3"`) {
		t.Fatalf("version: %s", ver.Details)
	}
	bad := restDo(t, "POST", v1+"/message:send", `{"message":{"messageId":"v03-2","role":"ROLE_USER","parts":[{"text":"x"}]}}`).fails(t, 400, "INVALID_ARGUMENT")
	if !strings.Contains(string(bad.Details), `"field":"message.content"`) {
		t.Fatalf("1.0 parts on the 0.3 route: %s", bad.Details)
	}
	restDo(t, "GET", v1+"/card", "").fails(t, 400, "FAILED_PRECONDITION")

	// No blocking in the configuration: the proto's false, the task comes
	// back at once; cancel it and read TASK_STATE_CANCELLED, then a stream
	// of a finished task is refused.
	slowV1 := base2 + "/a2a/rest/v1"
	var res struct {
		Task struct {
			ID     string `json:"id"`
			Status struct {
				State string `json:"state"`
			} `json:"status"`
		} `json:"task"`
	}
	restDo(t, "POST", slowV1+"/message:send", `{"message":{"messageId":"v03-3","role":"ROLE_USER","content":[{"text":"long"}]}}`).ok(t, &res)
	if res.Task.Status.State != "TASK_STATE_SUBMITTED" {
		t.Fatalf("a send without blocking: %s", res.Task.Status.State)
	}
	slow.next(t)
	canceled := restDo(t, "POST", slowV1+"/tasks/"+res.Task.ID+":cancel", "")
	canceled.ok(t, nil)
	if !strings.Contains(string(canceled.Body), `"state":"TASK_STATE_CANCELLED"`) {
		t.Fatalf("cancel: %s", canceled.Body)
	}
	restDo(t, "GET", slowV1+"/tasks/"+res.Task.ID+":subscribe", "").fails(t, 400, "FAILED_PRECONDITION")
}

// TestRESTV03Stream: a 0.3 stream's frames are proto StreamResponses, the
// last status update final.
func TestRESTV03Stream(t *testing.T) {
	a := streamAgent(t, nil)
	load(t, restConfig(), map[string]any{"Agent": a.URL()})
	req, _ := http.NewRequest("POST", restURL+"/v1/message:stream", strings.NewReader(`{"message":{"messageId":"v03-s","role":"ROLE_USER","content":[{"text":"go"}]}}`))
	req.Header.Set("Content-Type", "application/json")
	s := openSSE(t, req)
	var frames []string
	for f, ok := s.next(t); ok; f, ok = s.next(t) {
		frames = append(frames, string(f.Data))
	}
	if len(frames) < 3 || !strings.HasPrefix(frames[0], `{"task":{`) {
		t.Fatalf("frames: %v", frames)
	}
	last := frames[len(frames)-1]
	if !strings.HasPrefix(last, `{"statusUpdate":{`) || !strings.Contains(last, `"state":"TASK_STATE_COMPLETED"`) || !strings.Contains(last, `"final":true`) {
		t.Fatalf("last frame: %s", last)
	}
	var chunks int
	for _, f := range frames {
		if strings.HasPrefix(f, `{"artifactUpdate":{`) && strings.Contains(f, `"parts":[{"text":"chunk`) {
			chunks++
		}
		if strings.Contains(f, `"kind"`) {
			t.Fatalf("a 0.3 proto frame with kind: %s", f)
		}
	}
	if chunks != 2 {
		t.Fatalf("%d chunks: %v", chunks, frames)
	}
}

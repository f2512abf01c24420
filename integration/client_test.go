package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// client talks to Caddy; no redirects, a bound on every call.
var client = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// rpcAnswer is one JSON-RPC exchange as seen by the client.
type rpcAnswer struct {
	Status int
	Header http.Header
	Body   []byte
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// reqOpt adjusts a request before it is sent.
type reqOpt func(*http.Request)

func withHeader(k, v string) reqOpt { return func(r *http.Request) { r.Header.Set(k, v) } }

func withAuth(user, pw string) reqOpt { return func(r *http.Request) { r.SetBasicAuth(user, pw) } }

var rpcIDs atomic.Int64

// call POSTs a JSON-RPC request for method with params to url. version is
// the A2A-Version header ("" sends none).
func call(t *testing.T, url, version, method string, params any, opts ...reqOpt) rpcAnswer {
	t.Helper()
	p, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, rpcIDs.Add(1), method, p)
	return post(t, url, version, body, opts...)
}

// post sends a raw JSON-RPC body and decodes the answer if it is JSON.
func post(t *testing.T, url, version, body string, opts ...reqOpt) rpcAnswer {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	for _, o := range opts {
		o(req)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	var a rpcAnswer
	a.Status, a.Header = resp.StatusCode, resp.Header
	a.Body, err = io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(a.Body, &a); err != nil {
			t.Fatalf("answer is not JSON: %v\n%s", err, a.Body)
		}
	}
	return a
}

// ok asserts a successful JSON-RPC answer and decodes its result into v.
func (a rpcAnswer) ok(t *testing.T, v any) {
	t.Helper()
	if a.Status != 200 || a.Error != nil || a.Result == nil {
		t.Fatalf("want a result, got HTTP %d: %s", a.Status, a.Body)
	}
	if v != nil {
		if err := json.Unmarshal(a.Result, v); err != nil {
			t.Fatalf("result: %v\n%s", err, a.Result)
		}
	}
}

// fails asserts a JSON-RPC error with code on HTTP 200.
func (a rpcAnswer) fails(t *testing.T, code int) *rpcError {
	t.Helper()
	if a.Status != 200 || a.Error == nil {
		t.Fatalf("want error %d, got HTTP %d: %s", code, a.Status, a.Body)
	}
	if a.Error.Code != code {
		t.Fatalf("error code = %d, want %d: %s", a.Error.Code, code, a.Body)
	}
	if a.Result != nil {
		t.Fatalf("error answer also has a result: %s", a.Body)
	}
	return a.Error
}

// Wire shapes, loose enough for both versions (0.3 "kind", 1.0 ProtoJSON).
type (
	wirePart struct {
		Kind string          `json:"kind"`
		Text string          `json:"text"`
		Data json.RawMessage `json:"data"`
	}
	wireMessage struct {
		Kind      string     `json:"kind"`
		MessageID string     `json:"messageId"`
		Role      string     `json:"role"`
		TaskID    string     `json:"taskId"`
		ContextID string     `json:"contextId"`
		Parts     []wirePart `json:"parts"`
	}
	wireArtifact struct {
		ArtifactID string     `json:"artifactId"`
		Name       string     `json:"name"`
		Parts      []wirePart `json:"parts"`
	}
	wireTask struct {
		Kind      string `json:"kind"`
		ID        string `json:"id"`
		ContextID string `json:"contextId"`
		Status    struct {
			State     string       `json:"state"`
			Message   *wireMessage `json:"message"`
			Timestamp string       `json:"timestamp"`
		} `json:"status"`
		Artifacts []wireArtifact `json:"artifacts"`
		History   []wireMessage  `json:"history"`
	}
)

// text joins the text parts of every artifact.
func (t *wireTask) text() string {
	var b strings.Builder
	for _, a := range t.Artifacts {
		for _, p := range a.Parts {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// statusText joins the text parts of the status message.
func (t *wireTask) statusText() string {
	if t.Status.Message == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range t.Status.Message.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

var msgIDs atomic.Int64

// msg10 is a 1.0 user message; taskID and contextID may be "".
func msg10(text, taskID, contextID string) map[string]any {
	m := map[string]any{
		"messageId": fmt.Sprintf("m10-%d", msgIDs.Add(1)),
		"role":      "ROLE_USER",
		"parts":     []any{map[string]any{"text": text}},
	}
	if taskID != "" {
		m["taskId"] = taskID
	}
	if contextID != "" {
		m["contextId"] = contextID
	}
	return m
}

// msg03 is a 0.3 user message; taskID may be "".
func msg03(text, taskID string) map[string]any {
	m := map[string]any{
		"kind":      "message",
		"messageId": fmt.Sprintf("m03-%d", msgIDs.Add(1)),
		"role":      "user",
		"parts":     []any{map[string]any{"kind": "text", "text": text}},
	}
	if taskID != "" {
		m["taskId"] = taskID
	}
	return m
}

// send10 sends a blocking SendMessage and returns the task.
func send10(t *testing.T, url string, msg map[string]any, opts ...reqOpt) wireTask {
	t.Helper()
	var res struct {
		Task *wireTask `json:"task"`
	}
	call(t, url, "1.0", "SendMessage", map[string]any{"message": msg}, opts...).ok(t, &res)
	if res.Task == nil {
		t.Fatal("SendMessage answered no task")
	}
	return *res.Task
}

// send03 sends a blocking message/send and returns the task.
func send03(t *testing.T, url string, msg map[string]any, opts ...reqOpt) wireTask {
	t.Helper()
	var task wireTask
	call(t, url, "", "message/send", map[string]any{"message": msg}, opts...).ok(t, &task)
	if task.Kind != "task" {
		t.Fatalf("message/send answered kind %q, want task", task.Kind)
	}
	return task
}

// getTask10 fetches a task with GetTask.
func getTask10(t *testing.T, url, id string, opts ...reqOpt) wireTask {
	t.Helper()
	var task wireTask
	call(t, url, "1.0", "GetTask", map[string]any{"id": id}, opts...).ok(t, &task)
	return task
}

// waitState polls GetTask (1.0) until the task is in state.
func waitState(t *testing.T, url, id, state string, opts ...reqOpt) wireTask {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		task := getTask10(t, url, id, opts...)
		if task.Status.State == state {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %s, want %s", id, task.Status.State, state)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// get fetches url with optional headers.
func get(t *testing.T, method, url string, opts ...reqOpt) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range opts {
		o(req)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// rawPost sends body with a content type and returns the status.
func rawPost(t *testing.T, url, contentType string, body io.Reader, opts ...reqOpt) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", url, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for _, o := range opts {
		o(req)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// waitBriefly is the polling step of the tests.
func waitBriefly() { time.Sleep(10 * time.Millisecond) }

// timeout bounds a wait for something the module must do.
func timeout() <-chan time.Time { return time.After(5 * time.Second) }

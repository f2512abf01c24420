package jsonrpc

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// wantError asserts an error response: the exact code, the echoed id, and
// for a 1.0 answer the ErrorInfo reason in data[0] (0.3 data is an object
// or absent, never an array).
func wantError(t testing.TB, resp map[string]any, code int64, id any, v10 bool, reason string) {
	t.Helper()
	if has(resp, "result") {
		t.Fatalf("want error %d, got result %v", code, resp["result"])
	}
	if got := num(t, resp, "error", "code"); got != code {
		t.Fatalf("code %d, want %d: %v", got, code, resp["error"])
	}
	if got := resp["id"]; !sameID(got, id) {
		t.Fatalf("id %v (%T), want %v", got, got, id)
	}
	if str(t, resp, "error", "message") == "" {
		t.Fatalf("empty error message")
	}
	data, hasData := resp["error"].(map[string]any)["data"]
	if !v10 {
		if _, isArr := data.([]any); hasData && isArr {
			t.Fatalf("0.3 error data must not be an array: %v", data)
		}
		return
	}
	if reason == "" {
		return
	}
	if !hasData {
		t.Fatalf("1.0 error without data: %v", resp["error"])
	}
	if got := str(t, data, 0, "reason"); got != reason {
		t.Fatalf("reason %q, want %q", got, reason)
	}
	if got := str(t, data, 0, "@type"); got != "type.googleapis.com/google.rpc.ErrorInfo" {
		t.Fatalf("@type %q", got)
	}
	if got := str(t, data, 0, "domain"); got != protocol.ErrorDomain {
		t.Fatalf("domain %q", got)
	}
}

func sameID(got, want any) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case int:
		n, ok := got.(json.Number)
		return ok && n.String() == json.Number(itoa(w)).String()
	case string:
		return got == w
	}
	return false
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestRPCErrors(t *testing.T) {
	h := newHarness(t, scriptAgent(text("hi")))
	// A finished task of alice, for the terminal and ownership cases.
	done := h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m-1", "", "")})
	doneID := str(t, done, "result", "task", "id")
	if got := str(t, done, "result", "task", "status", "state"); got != "TASK_STATE_COMPLETED" {
		t.Fatalf("setup task state %s", got)
	}

	cases := []struct {
		name   string
		r      req
		code   int64
		id     any
		v10    bool
		reason string
	}{
		{name: "parse error id null", r: req{body: `{"jsonrpc":"2.0","id":1,`}, code: -32700, id: nil},
		{name: "parse error 1.0", r: req{version: "1.0", body: `nope`}, code: -32700, id: nil, v10: true},
		{name: "batch", r: req{body: `[{"jsonrpc":"2.0","id":1,"method":"tasks/get"}]`}, code: -32600, id: nil},
		{name: "jsonrpc 1.0", r: req{body: `{"jsonrpc":"1.0","id":5,"method":"tasks/get"}`}, code: -32600, id: 5},
		{name: "missing method", r: req{body: `{"jsonrpc":"2.0","id":"x"}`}, code: -32600, id: "x"},
		{name: "object id", r: req{body: `{"jsonrpc":"2.0","id":{},"method":"tasks/get"}`}, code: -32600, id: nil},
		{name: "unknown 0.3 method", r: req{body: rpcCall("tasks/frobnicate", `{}`)}, code: -32601, id: 3},
		{name: "unknown 1.0 method", r: req{version: "1.0", body: rpcCall("Frobnicate", `{}`)}, code: -32601, id: 3, v10: true},
		{name: "ListTasks is not 0.3", r: req{body: rpcCall("tasks/list", `{}`)}, code: -32601, id: 3},
		{name: "params not object", r: req{body: rpcCall("tasks/get", `[1]`)}, code: -32602, id: 3},
		{name: "get without id", r: req{version: "1.0", body: rpcCall("GetTask", `{}`)}, code: -32602, id: 3, v10: true},
		{name: "send without message", r: req{body: rpcCall("message/send", `{}`)}, code: -32602, id: 3},
		{name: "agent role", r: req{version: "1.0", body: rpcCall("SendMessage",
			`{"message":{"messageId":"a","role":"ROLE_AGENT","parts":[{"text":"x"}]}}`)}, code: -32602, id: 3, v10: true},
		// The dialect's codec answers: the caller is a 1.0 client that forgot the header.
		{name: "1.0 method without header", r: req{body: sendV10("SendMessage", "m", "", "")}, code: -32009, id: 7, v10: true, reason: "VERSION_NOT_SUPPORTED"},
		{name: "unknown version", r: req{version: "99.0", body: sendV10("SendMessage", "m", "", "")}, code: -32009, id: 7, v10: true, reason: "VERSION_NOT_SUPPORTED"},
		{name: "unknown version 0.3 method", r: req{version: "0.2", body: sendV03("message/send", "m", "", "")}, code: -32009, id: "r-1"},
		{name: "0.3 method with 1.0 header", r: req{version: "1.0", body: sendV03("message/send", "m", "", "")}, code: -32009, id: "r-1", v10: true, reason: "VERSION_NOT_SUPPORTED"},
		{name: "unknown task 0.3", r: req{body: rpcCall("tasks/get", `{"id":"nope"}`)}, code: -32001, id: 3},
		{name: "unknown task 1.0", r: req{version: "1.0", body: rpcCall("GetTask", `{"id":"nope"}`)}, code: -32001, id: 3, v10: true, reason: "TASK_NOT_FOUND"},
		{name: "another owner's task", r: req{version: "1.0", owner: "bob", body: rpcCall("GetTask", `{"id":"`+doneID+`"}`)}, code: -32001, id: 3, v10: true, reason: "TASK_NOT_FOUND"},
		{name: "anonymous and alice's task", r: req{version: "1.0", body: rpcCall("GetTask", `{"id":"`+doneID+`"}`)}, code: -32001, id: 3, v10: true, reason: "TASK_NOT_FOUND"},
		{name: "cancel another owner's task", r: req{version: "1.0", owner: "bob", body: rpcCall("CancelTask", `{"id":"`+doneID+`"}`)}, code: -32001, id: 3, v10: true, reason: "TASK_NOT_FOUND"},
		{name: "send to another owner's task", r: req{version: "1.0", owner: "bob", body: sendV10("SendMessage", "m-2", `,"taskId":"`+doneID+`"`, "")}, code: -32001, id: 7, v10: true, reason: "TASK_NOT_FOUND"},
		{name: "send to unknown task", r: req{body: sendV03("message/send", "m-2", `,"taskId":"nope"`, "")}, code: -32001, id: "r-1"},
		{name: "cancel terminal", r: req{version: "1.0", owner: "alice", body: rpcCall("CancelTask", `{"id":"`+doneID+`"}`)}, code: -32002, id: 3, v10: true, reason: "TASK_NOT_CANCELABLE"},
		{name: "cancel terminal 0.3", r: req{owner: "alice", body: rpcCall("tasks/cancel", `{"id":"`+doneID+`"}`)}, code: -32002, id: 3},
		{name: "send to terminal", r: req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m-3", `,"taskId":"`+doneID+`"`, "")}, code: -32004, id: 7, v10: true, reason: "UNSUPPORTED_OPERATION"},
		{name: "send to terminal 0.3", r: req{owner: "alice", body: sendV03("message/send", "m-3", `,"taskId":"`+doneID+`"`, "")}, code: -32004, id: "r-1"},
		{name: "context mismatch", r: req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m-4", `,"taskId":"`+doneID+`","contextId":"other"`, "")}, code: -32602, id: 7, v10: true},
		{name: "push set 0.3", r: req{body: rpcCall("tasks/pushNotificationConfig/set", `{"taskId":"x","pushNotificationConfig":{"url":"https://e.x"}}`)}, code: -32003, id: 3},
		{name: "push get 0.3", r: req{body: rpcCall("tasks/pushNotificationConfig/get", `{"id":"x"}`)}, code: -32003, id: 3},
		{name: "push list 0.3", r: req{body: rpcCall("tasks/pushNotificationConfig/list", `{"id":"x"}`)}, code: -32003, id: 3},
		{name: "push delete 0.3", r: req{body: rpcCall("tasks/pushNotificationConfig/delete", `{"id":"x","pushNotificationConfigId":"y"}`)}, code: -32003, id: 3},
		{name: "push create 1.0", r: req{version: "1.0", body: rpcCall("CreateTaskPushNotificationConfig", `{"taskId":"x","url":"https://e.x"}`)}, code: -32003, id: 3, v10: true, reason: "PUSH_NOTIFICATION_NOT_SUPPORTED"},
		{name: "push get 1.0", r: req{version: "1.0", body: rpcCall("GetTaskPushNotificationConfig", `{"taskId":"x","id":"y"}`)}, code: -32003, id: 3, v10: true, reason: "PUSH_NOTIFICATION_NOT_SUPPORTED"},
		{name: "push list 1.0", r: req{version: "1.0", body: rpcCall("ListTaskPushNotificationConfigs", `{"taskId":"x"}`)}, code: -32003, id: 3, v10: true, reason: "PUSH_NOTIFICATION_NOT_SUPPORTED"},
		{name: "push delete 1.0", r: req{version: "1.0", body: rpcCall("DeleteTaskPushNotificationConfig", `{"taskId":"x","id":"y"}`)}, code: -32003, id: 3, v10: true, reason: "PUSH_NOTIFICATION_NOT_SUPPORTED"},
		{name: "inline push 1.0", r: req{version: "1.0", body: sendV10("SendMessage", "m-5", "", `{"taskPushNotificationConfig":{"url":"https://e.x"}}`)}, code: -32003, id: 7, v10: true, reason: "PUSH_NOTIFICATION_NOT_SUPPORTED"},
		{name: "inline push 0.3", r: req{body: sendV03("message/send", "m-5", "", `{"pushNotificationConfig":{"url":"https://e.x"}}`)}, code: -32003, id: "r-1"},
		{name: "extended card 1.0", r: req{version: "1.0", body: rpcCall("GetExtendedAgentCard", `{}`)}, code: -32004, id: 3, v10: true, reason: "UNSUPPORTED_OPERATION"},
		{name: "extended card 0.3", r: req{body: `{"jsonrpc":"2.0","id":3,"method":"agent/getAuthenticatedExtendedCard"}`}, code: -32007, id: 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := h.rpc(tc.r)
			wantError(t, resp, tc.code, tc.id, tc.v10, tc.reason)
		})
	}
}

// Every -32009 says which versions are served, in the message (0.3 errors
// carry nothing else) and, in 1.0, in ErrorInfo's supportedVersions.
func TestVersionErrorsListServed(t *testing.T) {
	both := newHarness(t, scriptAgent(text("x")))
	only10 := newHarness(t, scriptAgent(text("x")), func(o *handler.Options) { o.Versions = []protocol.Version{protocol.V10} })
	for _, tc := range []struct {
		name      string
		h         *harness
		r         req
		msg, list string
	}{
		{"unknown version", both, req{version: "2.0", body: rpcCall("GetTask", `{"id":"x"}`)},
			"Protocol version 2.0 is not supported. This agent serves A2A 1.0 and 0.3.", "1.0,0.3"},
		{"1.0 method, no header", both, req{body: rpcCall("GetTask", `{"id":"x"}`)},
			"Method GetTask is an A2A 1.0 method but the request asks for A2A 0.3 (the default when no A2A-Version is sent): send the header A2A-Version: 1.0. This agent serves A2A 1.0 and 0.3.", "1.0,0.3"},
		{"1.0 method, explicit 0.3", both, req{version: "0.3", body: rpcCall("GetTask", `{"id":"x"}`)},
			"Method GetTask is an A2A 1.0 method but the request asks for A2A 0.3 (A2A-Version: 0.3): send A2A-Version: 1.0. This agent serves A2A 1.0 and 0.3.", "1.0,0.3"},
		{"0.3 method, 1.0 header", both, req{version: "1.0", body: rpcCall("tasks/get", `{"id":"x"}`)},
			"Method tasks/get is an A2A 0.3 method but the request asks for A2A 1.0: use the A2A 1.0 method or send A2A-Version: 0.3. This agent serves A2A 1.0 and 0.3.", "1.0,0.3"},
		{"0.3 not served", only10, req{body: rpcCall("tasks/get", `{"id":"x"}`)},
			"Protocol version 0.3 is not served by this agent. This agent serves A2A 1.0.", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := tc.h.rpc(tc.r)
			if got := str(t, resp, "error", "message"); got != tc.msg {
				t.Fatalf("message\n got %q\nwant %q", got, tc.msg)
			}
			if tc.list == "" {
				return
			}
			if got := str(t, resp, "error", "data", 0, "metadata", "supportedVersions"); got != tc.list {
				t.Fatalf("supportedVersions %q, want %q", got, tc.list)
			}
		})
	}
}

func TestRPCVersionRouting(t *testing.T) {
	t.Run("not served", func(t *testing.T) {
		h := newHarness(t, scriptAgent(text("x")), func(o *handler.Options) { o.Versions = []protocol.Version{protocol.V10} })
		resp := h.rpc(req{body: sendV03("message/send", "m", "", "")})
		wantError(t, resp, -32009, "r-1", false, "")
		h2 := newHarness(t, scriptAgent(text("x")), func(o *handler.Options) { o.Versions = []protocol.Version{protocol.V03} })
		resp = h2.rpc(req{version: "1.0", body: sendV10("SendMessage", "m", "", "")})
		wantError(t, resp, -32009, 7, true, "VERSION_NOT_SUPPORTED")
	})
	t.Run("missing header tells the fix", func(t *testing.T) {
		h := newHarness(t, scriptAgent(text("x")))
		resp := h.rpc(req{body: rpcCall("GetTask", `{"id":"x"}`)})
		wantError(t, resp, -32009, 3, true, "VERSION_NOT_SUPPORTED")
		if msg := str(t, resp, "error", "message"); !contains(msg, "A2A-Version: 1.0") {
			t.Fatalf("message %q does not name the header to send", msg)
		}
	})
	t.Run("patch ignored and query parameter", func(t *testing.T) {
		h := newHarness(t, scriptAgent(text("x")))
		for _, v := range []string{"1.0", "1.0.1", "1.2"} {
			resp := h.rpc(req{version: v, body: rpcCall("GetTask", `{"id":"x"}`)})
			wantError(t, resp, -32001, 3, true, "TASK_NOT_FOUND")
		}
		for _, v := range []string{"0.3", "0.3.0"} {
			resp := h.rpc(req{version: v, body: rpcCall("tasks/get", `{"id":"x"}`)})
			wantError(t, resp, -32001, 3, false, "")
		}
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		hr, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.srv.URL+"?A2A-Version=1.0", stringsReader(rpcCall("GetTask", `{"id":"x"}`)))
		resp, err := h.srv.Client().Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		wantError(t, decode(t, readAll(t, resp)), -32001, 3, true, "TASK_NOT_FOUND")
	})
	t.Run("streaming disabled", func(t *testing.T) {
		h := newHarness(t, scriptAgent(text("x")), func(o *handler.Options) { o.Streaming = false })
		for _, r := range []req{
			{version: "1.0", body: sendV10("SendStreamingMessage", "m", "", "")},
			{body: sendV03("message/stream", "m", "", "")},
			{version: "1.0", body: rpcCall("SubscribeToTask", `{"id":"x"}`)},
			{body: rpcCall("tasks/resubscribe", `{"id":"x"}`)},
		} {
			f := h.streamError(r)
			wantError(t, f, -32004, idOf(r.body), r.version == "1.0", "UNSUPPORTED_OPERATION")
		}
	})
}

// Start answers everything but a ready stream itself; the stream comes
// back unserved (nothing written yet) and Serve sends it.
func TestStartReturnsReadyStream(t *testing.T) {
	h := newHarness(t, scriptAgent(status(protocol.StateInputRequired, "more?")))
	resp := h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m-1", "", "")})
	id := str(t, resp, "result", "task", "id")

	// The client goes after the stream is set up and before it is
	// served: a subscription to a task waiting for input sends the Task
	// and would then wait for the turn that continues it.
	ctx, gone := context.WithCancel(t.Context())
	start := func(body string) (Stream, *httptest.ResponseRecorder) {
		r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/a2a", strings.NewReader(body))
		r.Header.Set("A2A-Version", "1.0")
		w := httptest.NewRecorder()
		return h.ep.Start(w, r, []byte(body), handler.Caller{Owner: "alice"}), w
	}
	if st, w := start(rpcCall("GetTask", `{"id":"`+id+`"}`)); st.Pending() || !strings.Contains(w.Body.String(), `"TASK_STATE_INPUT_REQUIRED"`) {
		t.Fatalf("GetTask: stream %v, answer %q", st, w.Body.String())
	}
	if st, w := start(rpcCall("SubscribeToTask", `{"id":"missing"}`)); st.Pending() || !strings.Contains(w.Body.String(), `"code":-32001`) {
		t.Fatalf("subscribe to a missing task: stream %v, answer %q", st, w.Body.String())
	}
	st, w := start(rpcCall("SubscribeToTask", `{"id":"`+id+`"}`))
	if !st.Pending() || w.Body.Len() != 0 {
		t.Fatalf("subscribe: stream %v, written before Serve: %q", st, w.Body.String())
	}
	gone()
	st.Serve() // the Task frame, then the stream ends: the client is gone
	if got := w.Body.String(); !strings.HasPrefix(got, "id: ") || !strings.Contains(got, `"task":{"id":"`+id+`"`) || strings.Count(got, "data: ") != 1 {
		t.Fatalf("served stream %q", got)
	}
}

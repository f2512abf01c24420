package protocol

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
)

func TestDecodeRequest(t *testing.T) {
	deep := `{"jsonrpc":"2.0","id":7,"method":"m","params":{"a":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}}`
	// Ids of exactly maxIDBytes and one byte more, quotes included.
	idAt := `"` + strings.Repeat("i", maxIDBytes-2) + `"`
	idOver := `"` + strings.Repeat("i", maxIDBytes-1) + `"`
	idLimit := map[string]string{"limit": LimitMaxIDBytes, "max": "1024"}
	withID := func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"method":"SendMessage","params":{}}` }
	tests := []struct {
		name    string
		body    string
		code    int    // 0 = success
		id      string // expected raw id ("" = nil)
		method  string // expected method, on errors too ("" = not read)
		params  string
		message string            // substring of the error message
		meta    map[string]string // the error's metadata, when checked
		noID    bool              // Request.NoID
	}{
		{name: "ok string id", body: `{"jsonrpc":"2.0","id":"a-1","method":"SendMessage","params":{"x":1}}`, id: `"a-1"`, method: "SendMessage", params: `{"x":1}`},
		{name: "ok number id", body: ` {"id": 42 , "method":"tasks/get","jsonrpc":"2.0"} `, id: `42`, method: "tasks/get"},
		{name: "ok float id kept as sent", body: `{"jsonrpc":"2.0","id":1.50,"method":"m"}`, id: `1.50`, method: "m"},
		{name: "ok null id", body: `{"jsonrpc":"2.0","id":null,"method":"m"}`, id: `null`, method: "m"},
		{name: "ok null params", body: `{"jsonrpc":"2.0","id":1,"method":"m","params":null}`, id: `1`, method: "m"},
		{name: "ok escaped method and version", body: `{"jsonrpc":"2\u002e0","id":1,"method":"message\/send"}`, id: `1`, method: "message/send"},
		{name: "ok unknown members ignored", body: `{"jsonrpc":"2.0","id":1,"method":"m","extra":{"a":[1,2]}}`, id: `1`, method: "m"},
		{name: "ok unknown member repeated", body: `{"jsonrpc":"2.0","id":1,"method":"m","x":1,"x":2}`, id: `1`, method: "m"},
		{name: "ok id at the bound", body: withID(idAt), id: idAt, method: "SendMessage", params: `{}`},
		{name: "ok number id at the bound", body: withID(strings.Repeat("9", maxIDBytes)), id: strings.Repeat("9", maxIDBytes), method: "SendMessage", params: `{}`},
		{name: "ok depth exactly at limit", body: `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":` + strings.Repeat("[", 30) + strings.Repeat("]", 30) + `}}`, id: `1`, method: "m", params: `{"a":` + strings.Repeat("[", 30) + strings.Repeat("]", 30) + `}`},

		{name: "malformed", body: `{"jsonrpc":"2.0","id":1,"method":`, code: CodeParseError},
		{name: "empty body", body: ``, code: CodeParseError},
		{name: "trailing garbage", body: `{"jsonrpc":"2.0","id":1,"method":"m"} x`, code: CodeParseError},
		{name: "batch", body: `[{"jsonrpc":"2.0","id":1,"method":"m"}]`, code: CodeInvalidRequest, message: "Batch"},
		{name: "string body", body: `"hello"`, code: CodeInvalidRequest},
		{name: "number body", body: `12`, code: CodeInvalidRequest},
		{name: "null body", body: `null`, code: CodeInvalidRequest},
		{name: "wrong version", body: `{"jsonrpc":"1.0","id":3,"method":"m"}`, code: CodeInvalidRequest, id: `3`},
		{name: "numeric version", body: `{"jsonrpc":2.0,"id":3,"method":"m"}`, code: CodeInvalidRequest, id: `3`},
		{name: "missing version", body: `{"id":3,"method":"m"}`, code: CodeInvalidRequest, id: `3`},
		{name: "object id", body: `{"jsonrpc":"2.0","id":{"a":1},"method":"m"}`, code: CodeInvalidRequest},
		{name: "array id", body: `{"jsonrpc":"2.0","id":[1],"method":"m"}`, code: CodeInvalidRequest},
		{name: "bool id", body: `{"jsonrpc":"2.0","id":true,"method":"m"}`, code: CodeInvalidRequest},
		{name: "missing method", body: `{"jsonrpc":"2.0","id":"x"}`, code: CodeInvalidRequest, id: `"x"`},
		{name: "empty method", body: `{"jsonrpc":"2.0","id":"x","method":""}`, code: CodeInvalidRequest, id: `"x"`},
		{name: "number method", body: `{"jsonrpc":"2.0","id":"x","method":5}`, code: CodeInvalidRequest, id: `"x"`},
		{name: "null method", body: `{"jsonrpc":"2.0","id":"x","method":null}`, code: CodeInvalidRequest, id: `"x"`},
		{name: "array params", body: `{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}`, code: CodeInvalidParams, id: `1`, method: "m"},
		{name: "string params", body: `{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}`, code: CodeInvalidParams, id: `1`, method: "m"},
		{name: "too deep", body: deep, code: CodeInvalidRequest, id: `7`, method: "m", message: "deeper than 32", meta: map[string]string{"limit": LimitMaxJSONDepth, "max": "32"}},

		// A notification is refused last: its method and params are
		// read (NoID), for the binding to check them first.
		{name: "notification", body: `{"jsonrpc":"2.0","method":"SendMessage","params":{"message":{}}}`, code: CodeInvalidRequest, message: "no id", method: "SendMessage", noID: true},
		{name: "notification of a stream", body: `{"jsonrpc":"2.0","method":"message/stream","params":{}}`, code: CodeInvalidRequest, message: "no id", method: "message/stream", noID: true},
		{name: "notification with bad params", body: `{"jsonrpc":"2.0","method":"m","params":[1]}`, code: CodeInvalidParams, message: "params must be an object", method: "m"},
		{name: "notification with a wrong version", body: `{"jsonrpc":"aaa","method":"message/send","params":{}}`, code: CodeInvalidRequest, message: "jsonrpc"},
		{name: "notification without a method", body: `{"jsonrpc":"2.0","params":{}}`, code: CodeInvalidRequest, message: "method"},
		{name: "notification too deep", body: `{"jsonrpc":"2.0","method":"m","params":{"a":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}}`, code: CodeInvalidRequest, method: "m", message: "deeper than 32"},
		{name: "duplicate method", body: `{"jsonrpc":"2.0","id":1,"method":"GetTask","method":"SendMessage","params":{}}`, code: CodeInvalidRequest, message: `more than one "method"`},
		{name: "duplicate method escaped", body: `{"jsonrpc":"2.0","id":1,"method":"GetTask","m\u0065thod":"SendMessage"}`, code: CodeInvalidRequest, message: `more than one "method"`},
		{name: "duplicate id", body: `{"jsonrpc":"2.0","id":1,"method":"m","id":2}`, code: CodeInvalidRequest, message: `more than one "id"`},
		{name: "duplicate jsonrpc", body: `{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"m"}`, code: CodeInvalidRequest, message: `more than one "jsonrpc"`},
		{name: "duplicate params", body: `{"jsonrpc":"2.0","id":1,"method":"m","params":{},"params":null}`, code: CodeInvalidRequest, message: `more than one "params"`},
		{name: "duplicate without id", body: `{"jsonrpc":"2.0","method":"a","method":"b"}`, code: CodeInvalidRequest, message: `more than one "method"`},
		{name: "id over the bound", body: withID(idOver), code: CodeInvalidRequest, message: "Request id is 1025 bytes, over the max_id_size limit of 1024 bytes", meta: idLimit},
		{name: "2 KiB id", body: withID(`"` + strings.Repeat("x", 2046) + `"`), code: CodeInvalidRequest, message: "max_id_size", meta: idLimit},
		{name: "number id over the bound", body: withID(strings.Repeat("9", maxIDBytes+1)), code: CodeInvalidRequest, message: "max_id_size", meta: idLimit},
		{name: "escaped id over the bound", body: withID(`"` + strings.Repeat(`\u0041`, 200) + `"`), code: CodeInvalidRequest, message: "max_id_size", meta: idLimit},
		{name: "oversized id before a bad method", body: `{"jsonrpc":"1.0","id":` + idOver + `}`, code: CodeInvalidRequest, message: "max_id_size", meta: idLimit},
		{name: "oversized object id", body: withID(`{"a":"` + strings.Repeat("x", 2048) + `"}`), code: CodeInvalidRequest, message: "max_id_size", meta: idLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, e := decodeRequest([]byte(tt.body))
			if req == nil {
				t.Fatal("nil request")
			}
			if string(req.ID) != tt.id {
				t.Errorf("id = %q, want %q", req.ID, tt.id)
			}
			if tt.code == 0 {
				if e != nil {
					t.Fatalf("unexpected error %v", e)
				}
				if req.Method != tt.method || string(req.Params) != tt.params {
					t.Errorf("got method %q params %q", req.Method, req.Params)
				}
				return
			}
			if e == nil {
				t.Fatalf("want code %d, got success %+v", tt.code, req)
			}
			if e.Code != tt.code {
				t.Errorf("code = %d, want %d (%s)", e.Code, tt.code, e.Message)
			}
			if !strings.Contains(e.Message, tt.message) {
				t.Errorf("message %q lacks %q", e.Message, tt.message)
			}
			if req.Method != tt.method {
				t.Errorf("method = %q, want %q", req.Method, tt.method)
			}
			if req.NoID != tt.noID {
				t.Errorf("NoID = %v, want %v", req.NoID, tt.noID)
			}
			if tt.meta != nil && !maps.Equal(e.Metadata, tt.meta) {
				t.Errorf("metadata = %v, want %v", e.Metadata, tt.meta)
			}
		})
	}
}

func TestDecodeRequestLimit(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":{"b":{}}}}`)
	if _, e := DecodeRequestLimit(body, 4); e != nil {
		t.Fatalf("depth 4 should pass: %v", e)
	}
	if _, e := DecodeRequestLimit(body, 3); e == nil || e.Code != CodeInvalidRequest {
		t.Fatalf("depth 3 should fail with -32600, got %v", e)
	}
	// Brackets inside strings do not count.
	body = []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"[[[[[[[[{{{{{{\"[["}}`)
	if _, e := DecodeRequestLimit(body, 2); e != nil {
		t.Fatalf("brackets in strings counted: %v", e)
	}
}

func TestDecodeRequestCopiesID(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":"abc","method":"m"}`)
	req, e := decodeRequest(body)
	if e != nil {
		t.Fatal(e)
	}
	copy(body, strings.Repeat("x", len(body)))
	if string(req.ID) != `"abc"` {
		t.Fatalf("id aliases the body: %q", req.ID)
	}
}

// A body that is not UTF-8 is not JSON text (RFC 8259 §8.1): -32700 with id
// null, wherever the bad byte is (see jsonwire.Valid for why it is not read).
func TestDecodeRequestInvalidUTF8(t *testing.T) {
	for _, body := range []string{
		"{\"jsonrpc\":\"2.0\",\"id\":\"a\xffb\",\"method\":\"m\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"data\":{\"k\xff\":\"v\"}}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"metadata\":{\"k\":\"\xc3\"}}}",
	} {
		req, e := decodeRequest([]byte(body))
		if e == nil || e.Code != CodeParseError || req.ID != nil {
			t.Errorf("%q: %v, id %q", body, e, req.ID)
		}
	}
}

func TestAppendResponses(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{string(appendResult(nil, []byte(`"x"`), []byte(`{"a":1}`))), `{"jsonrpc":"2.0","id":"x","result":{"a":1}}`},
		{string(appendResult(nil, nil, []byte(`{}`))), `{"jsonrpc":"2.0","id":null,"result":{}}`},
		{string(appendResult([]byte("pre"), []byte(`5`), nil)), `pre{"jsonrpc":"2.0","id":5,"result":null}`},
		{string(appendErrorResponse(nil, nil, []byte(`{"code":-32700,"message":"Invalid JSON payload"}`))), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Invalid JSON payload"}}`},
		{string(appendErrorResponse(nil, []byte(`12`), codecV10.AppendError(nil, ErrTaskNotFound("t")))), `{"jsonrpc":"2.0","id":12,"error":{"code":-32001,"message":"Task not found","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"t"}}]}}`},
		{string(AppendResponseEnd(codecV03.AppendTask(AppendResultHead(nil, []byte(`1`)), &Task{ID: "t", ContextID: "c", Status: TaskStatus{State: StateWorking}}))), `{"jsonrpc":"2.0","id":1,"result":{"id":"t","contextId":"c","status":{"state":"working"},"kind":"task"}}`},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%d:\n got %s\nwant %s", i, tt.got, tt.want)
		}
		if !json.Valid([]byte(strings.TrimPrefix(tt.got, "pre"))) {
			t.Errorf("%d: invalid JSON", i)
		}
	}
}

func TestParseVersionHeader(t *testing.T) {
	tests := []struct {
		in   string
		want Version
		ok   bool
	}{
		{"", V03, true},
		{"  ", V03, true},
		{"0.3", V03, true},
		{"0.3.0", V03, true},
		{"0.3.7", V03, true},
		{" 0.3 ", V03, true},
		{"1.0", V10, true},
		{"1.0.1", V10, true},
		{"1.2", V10, true},
		{"1.10.3", V10, true},
		{"0.2", 0, false},
		{"0.2.6", 0, false},
		{"2.0", 0, false},
		{"99.0", 0, false},
		{"1", 0, false},
		{"1.", 0, false},
		{".1", 0, false},
		{"v1.0", 0, false},
		{"1.0.", 0, false},
		{"1.0.1.2", 0, false},
		{"1.0-rc", 0, false},
		{"1.x", 0, false},
		{"1.0000001", 0, false},
		{"0.3,1.0", 0, false},
	}
	for _, tt := range tests {
		v, ok := ParseVersionHeader(tt.in)
		if v != tt.want || ok != tt.ok {
			t.Errorf("ParseVersionHeader(%q) = %v,%v want %v,%v", tt.in, v, ok, tt.want, tt.ok)
		}
	}
}

func TestDialectAndCodecFor(t *testing.T) {
	for _, m := range []string{"message/send", "tasks/pushNotificationConfig/get", "agent/getAuthenticatedExtendedCard"} {
		if DialectOf(m) != V03 {
			t.Errorf("DialectOf(%q) != V03", m)
		}
	}
	for _, m := range []string{"SendMessage", "ListTasks", "foo"} {
		if DialectOf(m) != V10 {
			t.Errorf("DialectOf(%q) != V10", m)
		}
	}
	if codecFor(V03).Version() != V03 || codecFor(V10).Version() != V10 || codecFor(0) != nil {
		t.Error("codecFor")
	}
}

func TestMethods(t *testing.T) {
	tests := []struct {
		c    Codec
		name string
		want Method
	}{
		{codecV03, "message/send", MethodSend},
		{codecV03, "message/stream", MethodStream},
		{codecV03, "tasks/get", MethodGetTask},
		{codecV03, "tasks/cancel", MethodCancelTask},
		{codecV03, "tasks/resubscribe", MethodSubscribe},
		{codecV03, "tasks/pushNotificationConfig/set", MethodPushSet},
		{codecV03, "tasks/pushNotificationConfig/get", MethodPushGet},
		{codecV03, "tasks/pushNotificationConfig/list", MethodPushList},
		{codecV03, "tasks/pushNotificationConfig/delete", MethodPushDelete},
		{codecV03, "agent/getAuthenticatedExtendedCard", MethodExtendedCard},
		{codecV10, "SendMessage", MethodSend},
		{codecV10, "SendStreamingMessage", MethodStream},
		{codecV10, "GetTask", MethodGetTask},
		{codecV10, "ListTasks", MethodListTasks},
		{codecV10, "CancelTask", MethodCancelTask},
		{codecV10, "SubscribeToTask", MethodSubscribe},
		{codecV10, "CreateTaskPushNotificationConfig", MethodPushSet},
		{codecV10, "GetTaskPushNotificationConfig", MethodPushGet},
		{codecV10, "ListTaskPushNotificationConfigs", MethodPushList},
		{codecV10, "DeleteTaskPushNotificationConfig", MethodPushDelete},
		{codecV10, "GetExtendedAgentCard", MethodExtendedCard},
	}
	for _, tt := range tests {
		m, ok := tt.c.Method(tt.name)
		if !ok || m != tt.want {
			t.Errorf("%v Method(%q) = %v,%v", tt.c.Version(), tt.name, m, ok)
		}
		other := codecV03
		if tt.c.Version() == V03 {
			other = codecV10
		}
		if _, ok := other.Method(tt.name); ok {
			t.Errorf("%q also a method of %v", tt.name, other.Version())
		}
	}
	for _, bad := range []string{"tasks/list", "sendMessage", "", "agent/authenticatedExtendedCard"} {
		if _, ok := codecV03.Method(bad); ok {
			t.Errorf("v03 accepts %q", bad)
		}
		if _, ok := codecV10.Method(bad); ok {
			t.Errorf("v10 accepts %q", bad)
		}
	}
}

package jsonrpc

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// A notification, a repeated envelope member and an oversized id are
// refused with -32600 and id null before anything runs: no agent call, no
// task. The method of such a request is not trusted, so the answer is
// plain JSON in the version the header names, even for a stream method.
func TestEnvelopeRefusalsRunNothing(t *testing.T) {
	msg10 := `{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}`
	msg03 := `{"message":{"kind":"message","messageId":"m-1","role":"user","parts":[{"kind":"text","text":"hello"}]}}`
	hugeID := `"` + strings.Repeat("x", 2046) + `"` // 2 KiB as sent
	cases := []struct {
		name    string
		version string
		body    string
		message string // substring of the error message
		limit   bool   // the error names max_id_size (1.0: in the ErrorInfo)
	}{
		{name: "notification 1.0", version: "1.0", body: `{"jsonrpc":"2.0","method":"SendMessage","params":` + msg10 + `}`, message: "no id"},
		{name: "notification 0.3", body: `{"jsonrpc":"2.0","method":"message/send","params":` + msg03 + `}`, message: "no id"},
		{name: "notification of a stream", version: "1.0", body: `{"jsonrpc":"2.0","method":"SendStreamingMessage","params":` + msg10 + `}`, message: "no id"},
		{name: "duplicate method 1.0", version: "1.0", body: `{"jsonrpc":"2.0","id":1,"method":"GetTask","method":"SendMessage","params":` + msg10 + `}`, message: `more than one "method"`},
		{name: "duplicate method 0.3", body: `{"jsonrpc":"2.0","id":1,"method":"tasks/get","method":"message/send","params":` + msg03 + `}`, message: `more than one "method"`},
		{name: "duplicate escaped method", version: "1.0", body: `{"jsonrpc":"2.0","id":1,"method":"GetTask","m\u0065thod":"SendMessage","params":` + msg10 + `}`, message: `more than one "method"`},
		{name: "2 KiB id 1.0", version: "1.0", body: `{"jsonrpc":"2.0","id":` + hugeID + `,"method":"SendMessage","params":` + msg10 + `}`, message: protocol.LimitMaxIDBytes, limit: true},
		{name: "2 KiB id 0.3", body: `{"jsonrpc":"2.0","id":` + hugeID + `,"method":"message/send","params":` + msg03 + `}`, message: protocol.LimitMaxIDBytes, limit: true},
		{name: "2 KiB id of a stream", version: "1.0", body: `{"jsonrpc":"2.0","id":` + hugeID + `,"method":"SendStreamingMessage","params":` + msg10 + `}`, message: protocol.LimitMaxIDBytes, limit: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			agent := &countingAgent{Agent: scriptAgent(text("ran"))}
			h := newHarness(t, agent)
			raw := rawAnswer(t, h, req{version: tc.version, owner: "alice", body: tc.body})
			if strings.Contains(raw, "xxxxxxxx") {
				t.Fatalf("the oversized id was echoed: %.200s", raw)
			}
			resp := decode(t, []byte(raw))
			v10 := tc.version == "1.0"
			wantError(t, resp, protocol.CodeInvalidRequest, nil, v10, "")
			if m := str(t, resp, "error", "message"); !strings.Contains(m, tc.message) {
				t.Fatalf("message %q lacks %q", m, tc.message)
			}
			if tc.limit {
				wantLimitError(t, resp, v10, protocol.CodeInvalidRequest, "", protocol.LimitMaxIDBytes, "1024")
			}
			if n := agent.runs.Load(); n != 0 {
				t.Fatalf("agent ran %d times", n)
			}
			if n := h.store.Len(); n != 0 {
				t.Fatalf("%d tasks stored", n)
			}
		})
	}
}

// The answers to refused envelopes are plain JSON, also when the body
// names a stream method: that name is not trusted.
func TestEnvelopeRefusalIsJSON(t *testing.T) {
	h := newHarness(t, scriptAgent(text("ran")))
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	resp := h.post(ctx, req{version: "1.0", body: `{"jsonrpc":"2.0","method":"SendStreamingMessage","params":{}}`})
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

// An id sent as null is not a notification: the request runs and is
// answered with id null.
func TestEnvelopeNullIDRuns(t *testing.T) {
	agent := &countingAgent{Agent: scriptAgent(text("ran"))}
	h := newHarness(t, agent)
	resp := h.rpc(req{version: "1.0", body: `{"jsonrpc":"2.0","id":null,"method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`})
	if v, ok := resp["id"]; !ok || v != nil {
		t.Fatalf("id %v (present %v), want null", v, ok)
	}
	if str(t, resp, "result", "task", "status", "state") != "TASK_STATE_COMPLETED" || agent.runs.Load() != 1 {
		t.Fatalf("null-id send did not run: %v", resp)
	}
}

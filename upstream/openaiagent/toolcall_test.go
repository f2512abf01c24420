package openaiagent

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// streamToolCall answers with a text delta, then a delta holding call (a
// tool_calls or function_call member, or none), then the finish chunk
// with finish and [DONE].
func streamToolCall(call, finish string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		line := func(delta, finish string) {
			fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", delta, finish)
		}
		line(`{"role":"assistant","content":"Let me look that up."}`, "null")
		if call != "" {
			line(`{`+call+`}`, "null")
		}
		line(`{}`, `"`+finish+`"`)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

const (
	toolCallsDelta    = `"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"search","arguments":"{\"q\":\"secret\"}"}}]`
	functionCallDelta = `"function_call":{"name":"search","arguments":"{\"q\":\"secret\"}"}`
)

// TestRunToolCall: a model that ends its turn calling a tool (finish_reason
// tool_calls or function_call, or a tool call in a delta whatever the
// finish_reason) ends it as length and content_filter do: completed,
// with the text before the call and a status message saying why; the
// call itself (its name, its arguments) is not relayed.
func TestRunToolCall(t *testing.T) {
	const cut = "The answer was cut off where the model asked to call a tool, which this agent does not run"
	for _, tc := range []struct {
		name, call, finish, why string
	}{
		{name: "tool_calls", call: toolCallsDelta, finish: "tool_calls", why: cut + " (finish_reason tool_calls)."},
		{name: "function_call", call: functionCallDelta, finish: "function_call", why: cut + " (finish_reason function_call)."},
		{name: "tool_calls without its delta", finish: "tool_calls", why: cut + " (finish_reason tool_calls)."},
		{name: "a tool call that says stop", call: toolCallsDelta, finish: "stop", why: cut + "."},
		{name: "a function call that says stop", call: functionCallDelta, finish: "stop", why: cut + "."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, srv := newChatServer(t, streamToolCall(tc.call, tc.finish))
			a := newAgent(t, srv.URL, nil)
			st, err := a.Run(context.Background(), &upstream.RunRequest{Message: text(protocol.RoleUser, "look it up")})
			if err != nil {
				t.Fatal(err)
			}
			texts, status, err := drain(t, st)
			if err != nil || strings.Join(texts, "|") != "Let me look that up." {
				t.Fatalf("texts %q, err %v", texts, err)
			}
			if status == nil || status.State != protocol.StateCompleted || len(status.Parts) != 1 || status.Parts[0].Text != tc.why {
				t.Fatalf("status %+v, want completed saying %q", status, tc.why)
			}
		})
	}
}

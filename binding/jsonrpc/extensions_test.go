package jsonrpc

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// recordingAgent answers "ok" and keeps every run request.
type recordingAgent struct {
	mu   sync.Mutex
	reqs []*upstream.RunRequest
}

// The extension headers as a client writes them (1.0, 0.3), and the 1.0
// one's canonical key.
const (
	extensionsHeader    = "A2A-Extensions"
	extensionsHeaderV03 = "X-A2A-Extensions"
	extensionsKey       = "A2a-Extensions"
)

func (a *recordingAgent) Run(ctx context.Context, r *upstream.RunRequest) (upstream.Stream, error) {
	a.mu.Lock()
	a.reqs = append(a.reqs, r)
	a.mu.Unlock()
	return scriptAgent(text("ok")).Run(ctx, r)
}

func (a *recordingAgent) calls() []*upstream.RunRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*upstream.RunRequest(nil), a.reqs...)
}

var testExtensions = []protocol.Extension{
	{URI: "urn:ext:a", Description: "optional"},
	{URI: "urn:ext:req", Required: true},
	{URI: "https://ext.example/b/v1"},
}

// postRaw sends body with the given header lines (several values of one
// name become several lines) and returns the response.
func (h *harness) postRaw(t *testing.T, body string, header http.Header) *http.Response {
	t.Helper()
	hr, err := http.NewRequestWithContext(t.Context(), http.MethodPost, h.srv.URL, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	hr.Header = header.Clone()
	hr.Header.Set("Content-Type", "application/json")
	resp, err := h.srv.Client().Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestExtensionsNegotiation(t *testing.T) {
	v10 := sendV10("SendMessage", "m", "", "")
	v03 := sendV03("message/send", "m", "", "")
	for _, tc := range []struct {
		name   string
		body   string
		header http.Header
		// echo is the expected value of each echo header ("" = absent).
		echo, echoV03 string
		upstream      []string
	}{
		{"1.0 header, unknown ignored, request order", v10,
			http.Header{"A2a-Version": {"1.0"}, "A2a-Extensions": {" urn:ext:req , urn:unknown,https://ext.example/b/v1,,urn:ext:a"}},
			"urn:ext:req, https://ext.example/b/v1, urn:ext:a", "", []string{"urn:ext:req", "https://ext.example/b/v1", "urn:ext:a"}},
		{"0.3 header", v03,
			http.Header{"X-A2a-Extensions": {"urn:ext:req"}},
			"", "urn:ext:req", []string{"urn:ext:req"}},
		// The header name follows the client, not the method's version.
		{"0.3 header on a 1.0 method", v10,
			http.Header{"A2a-Version": {"1.0"}, "X-A2a-Extensions": {"urn:ext:req"}},
			"", "urn:ext:req", []string{"urn:ext:req"}},
		{"several lines, duplicates dropped", v10,
			http.Header{"A2a-Version": {"1.0"}, "A2a-Extensions": {"urn:ext:a", "urn:ext:req, urn:ext:a"}},
			"urn:ext:a, urn:ext:req", "", []string{"urn:ext:a", "urn:ext:req"}},
		{"both names echoed", v03,
			http.Header{"A2a-Extensions": {"urn:ext:a"}, "X-A2a-Extensions": {"urn:ext:req"}},
			"urn:ext:a, urn:ext:req", "urn:ext:a, urn:ext:req", []string{"urn:ext:a", "urn:ext:req"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agent := &recordingAgent{}
			h := newHarness(t, agent, func(o *handler.Options) { o.Extensions = testExtensions })
			resp := h.postRaw(t, tc.body, tc.header)
			m := decode(t, readAll(t, resp))
			if !has(m, "result") {
				t.Fatalf("refused: %v", m)
			}
			if got := resp.Header.Get(extensionsHeader); got != tc.echo {
				t.Errorf("A2A-Extensions echo %q, want %q", got, tc.echo)
			}
			if got := resp.Header.Get(extensionsHeaderV03); got != tc.echoV03 {
				t.Errorf("X-A2A-Extensions echo %q, want %q", got, tc.echoV03)
			}
			calls := agent.calls()
			if len(calls) != 1 || !reflect.DeepEqual(calls[0].Extensions, tc.upstream) {
				t.Fatalf("upstream extensions %v, want %v", calls[0].Extensions, tc.upstream)
			}
		})
	}
}

func TestExtensionsRequired(t *testing.T) {
	agent := &recordingAgent{}
	h := newHarness(t, agent, func(o *handler.Options) { o.Extensions = testExtensions })
	for _, tc := range []struct {
		name    string
		version string
		body    string
		header  map[string]string
		stream  bool
		v10     bool
	}{
		{"1.0 send without header", "1.0", sendV10("SendMessage", "m", "", ""), nil, false, true},
		{"1.0 send with only an optional one", "1.0", sendV10("SendMessage", "m", "", ""), map[string]string{extensionsHeader: "urn:ext:a"}, false, true},
		{"1.0 required asked under a wrong URI", "1.0", sendV10("SendMessage", "m", "", ""), map[string]string{extensionsHeader: "urn:ext:req/v2"}, false, true},
		{"1.0 get", "1.0", rpcCall("GetTask", `{"id":"x"}`), nil, false, true},
		{"1.0 list", "1.0", rpcCall("ListTasks", `{}`), nil, false, true},
		{"1.0 stream", "1.0", sendV10("SendStreamingMessage", "m", "", ""), nil, true, true},
		{"0.3 send", "", sendV03("message/send", "m", "", ""), nil, false, false},
		{"0.3 cancel", "", rpcCall("tasks/cancel", `{"id":"x"}`), nil, false, false},
		{"0.3 stream", "", sendV03("message/stream", "m", "", ""), nil, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := req{version: tc.version, owner: "alice", body: tc.body, header: tc.header}
			var m map[string]any
			if tc.stream {
				m = h.streamError(r)
			} else {
				m = h.rpc(r)
			}
			wantError(t, m, protocol.CodeExtensionSupportRequired, idOf(tc.body), tc.v10, "EXTENSION_SUPPORT_REQUIRED")
			if !strings.Contains(str(t, m, "error", "message"), "urn:ext:req") {
				t.Fatalf("message does not name the extension: %v", m)
			}
			if tc.v10 {
				if str(t, m, "error", "data", 0, "metadata", "extension") != "urn:ext:req" {
					t.Fatalf("1.0 data %v", m["error"])
				}
			} else if has(m, "error", "data") {
				// 0.3: the same code, no data (0.3 clients disagree on its
				// type); the message names the extension.
				t.Fatalf("0.3 error with data %v", m["error"])
			}
		})
	}
	if n := h.store.Len(); n != 0 {
		t.Fatalf("%d tasks stored by refused requests", n)
	}
	if n := len(agent.calls()); n != 0 {
		t.Fatalf("agent called %d times", n)
	}

	// Discovery needs no extension: the extended card answers as always.
	m := h.rpc(req{version: "1.0", body: rpcCall("GetExtendedAgentCard", `{}`)})
	wantError(t, m, protocol.CodeUnsupportedOperation, 3, true, "UNSUPPORTED_OPERATION")
	// Protocol errors come before the extension check.
	m = h.rpc(req{version: "1.0", body: rpcCall("NoSuchMethod", `{}`)})
	wantError(t, m, protocol.CodeMethodNotFound, 3, true, "")
	m = h.rpc(req{version: "2.0", body: rpcCall("GetTask", `{"id":"x"}`)})
	wantError(t, m, protocol.CodeVersionNotSupported, 3, true, "VERSION_NOT_SUPPORTED")
}

func TestExtensionsSSEEcho(t *testing.T) {
	h := newHarness(t, &recordingAgent{}, func(o *handler.Options) { o.Extensions = testExtensions })
	s := h.openStream(t, req{version: "1.0", body: sendV10("SendStreamingMessage", "m", "", ""),
		header: map[string]string{extensionsHeader: "urn:ext:req"}})
	if got := s.resp.Header.Get(extensionsHeader); got != "urn:ext:req" {
		t.Fatalf("SSE echo %q", got)
	}
	_, ms := s.rest(t)
	if len(ms) == 0 || str(t, ms[len(ms)-1], "result", "statusUpdate", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Fatalf("stream %v", ms)
	}
	// A refused streaming call echoes too: the client learns what was
	// active when it was refused.
	resp := h.post(t.Context(), req{version: "1.0", body: sendV10("SendStreamingMessage", "m", "", ""),
		header: map[string]string{extensionsHeader: "urn:ext:a"}})
	defer resp.Body.Close()
	if got := resp.Header.Get(extensionsHeader); got != "urn:ext:a" || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("refused stream echo %q (%s)", got, resp.Header.Get("Content-Type"))
	}
}

func TestExtensionsNoneDeclared(t *testing.T) {
	agent := &recordingAgent{}
	h := newHarness(t, agent)
	resp := h.postRaw(t, sendV10("SendMessage", "m", "", ""), http.Header{"A2a-Version": {"1.0"}, "A2a-Extensions": {"urn:ext:a"}})
	if m := decode(t, readAll(t, resp)); !has(m, "result") {
		t.Fatalf("refused: %v", m)
	}
	if _, ok := resp.Header[extensionsKey]; ok {
		t.Fatalf("echoed %q with nothing declared", resp.Header.Get(extensionsHeader))
	}
	if calls := agent.calls(); len(calls) != 1 || calls[0].Extensions != nil {
		t.Fatalf("upstream extensions %v", calls[0].Extensions)
	}
}

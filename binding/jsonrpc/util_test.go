package jsonrpc

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func stringsReader(s string) io.Reader { return strings.NewReader(s) }

func readAll(t testing.TB, resp *http.Response) []byte {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// idOf is the JSON-RPC id of a request body, as the tests' wantError
// expects it.
func idOf(body string) any {
	var m struct{ ID json.RawMessage }
	_ = json.Unmarshal([]byte(body), &m)
	var s string
	if json.Unmarshal(m.ID, &s) == nil {
		return s
	}
	var n int
	if json.Unmarshal(m.ID, &n) == nil {
		return n
	}
	return nil
}

// streamError makes a streaming call expected to fail before any event.
// The answer is a plain JSON-RPC error (200, application/json, exactly
// the error response and nothing else), as for any method; 0.3's
// tasks/resubscribe is the exception, a 200 event stream holding exactly
// one data frame, the error, with no SSE id.
func (h *harness) streamError(r req) map[string]any {
	h.t.Helper()
	var env struct{ Method string }
	_ = json.Unmarshal([]byte(r.body), &env)
	if env.Method != "tasks/resubscribe" {
		m := h.rpc(r)
		if m["result"] != nil || m["error"] == nil {
			h.t.Fatalf("want an error response, got %v", m)
		}
		return m
	}
	return h.sseError(r)
}

// sseError makes a streaming call expected to fail after its stream
// opened (a message reply's, whose head is sent before the agent
// answers), or a 0.3 tasks/resubscribe that fails: a 200 event stream
// holding exactly one data frame, the error, with no SSE id.
func (h *harness) sseError(r req) map[string]any {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	resp := h.post(ctx, r)
	defer resp.Body.Close()
	s := newSSEReader(h.t, resp)
	fs, ms := s.rest(h.t)
	if len(fs) != 1 {
		h.t.Fatalf("want one frame, got %d: %v", len(fs), fs)
	}
	if fs[0].id != "" {
		h.t.Fatalf("error frame has id %q", fs[0].id)
	}
	return ms[0]
}

// rawAnswer makes one call and returns the whole answer body. Unlike
// exchange it waits as long as any test wait: an answer that comes only
// after an agent timeout, or after 10000 events, may take a while on a
// loaded machine.
func rawAnswer(t *testing.T, h *harness, r req) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	resp := h.post(ctx, r)
	defer resp.Body.Close()
	return string(readAll(t, resp))
}

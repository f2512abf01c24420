package jsonrpc

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// File parts given by URL are references: the module passes the URL to
// the agent exactly as sent and never fetches it (no SSRF through the
// gateway, no size limit to apply).
func TestURLPartsPassedThroughNeverFetched(t *testing.T) {
	var fetched atomic.Int32
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		io.WriteString(w, "secret file")
	}))
	defer files.Close()
	// Escapes, a query and a fragment must all arrive untouched.
	uri := files.URL + "/dir/a%20b.png?x=1&y=%3C%3E&z=%2F#frag"

	h, calls := httpAgentHarness(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "seen")
	})
	for _, tc := range []struct {
		name, version, body string
	}{
		{"v10", "1.0", rpcCall("SendMessage", `{"message":{"messageId":"`+mid()+`","role":"ROLE_USER","parts":[{"url":"`+uri+`","mediaType":"image/png","filename":"a b.png"}]}}`)},
		{"v03", "", rpcCall("message/send", `{"message":{"kind":"message","messageId":"`+mid()+`","role":"user","parts":[{"kind":"file","file":{"uri":"`+uri+`","mimeType":"image/png","name":"a b.png"}}]}}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := h.rpc(req{version: tc.version, body: tc.body})
			if !has(resp, "result") {
				t.Fatalf("send failed: %v", resp)
			}
			c := nextCall(t, calls)
			if str(t, c.body, "input", "uri") != uri || str(t, c.body, "input", "mimeType") != "image/png" ||
				str(t, c.body, "input", "name") != "a b.png" || has(c.body, "input", "bytes") {
				t.Fatalf("agent input %v", c.body["input"])
			}
			if str(t, c.body, "message", "parts", 0, "file", "uri") != uri {
				t.Fatalf("agent message %v", c.body["message"])
			}
			// The task keeps the reference too, unresolved.
			task := at(t, resp, "result")
			if tc.version == "1.0" {
				task = at(t, task, "task")
			}
			if tc.version == "1.0" && str(t, task, "history", 0, "parts", 0, "url") != uri {
				t.Fatalf("history %v", task)
			}
			if tc.version == "" && str(t, task, "history", 0, "parts", 0, "file", "uri") != uri {
				t.Fatalf("history %v", task)
			}
		})
	}
	if n := fetched.Load(); n != 0 {
		t.Fatalf("the file URL was fetched %d times", n)
	}
}

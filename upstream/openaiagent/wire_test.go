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

// TestRunErrorBodies: an error answer that is not the API's error object
// (a string error member, a proxy's HTML page, a redirect) still names
// the status, with the start of the body.
func TestRunErrorBodies(t *testing.T) {
	for _, tc := range []struct {
		status   int
		ct, body string
		wantSaid string
	}{
		{404, "application/json", `{"error":"model not found"}`, `"model not found"`},
		{502, "text/html", `<html>Bad Gateway</html>`, `"<html>Bad Gateway</html>"`},
		{404, "application/json", `{"detail":"Not Found"}`, `"{\"detail\":\"Not Found\"}"`},
		{302, "text/plain", `moved`, `"moved"`},
	} {
		_, srv := newChatServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", tc.ct)
			w.WriteHeader(tc.status)
			fmt.Fprint(w, tc.body)
		})
		a := newAgent(t, srv.URL, nil)
		_, err := a.Run(context.Background(), &upstream.RunRequest{Message: text(protocol.RoleUser, "go")})
		want := fmt.Sprintf("openai: the model server at %s/v1/chat/completions answered HTTP %d: %s", srv.URL, tc.status, tc.wantSaid)
		if err == nil || err.Error() != want {
			t.Errorf("err %v, want %s", err, want)
		}
	}
}

// TestRunStreamError: an error object in the stream breaks the run after
// the text so far, the key redacted.
func TestRunStreamError(t *testing.T) {
	_, srv := newChatServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":null}]}\n\n")
		fmt.Fprint(w, "data: {\"error\":{\"message\":\"overloaded sk-test-key\"}}\n\n")
	})
	a := newAgent(t, srv.URL, nil)
	st, err := a.Run(context.Background(), &upstream.RunRequest{Message: text(protocol.RoleUser, "go")})
	if err != nil {
		t.Fatal(err)
	}
	texts, _, err := drain(t, st)
	const want = `openai: received error while streaming: {"message":"overloaded [redacted]"}`
	if strings.Join(texts, "") != "a" || err == nil || err.Error() != want {
		t.Fatalf("texts %q err %v, want %s", texts, err, want)
	}
}

// TestRunHeaders: the config's and the run's headers go with the request;
// they replace neither Content-Type nor Accept; Host sets the request's
// host; an Authorization header goes instead of the key.
func TestRunHeaders(t *testing.T) {
	var got []*http.Request
	_, srv := newChatServer(t, func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r)
		streamDeltas("stop", "ok")(w, r)
	})
	for _, h := range []http.Header{
		{"X-One": {"a", "b"}, "Host": {"model.example"}, "Content-Type": {"text/plain"}, "Accept": {"text/x"}},
		{"Authorization": {"Basic abc"}},
	} {
		a := newAgent(t, srv.URL, func(c *Config) { c.Headers = h })
		st, err := a.Run(context.Background(), &upstream.RunRequest{Message: text(protocol.RoleUser, "go"), Headers: http.Header{"X-Run": {"r"}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := drain(t, st); err != nil {
			t.Fatal(err)
		}
	}
	r := got[0]
	if r.Host != "model.example" || strings.Join(r.Header.Values("X-One"), ",") != "a,b" || r.Header.Get("X-Run") != "r" ||
		strings.Join(r.Header.Values("Content-Type"), ",") != "application/json" || strings.Join(r.Header.Values("Accept"), ",") != "application/json" ||
		r.Header.Get("Authorization") != "Bearer sk-test-key" {
		t.Errorf("first request: host %s, headers %v", r.Host, r.Header)
	}
	if a := got[1].Header.Values("Authorization"); len(a) != 1 || a[0] != "Basic abc" {
		t.Errorf("Authorization %q, want the header_up one alone", a)
	}
}

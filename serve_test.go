package caddya2a

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func TestJSONContentType(t *testing.T) {
	tests := map[string]bool{
		"":                                   true,
		"application/json":                   true,
		"application/json; charset=utf-8":    true,
		"Application/JSON":                   true,
		"application/a2a+json":               true,
		"application/a2a+json;charset=UTF-8": true,
		"text/plain":                         false,
		"application/x-www-form-urlencoded":  false,
		"application/jsonx":                  false,
		"application/json;;":                 false,
	}
	for ct, want := range tests {
		if got := jsonContentType(ct); got != want {
			t.Errorf("jsonContentType(%q) = %v, want %v", ct, got, want)
		}
	}
}

// TestServeHTTPEnvelope covers the HTTP checks made before the endpoint
// sees a request: they answer with caddyhttp errors Caddy renders.
func TestServeHTTPEnvelope(t *testing.T) {
	h := &Handler{CardPath: DefaultCardPath, RPCPath: DefaultRPCPath, MaxRequestBody: 16}
	tests := []struct {
		name    string
		method  string
		path    string
		ct      string
		body    string
		chunked bool
		status  int
		allow   string
		passed  bool
	}{
		{name: "GET on rpc", method: "GET", path: "/a2a", status: 405, allow: "POST"},
		{name: "PUT on rpc", method: "PUT", path: "/a2a", ct: "application/json", body: "{}", status: 405, allow: "POST"},
		{name: "POST on card", method: "POST", path: DefaultCardPath, status: 405, allow: "GET, HEAD"},
		{name: "wrong media type", method: "POST", path: "/a2a", ct: "text/plain", body: "{}", status: 415},
		{name: "declared too large", method: "POST", path: "/a2a", ct: "application/json", body: strings.Repeat("x", 17), status: 413},
		{name: "chunked too large", method: "POST", path: "/a2a", ct: "application/json", body: strings.Repeat("x", 17), chunked: true, status: 413},
		{name: "other path passes", method: "GET", path: "/elsewhere", passed: true},
		{name: "rpc prefix is not rpc", method: "GET", path: "/a2a/x", passed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "http://h"+tt.path, strings.NewReader(tt.body))
			if tt.ct != "" {
				r.Header.Set("Content-Type", tt.ct)
			}
			if tt.chunked {
				r.ContentLength = -1
			}
			w := httptest.NewRecorder()
			r = caddyhttp.PrepareRequest(r, caddy.NewReplacer(), w, nil)
			passed := false
			next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error {
				passed = true
				return nil
			})
			err := h.ServeHTTP(w, r, next)
			if passed != tt.passed {
				t.Fatalf("passed to next = %v, want %v", passed, tt.passed)
			}
			if tt.passed {
				return
			}
			var he caddyhttp.HandlerError
			if !errors.As(err, &he) {
				t.Fatalf("err = %v, want a caddyhttp.HandlerError", err)
			}
			if he.StatusCode != tt.status {
				t.Errorf("status = %d, want %d (%v)", he.StatusCode, tt.status, err)
			}
			if got := w.Header().Get("Allow"); got != tt.allow {
				t.Errorf("Allow = %q, want %q", got, tt.allow)
			}
		})
	}
}

func TestOwner(t *testing.T) {
	h := &Handler{Owner: "{http.request.header.X-User}"}
	r := httptest.NewRequest("POST", "http://h/a2a", nil)
	// A caller-sent value that looks like a placeholder must stay literal.
	r.Header.Set("X-User", "{env.HOME}")
	w := httptest.NewRecorder()
	r = caddyhttp.PrepareRequest(r, caddy.NewReplacer(), w, nil)
	if got := h.owner(r); got != "{env.HOME}" {
		t.Errorf("owner = %q, want the literal header value", got)
	}
	h.Owner = DefaultOwner
	if got := h.owner(r); got != "" {
		t.Errorf("owner without auth = %q, want anonymous", got)
	}
}

package caddya2a_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	caddya2a "github.com/caddy-a2a/caddy-a2a"
)

// discard is a ResponseWriter that keeps the status and nothing else.
type discard struct {
	h    http.Header
	code int
}

func (w *discard) Header() http.Header         { return w.h }
func (w *discard) WriteHeader(c int)           { w.code = c }
func (w *discard) Write(b []byte) (int, error) { return len(b), nil }

// BenchmarkServeSend is a blocking send through the whole handler
// (ServeHTTP: routing, the browser gate, the body, the binding, the
// service, the store) over JSON-RPC 1.0 and over HTTP+JSON, on one mount:
// what bench/run.sh's load step compares, without the network. The agent
// is a2a.upstreams.test (thirdparty_test.go), which answers one text event
// at once: only the module is measured.
func BenchmarkServeSend(b *testing.B) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	h := &caddya2a.Handler{
		UpstreamRaw: json.RawMessage(`{"kind":"test","url":"bench","greeting":"hello"}`),
		StoreRaw:    json.RawMessage(`{"max_tasks":1048576,"share":"bench-serve-send"}`),
		CardFields: caddya2a.CardFields{Name: "N", Description: "D",
			Skills: []caddya2a.Skill{{ID: "s", Name: "S", Description: "D", Tags: []string{"t"}}}},
		Owner:    "alice",
		RESTPath: "/a2a/rest",
	}
	if err := h.Provision(ctx); err != nil {
		b.Fatal(err)
	}
	defer h.Cleanup()
	if err := h.Validate(); err != nil {
		b.Fatal(err)
	}
	// Each send has a messageId of its own, or the module would answer
	// them as retries of the first (exactly-once sends): the id's digits
	// are written into the body in place.
	msg := `{"messageId":"m-000000000000","role":"ROLE_USER","parts":[{"text":"hello"}]}`
	for _, tc := range []struct{ name, path, body string }{
		{"jsonrpc-1.0", "/a2a", `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":` + msg + `}}`},
		{"rest-1.0", "/a2a/rest/message:send", `{"message":` + msg + `}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			raw := []byte(tc.body)
			digits := raw[bytes.Index(raw, []byte("m-0"))+2:][:12]
			var n uint64
			body := bytes.NewReader(raw)
			r := httptest.NewRequest(http.MethodPost, "http://agent.example"+tc.path, body)
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("A2A-Version", "1.0")
			w := &discard{h: http.Header{}}
			r = caddyhttp.PrepareRequest(r, caddy.NewReplacer(), w, nil)
			b.ReportAllocs()
			for b.Loop() {
				n++
				for i, v := len(digits)-1, n; i >= 0; i, v = i-1, v/10 {
					digits[i] = byte('0' + v%10)
				}
				body.Reset(raw)
				r.Body = io.NopCloser(body)
				r.ContentLength = int64(len(tc.body))
				clear(w.h)
				w.code = 0
				if err := h.ServeHTTP(w, r, caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { b.Fatal("passed on"); return nil })); err != nil || w.code != http.StatusOK {
					b.Fatalf("%s: %v %d", tc.name, err, w.code)
				}
			}
		})
	}
}

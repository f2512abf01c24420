package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
)

// TestHoldServe checks the stream's head and bytes, that they arrive while
// the stream is held, and that the handler returns once the client goes.
func TestHoldServe(t *testing.T) {
	done := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		done <- Hold{}.ServeHTTP(w, r, nil)
	}))
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/any/path", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":"t"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got := make([]byte, len(holdComment))
	if _, err := io.ReadFull(resp.Body, got); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" || string(got) != ": hold\n\n" {
		t.Fatalf("HTTP %d %q, body %q", resp.StatusCode, resp.Header.Get("Content-Type"), got)
	}
	select {
	case err := <-done:
		t.Fatalf("the handler returned (%v) while the client still reads", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the handler still holds the stream 2 s after the client went")
	}
}

// TestHoldCaddyfile adapts Caddyfiles with the directive: alone in a site
// (no order option needed) it becomes the bench_hold handler; it takes no
// arguments and no block.
func TestHoldCaddyfile(t *testing.T) {
	for _, tc := range []struct {
		site, wantErr string
	}{
		{site: "bench_hold"},
		{site: "bench_hold now", wantErr: "wrong argument count or unexpected line ending after 'now'"},
		{site: "bench_hold {\n\tfor 1m\n}", wantErr: "wrong argument count or unexpected line ending after 'for'"},
	} {
		t.Run(tc.site, func(t *testing.T) {
			cfg := "{\n\tadmin off\n}\n\nhttp://:8080 {\n\t" + tc.site + "\n}\n"
			out, _, err := caddyfile.Adapter{ServerType: httpcaddyfile.ServerType{}}.Adapt([]byte(cfg), nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want it to say %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := `"routes":[{"handle":[{"handler":"bench_hold"}]}]`; !strings.Contains(string(out), want) {
				t.Fatalf("adapted config %s\nhas no %s", out, want)
			}
		})
	}
}

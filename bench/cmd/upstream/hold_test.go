package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestHold checks the hold stream's bytes, that they arrive while the
// stream is still held, and both ways it ends: max elapsed, client gone.
func TestHold(t *testing.T) {
	done := make(chan struct{}, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/hold/{max}", func(w http.ResponseWriter, r *http.Request) {
		hold(w, r)
		done <- struct{}{}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	t.Run("bad max", func(t *testing.T) {
		for _, limit := range []string{"soon", "0s", "-1s"} {
			resp, err := http.Get(srv.URL + "/hold/" + limit)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			<-done
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("/hold/%s: HTTP %d, want 404", limit, resp.StatusCode)
			}
		}
	})
	t.Run("max elapsed", func(t *testing.T) {
		start := time.Now()
		resp, err := http.Post(srv.URL+"/hold/80ms", "application/json", strings.NewReader(`{"id":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		first, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took >= 80*time.Millisecond {
			t.Errorf("first line after %s: not flushed before the hold", took)
		}
		rest, err := io.ReadAll(br)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || first+string(rest) != ": hold\n\n" {
			t.Errorf("HTTP %d %q, body %q", resp.StatusCode, resp.Header.Get("Content-Type"), first+string(rest))
		}
		if took := time.Since(start); took < 80*time.Millisecond {
			t.Errorf("ended after %s, before max", took)
		}
		<-done
	})
	t.Run("client gone", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/hold/1h", strings.NewReader("{}"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		cancel()
		resp.Body.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("the handler still holds a stream whose client left")
		}
	})
}

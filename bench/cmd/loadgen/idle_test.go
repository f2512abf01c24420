package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// idleServer answers SubscribeToTask like the module on an auth-required
// task, over HTTP/1.1 and HTTP/2 cleartext, allowing maxStreams streams per
// HTTP/2 connection. Task "working" gets a wrong first frame, task "drop"
// a stream that ends right after it; every other stream stays open until
// the client leaves. open counts the streams open now, h2 those that came
// over HTTP/2.
func idleServer(t *testing.T, maxStreams int) (srv *httptest.Server, open, h2 *atomic.Int64) {
	open, h2 = new(atomic.Int64), new(atomic.Int64)
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Method string `json:"method"`
			Params struct {
				ID string `json:"id"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Method != "SubscribeToTask" ||
			r.Header.Get("A2A-Version") != "1.0" || r.Header.Get("Accept") != "text/event-stream" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if r.ProtoMajor == 2 {
			h2.Add(1)
		}
		state := "TASK_STATE_AUTH_REQUIRED"
		if req.Params.ID == "working" {
			state = "TASK_STATE_WORKING"
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, ": hello\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"task\":{\"id\":%q,\"status\":{\"state\":%q}}}}\n\n", req.Params.ID, state)
		w.(http.Flusher).Flush()
		if req.Params.ID == "drop" {
			return
		}
		open.Add(1)
		defer open.Add(-1)
		<-r.Context().Done()
	}))
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	srv.Config.Protocols = &p
	srv.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: maxStreams}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, open, h2
}

// waitFor polls cond until it holds or a second has passed.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("after 1 s: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestOpenStreams opens five streams over each protocol, two per
// connection for h2c, and checks they land where they should and stay
// open until closed.
func TestOpenStreams(t *testing.T) {
	for _, tc := range []struct {
		proto     string
		wantConns int
		wantH2    int64
	}{
		{"h1", 5, 0},
		{"h2c", 3, 5},
	} {
		t.Run(tc.proto, func(t *testing.T) {
			srv, open, h2 := idleServer(t, 3)
			o, err := newOpener(tc.proto, srv.URL+"/a2a", 2)
			if err != nil {
				t.Fatal(err)
			}
			defer o.close()
			var closed atomic.Int64
			ids := []string{"t1", "t2", "t3", "t4", "t5"}
			// Two batches, as the idle command opens its levels.
			ss, err := openStreams(o, 0, ids[:2], 4, &closed)
			defer func() { closeAll(ss) }()
			if err != nil {
				t.Fatal(err)
			}
			more, err := openStreams(o, 2, ids[2:], 4, &closed)
			ss = append(ss, more...)
			if err != nil {
				t.Fatal(err)
			}
			if len(ss) != 5 || o.conns() != tc.wantConns || h2.Load() != tc.wantH2 {
				t.Fatalf("%d streams on %d connections, %d over HTTP/2; want 5 on %d, %d", len(ss), o.conns(), h2.Load(), tc.wantConns, tc.wantH2)
			}
			waitFor(t, "5 streams open on the server", func() bool { return open.Load() == 5 })
			if n := closed.Load(); n != 0 {
				t.Fatalf("%d streams ended", n)
			}
			closeAll(ss)
			ss = nil
			waitFor(t, "no stream open on the server", func() bool { return open.Load() == 0 })
		})
	}
}

// TestOpenStreamsFailures checks that a wrong first frame, a stream the
// server ends, and an h2c stream beyond the server's limit are all
// counted, never taken for an idle stream.
func TestOpenStreamsFailures(t *testing.T) {
	for _, proto := range []string{"h1", "h2c"} {
		t.Run(proto+"/wrong first frame", func(t *testing.T) {
			srv, _, _ := idleServer(t, 10)
			o, _ := newOpener(proto, srv.URL+"/a2a", 5)
			defer o.close()
			var closed atomic.Int64
			ss, err := openStreams(o, 0, []string{"t1", "working"}, 1, &closed)
			defer closeAll(ss)
			if err == nil || !strings.HasPrefix(err.Error(), "stream 2: first frame is not the auth-required task") || len(ss) != 1 {
				t.Fatalf("%d streams open, err %v", len(ss), err)
			}
		})
		t.Run(proto+"/stream ended", func(t *testing.T) {
			srv, _, _ := idleServer(t, 10)
			o, _ := newOpener(proto, srv.URL+"/a2a", 5)
			defer o.close()
			var closed atomic.Int64
			ss, err := openStreams(o, 0, []string{"t1", "drop", "t3"}, 2, &closed)
			defer closeAll(ss)
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "one stream counted as ended", func() bool { return closed.Load() == 1 })
		})
	}
	t.Run("h2c/over the server's stream limit", func(t *testing.T) {
		srv, _, _ := idleServer(t, 2)
		o := &h2cOpener{rpc: srv.URL + "/a2a", perConn: 3, timeout: 300 * time.Millisecond}
		defer o.close()
		var closed atomic.Int64
		// One at a time, so the server's limit is known to the client
		// by the third stream, which then waits for a free slot in vain.
		// (Opened at once, a stream may be refused instead: an error too.)
		ss, err := openStreams(o, 0, []string{"t1", "t2", "t3"}, 1, &closed)
		defer closeAll(ss)
		if err == nil || !strings.HasPrefix(err.Error(), "stream 3: no answer within 300ms") || len(ss) != 2 {
			t.Fatalf("%d streams open, err %v; want 2 and stream 3 timed out", len(ss), err)
		}
	})
}

func closeAll(ss []io.Closer) {
	for _, s := range ss {
		s.Close()
	}
}

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The generator's checks decide whether a target is reported at all, so
// they are tested on answers that must pass and answers that must not.

func TestCheck(t *testing.T) {
	const w, seq = 3, 42 // text "hi 3-42"
	v10 := func(state, text string) string {
		return `{"jsonrpc":"2.0","id":42,"result":{"task":{"id":"t1","status":{"state":"` + state +
			`"},"artifacts":[{"artifactId":"a","parts":[{"text":"` + text + `"}]}]}}}`
	}
	v03 := func(kind, state, text string) string {
		return `{"jsonrpc":"2.0","id":42,"result":{"kind":"` + kind + `","id":"t1","status":{"state":"` + state +
			`"},"artifacts":[{"artifactId":"a","parts":[{"kind":"text","text":"` + text + `"}]}]}}`
	}
	tests := []struct {
		name   string
		kind   Kind
		status int
		body   string
		ok     bool
	}{
		{"ceiling echo", KindCeiling, 200, "hi 3-42", true},
		{"ceiling other text", KindCeiling, 200, "hi 3-41", false},
		{"ceiling 502", KindCeiling, 502, "hi 3-42", false},
		{"v1.0 completed", KindV10, 200, v10("TASK_STATE_COMPLETED", "hi 3-42"), true},
		{"rest completed", KindREST, 200, `{"task":{"id":"t1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"parts":[{"text":"hi 3-42"}]}]}}`, true},
		{"rest failed", KindREST, 200, `{"task":{"id":"t1","status":{"state":"TASK_STATE_FAILED"},"artifacts":[{"parts":[{"text":"hi 3-42"}]}]}}`, false},
		{"rest enveloped", KindREST, 200, v10("TASK_STATE_COMPLETED", "hi 3-42"), false},
		{"rest 400", KindREST, 400, `{"error":{"code":400}}`, false},
		{"v1.0 failed", KindV10, 200, v10("TASK_STATE_FAILED", "hi 3-42"), false},
		{"v1.0 wrong text", KindV10, 200, v10("TASK_STATE_COMPLETED", "hi 3-4"), false},
		{"v1.0 no artifact", KindV10, 200, `{"jsonrpc":"2.0","id":42,"result":{"task":{"id":"t1","status":{"state":"TASK_STATE_COMPLETED"}}}}`, false},
		{"v1.0 other id", KindV10, 200, strings.Replace(v10("TASK_STATE_COMPLETED", "hi 3-42"), `"id":42`, `"id":43`, 1), false},
		{"v1.0 error", KindV10, 200, `{"jsonrpc":"2.0","id":42,"error":{"code":-32603,"message":"Internal error"}}`, false},
		{"v1.0 message not task", KindV10, 200, `{"jsonrpc":"2.0","id":42,"result":{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"hi 3-42"}]}}}`, false},
		{"v1.0 0.3 state names", KindV10, 200, v10("completed", "hi 3-42"), false},
		{"v1.0 not JSON", KindV10, 200, `{"jsonrpc":`, false},
		{"v0.3 completed", KindV03, 200, v03("task", "completed", "hi 3-42"), true},
		{"v0.3 1.0 state name", KindV03, 200, v03("task", "TASK_STATE_COMPLETED", "hi 3-42"), false},
		{"v0.3 kind message", KindV03, 200, v03("message", "completed", "hi 3-42"), false},
		{"v0.3 wrapped like 1.0", KindV03, 200, v10("completed", "hi 3-42"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := check(tc.kind, response{Status: tc.status, Body: []byte(tc.body)}, w, seq, nil)
			if (err == nil) != tc.ok {
				t.Fatalf("check = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// TestRequests checks that every kind's request is valid JSON carrying the
// text the answer is checked against, with the headers its server needs.
func TestRequests(t *testing.T) {
	for _, tc := range []struct {
		kind          Kind
		method, ver   string
		wantInputText bool
	}{
		{kind: KindCeiling, wantInputText: true},
		{kind: KindV10, method: "SendMessage", ver: "1.0"},
		{kind: KindV03, method: "message/send"},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			rb, host, err := newRequestBuilder(tc.kind, "http://127.0.0.1:1234/a2a")
			if err != nil || host != "127.0.0.1:1234" {
				t.Fatal(host, err)
			}
			raw, _ := rb.build(nil, nil, 5, 9)
			r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
			if err != nil {
				t.Fatalf("%v in %q", err, raw)
			}
			if r.Method != "POST" || r.URL.Path != "/a2a" || r.Header.Get("A2A-Version") != tc.ver ||
				r.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("request %s %s %v", r.Method, r.URL, r.Header)
			}
			var m map[string]any
			if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
				t.Fatal(err)
			}
			if tc.wantInputText {
				if m["input"] != "hi 5-9" {
					t.Fatalf("input %v", m["input"])
				}
				return
			}
			msg := m["params"].(map[string]any)["message"].(map[string]any)
			part := msg["parts"].([]any)[0].(map[string]any)
			if m["method"] != tc.method || m["id"] != float64(9) || part["text"] != "hi 5-9" || !strings.HasPrefix(msg["messageId"].(string), "m-") || !strings.HasSuffix(msg["messageId"].(string), "-5-9") {
				t.Fatalf("body %v", m)
			}
		})
	}
}

// TestConnReadsResponses runs the bare client against net/http: fixed
// length and chunked bodies on one keep-alive connection, then an SSE
// stream.
func TestConnReadsResponses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/fixed":
			w.Header().Set("Content-Length", "5")
			_, _ = w.Write([]byte("hello"))
		case "/chunked":
			for _, s := range []string{"ab", "cd", "ef"} {
				_, _ = w.Write([]byte(s))
				w.(http.Flusher).Flush()
			}
		case "/sse":
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte(": ping\n\nid: 1\ndata: {\"a\":1}\n\nid: 2\ndata: x\ndata: y\n\n"))
		}
	}))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	c, err := dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct{ path, want string }{{"/fixed", "hello"}, {"/chunked", "abcdef"}, {"/fixed", "hello"}} {
		resp, err := c.roundTrip([]byte("GET " + tc.path + " HTTP/1.1\r\nHost: " + addr + "\r\n\r\n"))
		if err != nil || resp.Status != 200 || string(resp.Body) != tc.want {
			t.Fatalf("%s: %v %d %q", tc.path, err, resp.Status, resp.Body)
		}
	}
	if err := c.send([]byte("GET /sse HTTP/1.1\r\nHost: " + addr + "\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	resp, err := c.readHead()
	if err != nil || resp.ContentType != "text/event-stream" {
		t.Fatal(err, resp.ContentType)
	}
	sr := newSSEReader(c, &resp)
	for _, want := range []string{`{"a":1}`, "x\ny"} {
		data, err := sr.next()
		if err != nil || string(data) != want {
			t.Fatalf("frame %q %v, want %q", data, err, want)
		}
	}
}

func TestChunkStamp(t *testing.T) {
	ts, err := chunkStamp([]byte(`{"text":"1796065279220667058"}` + "\n"))
	if err != nil || ts != 1796065279220667058 {
		t.Fatal(ts, err)
	}
	if _, err := chunkStamp([]byte(`{"status":"working"}`)); err == nil {
		t.Fatal("a line without text was accepted")
	}
}

func TestPercentile(t *testing.T) {
	s := make([]int64, 100)
	for i := range s {
		s[i] = int64(i + 1)
	}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 50}, {0.99, 99}, {1, 100}, {0, 1}} {
		if got := percentile(s, tc.q); got != tc.want {
			t.Fatalf("p%v = %v, want %v", tc.q, got, tc.want)
		}
	}
}

// TestPhaseCountsAndChecks runs a short closed loop against an in-process
// echo upstream, then against one that answers wrong every 10th time.
func TestPhaseCountsAndChecks(t *testing.T) {
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var c struct{ Input string }
		_ = json.NewDecoder(r.Body).Decode(&c)
		n++
		if r.URL.Path == "/bad" && n%10 == 0 {
			c.Input = "wrong"
		}
		_, _ = w.Write([]byte(c.Input))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		path    string
		wantErr bool
	}{{"/echo", false}, {"/bad", true}} {
		tg, err := parseTarget("name=x,kind=ceiling,url=" + srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		res := phase{conns: 1, limit: 50}.run(tg)
		if res.ok+res.errs != 50 || (res.errs > 0) != tc.wantErr || len(res.lat) != int(res.ok) {
			t.Fatalf("%s: ok %d errs %d (%s) lat %d", tc.path, res.ok, res.errs, res.firstErr, len(res.lat))
		}
	}
}

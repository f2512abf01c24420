package jsonrpc

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/caddy-a2a/caddy-a2a/upstream"
	"github.com/caddy-a2a/caddy-a2a/upstream/httpagent"
)

// leakWords are fragments of what Go, net/http and the upstream package
// say about these failures; none may reach a caller.
var leakWords = []string{"upstream", "dial", "refused", "deadline", "EOF", "Internal Server Error", "too large",
	"boom-secret", "invalid character", "timeout"}

// TestUpstreamMisbehaviour runs each way an HTTP agent can fail through
// the real httpagent.Agent: every one ends as a failed task with the
// generic message, in blocking and streaming calls of both versions; the
// endpoint keeps serving; and no goroutine outlives the case.
func TestUpstreamMisbehaviour(t *testing.T) {
	const timeout = 250 * time.Millisecond
	for _, tc := range []struct {
		name string
		// serve is the agent; nil means no agent listens at all.
		serve func(w http.ResponseWriter, r *http.Request)
		cfg   func(c *httpagent.Config)
	}{
		{name: "refuses connections"},
		{name: "hangs past the timeout", serve: func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}},
		{name: "answers 500", serve: func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "boom-secret: stack at db.go:12", http.StatusInternalServerError)
		}},
		{name: "answers invalid JSON", serve: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"answer": tru boom-secret`)
		}},
		{name: "breaks an NDJSON stream mid-line", serve: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-ndjson")
			io.WriteString(w, `{"text":"first"}`+"\n"+`{"text":"sec`)
			http.NewResponseController(w).Flush()
			// Drop the connection without ending the chunked body.
			panic(http.ErrAbortHandler)
		}},
		{name: "sends an event line over the size limit", serve: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-ndjson")
			io.WriteString(w, `{"text":"first"}`+"\n"+`{"text":"`+strings.Repeat("x", 200)+`"}`+"\n")
		}, cfg: func(c *httpagent.Config) { c.MaxEventBytes = 64 }},
		{name: "nests JSON 5000 levels deep", serve: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, strings.Repeat("[", 5000)+strings.Repeat("]", 5000))
		}},
		{name: "sends a javascript: file URL", serve: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-ndjson")
			io.WriteString(w, `{"text":"first"}`+"\n"+`{"file":{"uri":"javascript:alert(1)","name":"../../x"}}`+"\n")
		}},
		{name: "compresses its answer unasked", serve: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Encoding", "gzip")
			io.WriteString(w, "\x1f\x8b\x08\x00\x00\x00\x00\x00")
		}, cfg: func(c *httpagent.Config) { c.Client = nil }}, // the default client asks for no coding
		{name: "sends a 9 MiB header", serve: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Pad", strings.Repeat("a", 9<<20))
			io.WriteString(w, "ok")
		}, cfg: func(c *httpagent.Config) { c.Client = nil }},
		{name: "never ends a stream", serve: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"text\":\"first\"}\n\n")
			rc := http.NewResponseController(w)
			rc.Flush()
			for {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(20 * time.Millisecond):
					io.WriteString(w, ": still here\n\n")
					rc.Flush()
				}
			}
		}},
	} {
		ignore := goleak.IgnoreCurrent()
		t.Run(tc.name, func(t *testing.T) {
			cfg := httpagent.Config{HTTPConfig: upstream.HTTPConfig{Timeout: timeout}}
			agentEndpoint(t, &cfg, tc.serve)
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			agent, err := httpagent.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, agent)

			var ids []string
			for _, r := range []req{
				{version: "1.0", body: sendV10("SendMessage", mid(), "", "")},
				{body: sendV03("message/send", mid(), "", "")},
			} {
				// Not exchange: its short deadline is too close to the agent
				// timeout on a loaded machine.
				raw := rawAnswer(t, h, r)
				noLeak(t, raw)
				m := decode(t, []byte(raw))
				task := at(t, m, "result")
				if r.version == "1.0" {
					task = at(t, task, "task")
				}
				wantFailed(t, task)
				ids = append(ids, str(t, task, "id"))
			}
			for _, r := range []req{
				{version: "1.0", body: sendV10("SendStreamingMessage", mid(), "", "")},
				{body: sendV03("message/stream", mid(), "", "")},
			} {
				s := h.openStream(t, r)
				fs, ms := s.rest(t)
				for _, f := range fs {
					noLeak(t, f.data)
				}
				last := at(t, ms[len(ms)-1], "result")
				if r.version == "1.0" {
					last = at(t, last, "statusUpdate")
				} else if last.(map[string]any)["final"] != true {
					t.Fatalf("last 0.3 frame is not final: %v", last)
				}
				wantFailed(t, last)
				ids = append(ids, str(t, last, "taskId"))
			}

			// Still serving, and every task is recorded as failed.
			waitFor(t, "runs to end", func() bool { return runnerIdle(h.runner) })
			for _, id := range ids {
				m := h.rpc(req{version: "1.0", body: rpcCall("GetTask", `{"id":"`+id+`"}`)})
				wantFailed(t, at(t, m, "result"))
			}
		})
		goleak.VerifyNone(t, ignore)
	}
}

func noLeak(t *testing.T, s string) {
	t.Helper()
	for _, w := range leakWords {
		if strings.Contains(s, w) {
			t.Fatalf("%q reached the caller:\n%s", w, s)
		}
	}
}

// wantFailed checks a task (or status update) is failed with the generic
// status message, in either version's spelling.
func wantFailed(t *testing.T, v any) {
	t.Helper()
	state := str(t, v, "status", "state")
	if state != "TASK_STATE_FAILED" && state != "failed" {
		t.Fatalf("state %s, want failed: %v", state, v)
	}
	if got := str(t, v, "status", "message", "parts", 0, "text"); got != failedText {
		t.Fatalf("status message %q", got)
	}
}

// agentEndpoint points cfg at an httptest agent answering with serve, or,
// for a nil serve, at a port nothing listens on (a dead agent).
func agentEndpoint(t *testing.T, cfg *httpagent.Config, serve http.HandlerFunc) {
	t.Helper()
	if serve == nil {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		cfg.URL = "http://" + l.Addr().String() + "/agent"
		l.Close()
		return
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reading the body to its end is what lets net/http notice the
		// caller hanging up (r.Context ends).
		io.Copy(io.Discard, r.Body)
		serve(w, r)
	}))
	t.Cleanup(srv.Close)
	cfg.URL, cfg.Client = srv.URL, srv.Client()
}

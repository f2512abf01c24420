package httpagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// newAgent starts an httptest server running h and an agent pointed at it.
func newAgent(t *testing.T, h http.HandlerFunc, mod ...func(*Config)) *Agent {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cfg := Config{URL: srv.URL + "/agent"}
	for _, m := range mod {
		m(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// collect runs r and drains the stream: the events and the error that ended
// it (nil for io.EOF).
func collect(t *testing.T, a upstream.Agent, r *upstream.RunRequest) ([]upstream.Event, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := a.Run(ctx, r)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var evs []upstream.Event
	for {
		ev, err := s.Next()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func reply(ct, state, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		if state != "" {
			w.Header().Set(HeaderTaskState, state)
		}
		io.WriteString(w, body)
	}
}

func TestRequestOnTheWire(t *testing.T) {
	type seen struct {
		method, path, ct, accept, extra, host string
		body                                  []byte
	}
	got := make(chan seen, 1)
	a := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("Accept"), r.Header.Get("X-Api-Key"), r.Host, b}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok")
	}, func(c *Config) {
		c.Headers = http.Header{"X-Api-Key": {"secret"}, "Content-Type": {"text/plain"}, "Host": {"agent.internal"}}
	})
	r := requestCases()["full"]
	if _, err := collect(t, a, r); err != nil {
		t.Fatal(err)
	}
	s := <-got
	want, _ := appendRequestBody(nil, r)
	if s.method != "POST" || s.path != "/agent" || s.ct != "application/json" || s.extra != "secret" || s.host != "agent.internal" ||
		s.accept != "application/x-ndjson, text/event-stream, application/json, text/plain" || string(s.body) != string(want) {
		t.Errorf("request on the wire: %+v", s)
	}
}

// ctxKey is a context key of the RequestContext test.
type ctxKey struct{}

// TestRequestContext: RequestContext derives the context of the request
// the transport sees, from the run's context (its cancellation kept).
func TestRequestContext(t *testing.T) {
	seen := make(chan any, 1)
	a := newAgent(t, reply("text/plain", "", "ok"), func(c *Config) {
		c.RequestContext = func(ctx context.Context) context.Context { return context.WithValue(ctx, ctxKey{}, "given") }
		c.Client = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			seen <- r.Context().Value(ctxKey{})
			return http.DefaultTransport.RoundTrip(r)
		})}
	})
	if _, err := collect(t, a, requestCases()["full"]); err != nil {
		t.Fatal(err)
	}
	if v := <-seen; v != "given" {
		t.Errorf("the transport saw %v in the request's context, want given", v)
	}

	// The run's cancellation still reaches the request.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.Run(ctx, requestCases()["full"]); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled run: %v, want context.Canceled", err)
	}
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

// RoundTrip calls f.
func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestPlainAnswers(t *testing.T) {
	completed := upstream.Event{Kind: upstream.EventStatus, State: protocol.StateCompleted}
	// A plain answer is the whole main artifact: Whole tells the handler no chunk follows.
	parts := func(p protocol.Part) upstream.Event {
		return upstream.Event{Kind: upstream.EventParts, Parts: []protocol.Part{p}, Whole: true}
	}
	tests := []struct {
		name, ct, state, body string
		want                  []upstream.Event
		wantErr               string
	}{
		{"text", "text/plain; charset=utf-8", "", "hello\nworld", []upstream.Event{parts(text("hello\nworld")), completed}, ""},
		{"markdown", "text/markdown", "", "# hi", []upstream.Event{parts(text("# hi")), completed}, ""},
		{"json string", "application/json", "", ` "hi \u00e9" `, []upstream.Event{parts(text("hi é")), completed}, ""},
		{"json object", "application/json; charset=utf-8", "", `{"a": 1}` + "\n", []upstream.Event{parts(data(`{"a": 1}`)), completed}, ""},
		{"json array", "application/json", "", `[1,2]`, []upstream.Event{parts(data(`[1,2]`)), completed}, ""},
		{"json number", "application/json", "", `7`, []upstream.Event{parts(data(`7`)), completed}, ""},
		{"+json", "application/problem+json", "", `{"x":true}`, []upstream.Event{parts(data(`{"x":true}`)), completed}, ""},
		{"invalid json", "application/json", "", `{"a":`, nil, "not valid JSON"},
		{"file", "image/png", "", "\x89PNG", []upstream.Event{parts(protocol.Part{Kind: protocol.PartFile, Raw: []byte("\x89PNG"), MediaType: "image/png"}), completed}, ""},
		{"no content type", "", "", "\x00\x01", []upstream.Event{parts(protocol.Part{Kind: protocol.PartFile, Raw: []byte("\x00\x01"), MediaType: "application/octet-stream"}), completed}, ""},
		{"empty body", "text/plain", "", "", []upstream.Event{completed}, ""},
		{"completed header", "text/plain", "completed", "done", []upstream.Event{parts(text("done")), completed}, ""},
		{"input-required", "text/plain", "input-required", "which city?", []upstream.Event{{Kind: upstream.EventStatus, State: protocol.StateInputRequired, Parts: []protocol.Part{text("which city?")}}}, ""},
		{"auth-required", "text/plain", "Auth-Required", "log in", []upstream.Event{{Kind: upstream.EventStatus, State: protocol.StateAuthRequired, Parts: []protocol.Part{text("log in")}}}, ""},
		{"rejected json", "application/json", "rejected", `{"why":"no"}`, []upstream.Event{{Kind: upstream.EventStatus, State: protocol.StateRejected, Parts: []protocol.Part{data(`{"why":"no"}`)}}}, ""},
		{"failed", "text/plain", "failed", "sorry", []upstream.Event{{Kind: upstream.EventStatus, State: protocol.StateFailed, Parts: []protocol.Part{text("sorry")}}}, ""},
		{"failed empty", "text/plain", "failed", "", []upstream.Event{{Kind: upstream.EventStatus, State: protocol.StateFailed}}, ""},
		{"unknown state", "text/plain", "working", "x", nil, "unknown A2A-Task-State"},
		{"canceled state", "text/plain", "canceled", "x", nil, "unknown A2A-Task-State"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := newAgent(t, reply(tc.ct, tc.state, tc.body))
			if tc.ct == "" {
				// net/http sniffs a missing Content-Type; send none at all.
				a = newAgent(t, func(w http.ResponseWriter, r *http.Request) {
					w.Header()["Content-Type"] = nil
					io.WriteString(w, tc.body)
				})
			}
			evs, err := collect(t, a, req(text("hi")))
			wantEvents(t, evs, err, tc.want, tc.wantErr)
		})
	}
}

// wantEvents checks a run's events against want, or its error against
// wantErr (a part of its message) when wantErr is set.
func wantEvents(t *testing.T, evs []upstream.Event, err error, want []upstream.Event, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("err %v, want %q", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(evs, want) {
		t.Errorf("events\n got %+v\nwant %+v", evs, want)
	}
}

func TestPlainFileName(t *testing.T) {
	a := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("Content-Disposition", `attachment; filename="report.pdf"`)
		io.WriteString(w, "%PDF")
	})
	evs, err := collect(t, a, req(text("hi")))
	if err != nil || len(evs) != 2 || evs[0].Parts[0].Filename != "report.pdf" {
		t.Fatalf("%+v %v", evs, err)
	}
}

func TestPlainBodyLimit(t *testing.T) {
	body := strings.Repeat("x", 100)
	for _, tc := range []struct {
		max  int64
		fail bool
	}{{100, false}, {99, true}} {
		a := newAgent(t, reply("text/plain", "", body), func(c *Config) { c.MaxBodyBytes = tc.max })
		_, err := collect(t, a, req(text("hi")))
		if (err != nil) != tc.fail {
			t.Errorf("max %d: err %v", tc.max, err)
		}
	}
}

func TestUpstreamFailures(t *testing.T) {
	t.Run("500", func(t *testing.T) {
		a := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "database exploded", http.StatusInternalServerError)
		})
		_, err := collect(t, a, req(text("hi")))
		var se *StatusError
		if !errors.As(err, &se) || se.StatusCode != 500 {
			t.Fatalf("err %v", err)
		}
		// The log names the agent the status came from.
		want := fmt.Sprintf("upstream: the agent at %s answered 500 Internal Server Error: %q", a.cfg.URL, "database exploded\n")
		if err.Error() != want {
			t.Fatalf("err %q, want %q", err, want)
		}
	})
	t.Run("redirect not followed", func(t *testing.T) {
		a := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		})
		_, err := collect(t, a, req(text("hi")))
		var se *StatusError
		if !errors.As(err, &se) || se.StatusCode != http.StatusFound {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("dead upstream", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		a, _ := New(Config{URL: "http://" + addr + "/"})
		if _, err := collect(t, a, req(text("hi"))); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("err %v, want connection refused", err)
		}
	})
	t.Run("timeout before answer", func(t *testing.T) {
		a := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body) // so the server notices the client leave
			<-r.Context().Done()
		}, func(c *Config) { c.Timeout = 50 * time.Millisecond })
		start := time.Now()
		_, err := collect(t, a, req(text("hi")))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err %v, want deadline exceeded", err)
		}
		// The log names the setting and the agent, not the deadline.
		if want := "the agent at " + a.cfg.URL + " did not finish within `timeout 50ms`"; err.Error() != want {
			t.Fatalf("err %q, want %q", err, want)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("timeout took %v", d)
		}
	})
	t.Run("timeout while streaming", func(t *testing.T) {
		a := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/x-ndjson")
			io.WriteString(w, `{"text":"a"}`+"\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, func(c *Config) { c.Timeout = 100 * time.Millisecond })
		evs, err := collect(t, a, req(text("hi")))
		if len(evs) != 1 || err == nil {
			t.Fatalf("events %+v err %v", evs, err)
		}
		if want := "the agent at " + a.cfg.URL + " did not finish within `timeout 100ms`"; err.Error() != want {
			t.Fatalf("err %q, want %q", err, want)
		}
	})
	t.Run("bad config", func(t *testing.T) {
		for _, u := range []string{"", "ftp://x/", "/relative", "http://"} {
			if _, err := New(Config{URL: u}); err == nil {
				t.Errorf("url %q accepted", u)
			}
		}
	})
}

// ndjson answers with the given lines, flushing after each.
func streamOf(ct string, chunks ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ct)
		for _, c := range chunks {
			io.WriteString(w, c)
			w.(http.Flusher).Flush()
		}
	}
}

func TestEventStreams(t *testing.T) {
	working := upstream.Event{Kind: upstream.EventStatus, State: protocol.StateWorking, Parts: []protocol.Part{text("thinking")}}
	tests := []struct {
		name    string
		ct      string
		chunks  []string
		want    []upstream.Event
		wantErr string
	}{
		{
			name: "ndjson full run",
			ct:   "application/x-ndjson",
			chunks: []string{
				`{"status":"working","message":"thinking"}` + "\n",
				"\n  \n",
				`{"text":"Hel"}` + "\n" + `{"text":"lo"}` + "\r\n",
				`{"data":{"n":1}}` + "\n",
				`{"file":{"uri":"https://x/y.png","mimeType":"image/png","name":"y.png"}}` + "\n",
				`{"artifact":{"name":"notes","description":"side","parts":[{"text":"n"},{"file":{"bytes":"aGk="}}]}}` + "\n",
				`{"status":"completed"}` + "\n",
				`{"text":"after the end is ignored"}` + "\n",
			},
			want: []upstream.Event{
				working,
				{Kind: upstream.EventText, Text: "Hel"},
				{Kind: upstream.EventText, Text: "lo"},
				{Kind: upstream.EventParts, Parts: []protocol.Part{data(`{"n":1}`)}},
				{Kind: upstream.EventParts, Parts: []protocol.Part{{Kind: protocol.PartFile, URL: "https://x/y.png", MediaType: "image/png", Filename: "y.png"}}},
				{Kind: upstream.EventArtifact, Artifact: &protocol.Artifact{Name: "notes", Description: "side", Parts: []protocol.Part{text("n"), {Kind: protocol.PartFile, Raw: []byte("hi")}}}},
				{Kind: upstream.EventStatus, State: protocol.StateCompleted},
			},
		},
		{
			name:   "ndjson eof without final status",
			ct:     "application/x-ndjson",
			chunks: []string{`{"text":"a"}` + "\n", `{"text":"b"}`},
			want:   []upstream.Event{{Kind: upstream.EventText, Text: "a"}, {Kind: upstream.EventText, Text: "b"}},
		},
		{
			name:   "ndjson input-required ends the run",
			ct:     "application/x-ndjson; charset=utf-8",
			chunks: []string{`{"status":"input-required","message":"which city?"}` + "\n", `{"text":"never"}` + "\n"},
			want:   []upstream.Event{{Kind: upstream.EventStatus, State: protocol.StateInputRequired, Parts: []protocol.Part{text("which city?")}}},
		},
		{
			name:   "error object fails with detail only",
			ct:     "application/x-ndjson",
			chunks: []string{`{"text":"a"}` + "\n", `{"error":"model overloaded"}` + "\n"},
			want:   []upstream.Event{{Kind: upstream.EventText, Text: "a"}, {Kind: upstream.EventStatus, State: protocol.StateFailed, Detail: "model overloaded"}},
		},
		{
			name:    "broken mid-line",
			ct:      "application/x-ndjson",
			chunks:  []string{`{"text":"a"}` + "\n" + `{"te`},
			want:    []upstream.Event{{Kind: upstream.EventText, Text: "a"}},
			wantErr: "not a JSON object",
		},
		{
			name:    "invalid json line",
			ct:      "application/x-ndjson",
			chunks:  []string{"not json\n"},
			wantErr: "not a JSON object",
		},
		{
			name:    "unknown shape",
			ct:      "application/x-ndjson",
			chunks:  []string{`{"delta":"a"}` + "\n"},
			wantErr: "unknown event shape",
		},
		{
			name: "sse multi-line data and ignored fields",
			ct:   "text/event-stream",
			chunks: []string{
				": keep-alive\n\n",
				"event: message\nid: 7\nretry: 10\ndata: {\"text\":\ndata:  \"a\\nb\"}\n\n",
				"data:{\"status\":\"working\",\r\ndata: \"message\":\"thinking\"}\r\n\r\n",
				"data: {\"text\":\"cr\"}\r\r",
				"data: {\"status\":\"failed\",\"message\":\"no\"}\n\n",
			},
			want: []upstream.Event{
				{Kind: upstream.EventText, Text: "a\nb"},
				working,
				{Kind: upstream.EventText, Text: "cr"},
				{Kind: upstream.EventStatus, State: protocol.StateFailed, Parts: []protocol.Part{text("no")}},
			},
		},
		{
			name:    "sse truncated event",
			ct:      "text/event-stream",
			chunks:  []string{"data: {\"text\":\"a\"}\n\n", "data: {\"text\":\"b\"}\n"},
			want:    []upstream.Event{{Kind: upstream.EventText, Text: "a"}},
			wantErr: "ended inside an event",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := newAgent(t, streamOf(tc.ct, tc.chunks...))
			evs, err := collect(t, a, req(text("hi")))
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
			if !reflect.DeepEqual(evs, tc.want) {
				t.Errorf("events\n got %+v\nwant %+v", evs, tc.want)
			}
		})
	}
}

func TestStreamCutMidLine(t *testing.T) {
	a := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		io.WriteString(w, `{"text":"a"}`+"\n"+`{"text":"b`)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the connection drops mid-line
	})
	evs, err := collect(t, a, req(text("hi")))
	if len(evs) != 1 || err == nil || err == io.EOF {
		t.Fatalf("events %+v err %v", evs, err)
	}
}

func TestEventSizeLimit(t *testing.T) {
	line := `{"text":"` + strings.Repeat("x", 100) + `"}` // 111 bytes
	for _, tc := range []struct {
		ct   string
		body string
	}{
		{"application/x-ndjson", line + "\n"},
		{"application/x-ndjson", line}, // no newline at all
		{"text/event-stream", "data: " + line + "\n\n"},
		{"text/event-stream", "data: {\"text\":\ndata: \"" + strings.Repeat("x", 99) + "\"}\n\n"}, // joined with "\n": 111 bytes
	} {
		a := newAgent(t, streamOf(tc.ct, tc.body), func(c *Config) { c.MaxEventBytes = 110 })
		if _, err := collect(t, a, req(text("hi"))); !errors.Is(err, ErrEventTooLarge) {
			t.Errorf("%s %q…: err %v, want ErrEventTooLarge", tc.ct, tc.body[:20], err)
		}
		a = newAgent(t, streamOf(tc.ct, tc.body), func(c *Config) { c.MaxEventBytes = 111 })
		if evs, err := collect(t, a, req(text("hi"))); err != nil || len(evs) != 1 {
			t.Errorf("%s at the limit: %+v %v", tc.ct, evs, err)
		}
	}
}

// TestEventsArriveImmediately: the agent writes one line, flushes and
// blocks until the test has that event, so any read-ahead deadlocks.
func TestEventsArriveImmediately(t *testing.T) {
	for _, ct := range []string{"application/x-ndjson", "text/event-stream"} {
		t.Run(ct, func(t *testing.T) {
			gotFirst := make(chan struct{})
			a := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", ct)
				if ct == "text/event-stream" {
					io.WriteString(w, "data: {\"text\":\"first\"}\n\n")
				} else {
					io.WriteString(w, `{"text":"first"}`+"\n")
				}
				w.(http.Flusher).Flush()
				select {
				case <-gotFirst:
				case <-r.Context().Done():
					return
				}
				if ct == "text/event-stream" {
					io.WriteString(w, "data: {\"status\":\"completed\"}\n\n")
				} else {
					io.WriteString(w, `{"status":"completed"}`+"\n")
				}
			}, func(c *Config) { c.Timeout = 5 * time.Second })
			s, err := a.Run(context.Background(), req(text("hi")))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ev, err := s.Next()
			if err != nil || ev.Text != "first" {
				t.Fatalf("first event %+v %v", ev, err)
			}
			close(gotFirst)
			if ev, err := s.Next(); err != nil || ev.State != protocol.StateCompleted {
				t.Fatalf("second event %+v %v", ev, err)
			}
			if _, err := s.Next(); err != io.EOF {
				t.Fatalf("after the final status: %v", err)
			}
		})
	}
}

func TestCloseAndCancelAbortTheRequest(t *testing.T) {
	for _, how := range []string{"close", "cancel"} {
		t.Run(how, func(t *testing.T) {
			aborted := make(chan struct{})
			a := newAgent(t, func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/x-ndjson")
				io.WriteString(w, `{"text":"a"}`+"\n")
				w.(http.Flusher).Flush()
				<-r.Context().Done()
				close(aborted)
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s, err := a.Run(ctx, req(text("hi")))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Next(); err != nil {
				t.Fatal(err)
			}
			if how == "close" {
				s.Close()
			} else {
				cancel()
				if _, err := s.Next(); err == nil || err == io.EOF {
					t.Errorf("Next after cancel: %v", err)
				}
				s.Close()
			}
			select {
			case <-aborted:
			case <-time.After(5 * time.Second):
				t.Fatal("the agent's request was not aborted")
			}
		})
	}
}

func TestRunRefusesInvalidRequest(t *testing.T) {
	called := false
	a := newAgent(t, func(w http.ResponseWriter, r *http.Request) { called = true })
	if _, err := a.Run(context.Background(), req(data(`{`))); err == nil || called {
		t.Fatalf("err %v, agent called %v", err, called)
	}
	_ = json.Valid
}

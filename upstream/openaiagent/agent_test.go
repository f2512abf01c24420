package openaiagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// chatServer is an OpenAI-compatible chat completions server: it records
// each request and streams the deltas given, in the API's wire format.
type chatServer struct {
	t      *testing.T
	mu     sync.Mutex
	bodies []map[string]any
	auth   []string
	// answer writes the response to one request.
	answer func(w http.ResponseWriter, r *http.Request)
}

func newChatServer(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) (*chatServer, *httptest.Server) {
	cs := &chatServer{t: t, answer: answer}
	srv := httptest.NewServer(cs)
	t.Cleanup(srv.Close)
	return cs, srv
}

func (cs *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, "wrong route "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	cs.mu.Lock()
	cs.bodies = append(cs.bodies, body)
	cs.auth = append(cs.auth, r.Header.Get("Authorization"))
	cs.mu.Unlock()
	cs.answer(w, r)
}

// streamDeltas answers with one chunk per delta, then the finish chunk
// and [DONE], as the chat completions API streams.
func streamDeltas(finish string, deltas ...string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		chunk := func(delta, finish string) {
			fr := "null"
			if finish != "" {
				fr = `"` + finish + `"`
			}
			fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":%s}]}\n\n", delta, fr)
			f.Flush()
		}
		fmt.Fprint(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n")
		for _, d := range deltas {
			chunk(d, "")
		}
		if finish != "" {
			chunk("", finish)
			fmt.Fprint(w, "data: [DONE]\n\n")
		}
		f.Flush()
	}
}

func newAgent(t *testing.T, base string, mod func(*Config)) *Agent {
	t.Helper()
	cfg := Config{BaseURL: base + "/v1", Model: "tiny", APIKey: "sk-test-key", System: "Be brief."}
	if mod != nil {
		mod(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func text(role protocol.Role, s string) protocol.Message {
	return protocol.Message{Role: role, Parts: []protocol.Part{{Kind: protocol.PartText, Text: s}}}
}

// drain reads a run to its end: the texts, the final status, the error.
func drain(t *testing.T, st upstream.Stream) (texts []string, status *upstream.Event, err error) {
	t.Helper()
	defer st.Close()
	for range 1000 {
		ev, err := st.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return texts, status, nil
			}
			return texts, status, err
		}
		switch ev.Kind {
		case upstream.EventText:
			texts = append(texts, ev.Text)
		case upstream.EventStatus:
			status = &ev
		default:
			t.Fatalf("event kind %d", ev.Kind)
		}
	}
	t.Fatal("the stream did not end")
	return
}

// TestRunStreamsTheConversation: the request carries the model, the key,
// stream: true and the conversation in order (system, the context's
// earlier tasks, this task's turns, the new message); each delta is one
// text event, in order.
func TestRunStreamsTheConversation(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/nowhere")
	cs, srv := newChatServer(t, streamDeltas("stop", "Hel", "lo", ", Ada"))
	a := newAgent(t, srv.URL, func(c *Config) {
		temp := 0.2
		c.Temperature, c.MaxTokens = &temp, 64
	})
	st, err := a.Run(context.Background(), &upstream.RunRequest{
		Context: []protocol.Message{text(protocol.RoleUser, "Hi, I am Ada."), text(protocol.RoleAgent, "Hello!")},
		Message: protocol.Message{Role: protocol.RoleUser, Parts: []protocol.Part{
			{Kind: protocol.PartText, Text: "Greet me"}, {Kind: protocol.PartData, Data: json.RawMessage(`{"formal":false}`)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	texts, status, err := drain(t, st)
	if err != nil || status != nil || strings.Join(texts, "|") != "Hel|lo|, Ada" {
		t.Fatalf("texts %q status %v err %v", texts, status, err)
	}
	if len(cs.bodies) != 1 {
		t.Fatalf("%d requests", len(cs.bodies))
	}
	got, _ := json.Marshal(cs.bodies[0])
	want := `{"max_tokens":64,"messages":[{"content":"Be brief.","role":"system"},{"content":"Hi, I am Ada.","role":"user"},` +
		`{"content":"Hello!","role":"assistant"},{"content":"Greet me\n{\"formal\":false}","role":"user"}],"model":"tiny","stream":true,"temperature":0.2}`
	if string(got) != want {
		t.Errorf("request\n got %s\nwant %s", got, want)
	}
	if cs.auth[0] != "Bearer sk-test-key" {
		t.Errorf("Authorization %q (the environment's key must not be used)", cs.auth[0])
	}
}

// TestRunImagesAndRefusals: an image file goes as an image part (inline
// bytes as a data URL, a URL as itself); another file type is refused with
// -32005 before any request.
func TestRunImagesAndRefusals(t *testing.T) {
	cs, srv := newChatServer(t, streamDeltas("stop", "a cat"))
	a := newAgent(t, srv.URL, func(c *Config) { c.System, c.APIKey = "", "" })
	st, err := a.Run(context.Background(), &upstream.RunRequest{Message: protocol.Message{Role: protocol.RoleUser, Parts: []protocol.Part{
		{Kind: protocol.PartText, Text: "What is this?"},
		{Kind: protocol.PartFile, MediaType: "image/png", Raw: []byte{0x89, 'P', 'N', 'G'}},
		{Kind: protocol.PartFile, MediaType: "image/jpeg", URL: "https://img.example/cat.jpg"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := drain(t, st); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(cs.bodies[0]["messages"])
	want := `[{"content":[{"text":"What is this?","type":"text"},{"image_url":{"url":"data:image/png;base64,iVBORw=="},"type":"image_url"},` +
		`{"image_url":{"url":"https://img.example/cat.jpg"},"type":"image_url"}],"role":"user"}]`
	if string(got) != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
	if cs.auth[0] != "" {
		t.Errorf("Authorization %q without an api_key", cs.auth[0])
	}

	for _, mt := range []string{"application/pdf", ""} {
		_, err = a.Run(context.Background(), &upstream.RunRequest{Message: protocol.Message{Role: protocol.RoleUser, Parts: []protocol.Part{
			{Kind: protocol.PartFile, MediaType: mt, URL: "https://files.example/x"}}}})
		var r *upstream.Refusal
		if !errors.As(err, &r) || r.Code != protocol.CodeContentTypeNotSupported {
			t.Errorf("a %q file: %v, want a -32005 refusal", mt, err)
		}
	}
	if len(cs.bodies) != 1 {
		t.Errorf("%d requests: a refused run must not reach the server", len(cs.bodies))
	}
}

// TestRunEnds: finish_reason length and content_filter end with the text
// so far and a completed status saying why; a stream without a
// finish_reason is a broken run; so is an over-long line.
func TestRunEnds(t *testing.T) {
	for _, tc := range []struct {
		name, finish, why, err string
		deltas                 []string
		maxLine                int
	}{
		{name: "length", finish: "length", why: "length limit", deltas: []string{"a", "b"}},
		{name: "content_filter", finish: "content_filter", why: "content filter", deltas: []string{"a"}},
		{name: "cut", finish: "", err: "without a finish_reason", deltas: []string{"a"}},
		{name: "long line", finish: "stop", err: "exceeds 200 bytes", deltas: []string{strings.Repeat("x", 300)}, maxLine: 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, srv := newChatServer(t, streamDeltas(tc.finish, tc.deltas...))
			a := newAgent(t, srv.URL, func(c *Config) { c.MaxEventBytes = tc.maxLine })
			st, err := a.Run(context.Background(), &upstream.RunRequest{Message: text(protocol.RoleUser, "go")})
			if err != nil {
				t.Fatal(err)
			}
			texts, status, err := drain(t, st)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || strings.Join(texts, "") != strings.Join(tc.deltas, "") {
				t.Fatalf("texts %q err %v", texts, err)
			}
			if status == nil || status.State != protocol.StateCompleted || !strings.Contains(status.Parts[0].Text, tc.why) {
				t.Fatalf("status %+v, want completed saying %q", status, tc.why)
			}
		})
	}
}

// TestRunFailures: an error answer fails the run with the status and the
// server's body, the key redacted; no retry is made.
func TestRunFailures(t *testing.T) {
	for _, status := range []int{401, 429, 500, 503} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			cs, srv := newChatServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				fmt.Fprintf(w, `{"error":{"message":"bad key sk-test-key","type":"invalid_request_error"}}`)
			})
			a := newAgent(t, srv.URL, nil)
			_, err := a.Run(context.Background(), &upstream.RunRequest{Message: text(protocol.RoleUser, "go")})
			// The log names the endpoint the status came from, the key
			// redacted.
			want := fmt.Sprintf(`openai: the model server at %s/v1/chat/completions answered HTTP %d: {"message":"bad key [redacted]","type":"invalid_request_error"}`,
				srv.URL, status)
			if err == nil || err.Error() != want {
				t.Fatalf("err %v, want %s", err, want)
			}
			if len(cs.bodies) != 1 {
				t.Errorf("%d requests, want 1 (no retries)", len(cs.bodies))
			}
		})
	}
}

// TestRunTimeout: a run that outlives timeout names the setting and the
// endpoint, before the answer and while it streams.
func TestRunTimeout(t *testing.T) {
	for _, started := range []bool{false, true} {
		t.Run(fmt.Sprint("started ", started), func(t *testing.T) {
			_, srv := newChatServer(t, func(w http.ResponseWriter, r *http.Request) {
				if started {
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":null}]}\n\n")
					w.(http.Flusher).Flush()
				}
				<-r.Context().Done()
			})
			a := newAgent(t, srv.URL, func(c *Config) { c.Timeout = 200 * time.Millisecond })
			st, err := a.Run(context.Background(), &upstream.RunRequest{Message: text(protocol.RoleUser, "go")})
			if err == nil {
				_, _, err = drain(t, st)
			}
			want := "the agent at " + srv.URL + "/v1/chat/completions did not finish within `timeout 200ms`"
			if err == nil || err.Error() != want || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err %v, want %s", err, want)
			}
		})
	}
}

// TestRunCancel: cancelling the run's context aborts the request the
// server is holding.
func TestRunCancel(t *testing.T) {
	gone := make(chan struct{})
	_, srv := newChatServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":null}]}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	})
	a := newAgent(t, srv.URL, nil)
	ctx, cancel := context.WithCancel(context.Background())
	st, err := a.Run(ctx, &upstream.RunRequest{Message: text(protocol.RoleUser, "go")})
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := st.Next(); err != nil || ev.Text != "a" {
		t.Fatalf("first event %+v %v", ev, err)
	}
	cancel()
	if _, err := st.Next(); err == nil {
		t.Fatal("the run went on after its context was cancelled")
	}
	st.Close()
	<-gone
}

// TestRunTextFile: an inline text/* file (which input_modes let through)
// goes to the model as its text.
func TestRunTextFile(t *testing.T) {
	cs, srv := newChatServer(t, streamDeltas("stop", "ok"))
	a := newAgent(t, srv.URL, func(c *Config) { c.System = "" })
	st, err := a.Run(context.Background(), &upstream.RunRequest{Message: protocol.Message{Role: protocol.RoleUser, Parts: []protocol.Part{
		{Kind: protocol.PartText, Text: "Summarise:"},
		{Kind: protocol.PartFile, MediaType: "text/markdown; charset=utf-8", Raw: []byte("# Notes\nall good")},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := drain(t, st); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(cs.bodies[0]["messages"])
	if want := `[{"content":"Summarise:\n# Notes\nall good","role":"user"}]`; string(got) != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
}

package integration

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sseFrame is one server-sent event.
type sseFrame struct {
	ID   string
	Data []byte
}

// sseStream reads frames from a streaming answer as they arrive.
type sseStream struct {
	resp   *http.Response
	frames chan sseFrame
	done   chan error
}

// openStream starts a streaming JSON-RPC call.
func openStream(t *testing.T, url, version, method string, params any, opts ...reqOpt) *sseStream {
	t.Helper()
	p, _ := json.Marshal(params)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"s%d","method":%q,"params":%s}`, rpcIDs.Add(1), method, p)
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	for _, o := range opts {
		o(req)
	}
	return openSSE(t, req)
}

// openSSE sends req and reads its answer as a stream, which must be one.
func openSSE(t *testing.T, req *http.Request) *sseStream {
	t.Helper()
	// No client timeout: streams live as long as the test wants.
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		t.Fatalf("stream %s %s: %v", req.Method, req.URL, err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("stream %s %s: %d %s %s", req.Method, req.URL, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	s := &sseStream{resp: resp, frames: make(chan sseFrame, 64), done: make(chan error, 1)}
	go s.read()
	t.Cleanup(s.close)
	return s
}

func (s *sseStream) read() {
	var body io.Reader = s.resp.Body
	if s.resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(s.resp.Body)
		if err != nil {
			close(s.frames)
			s.done <- err
			return
		}
		body = zr
	}
	br := bufio.NewReader(body)
	var f sseFrame
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			close(s.frames)
			s.done <- err
			return
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if f.Data != nil {
				s.frames <- f
			}
			f = sseFrame{}
		case strings.HasPrefix(line, ":"): // heartbeat comment
		case strings.HasPrefix(line, "id:"):
			f.ID = strings.TrimSpace(line[3:])
		case strings.HasPrefix(line, "data:"):
			if f.Data != nil {
				f.Data = append(f.Data, '\n')
			}
			f.Data = append(f.Data, strings.TrimPrefix(line[5:], " ")...)
		}
	}
}

func (s *sseStream) close() { s.resp.Body.Close() }

// next returns the next frame; ok is false when the stream ended.
func (s *sseStream) next(t *testing.T) (f sseFrame, ok bool) {
	t.Helper()
	select {
	case f, ok = <-s.frames:
		return f, ok
	case <-time.After(5 * time.Second):
		t.Fatal("no stream frame within 5s")
		return sseFrame{}, false
	}
}

// ended asserts the stream ends without further frames.
func (s *sseStream) ended(t *testing.T) {
	t.Helper()
	if f, ok := s.next(t); ok {
		t.Fatalf("stream goes on: %s", f.Data)
	}
}

// describe summarises a frame as kind:detail for both dialects, e.g.
// "task:TASK_STATE_SUBMITTED", "status:working", "status:completed(final)",
// "artifact:chunk one, ", "error:-32001".
func describe(t *testing.T, f sseFrame) string {
	t.Helper()
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(f.Data, &env); err != nil {
		t.Fatalf("frame is not JSON-RPC: %v: %s", err, f.Data)
	}
	if env.Error != nil {
		return fmt.Sprintf("error:%d", env.Error.Code)
	}
	type status struct {
		State string `json:"state"`
	}
	var r struct {
		// 1.0 StreamResponse members.
		Task           *wireTask                        `json:"task"`
		StatusUpdate   *struct{ Status status }         `json:"statusUpdate"`
		ArtifactUpdate *struct{ Artifact wireArtifact } `json:"artifactUpdate"`
		// 0.3 bare events.
		Kind     string       `json:"kind"`
		Status   status       `json:"status"`
		Final    bool         `json:"final"`
		Artifact wireArtifact `json:"artifact"`
	}
	if err := json.Unmarshal(env.Result, &r); err != nil {
		t.Fatalf("frame result: %v: %s", err, env.Result)
	}
	text := func(a wireArtifact) string {
		var b strings.Builder
		for _, p := range a.Parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	switch {
	case r.Task != nil:
		return "task:" + r.Task.Status.State
	case r.StatusUpdate != nil:
		return "status:" + r.StatusUpdate.Status.State
	case r.ArtifactUpdate != nil:
		return "artifact:" + text(r.ArtifactUpdate.Artifact)
	case r.Kind == "task":
		return "task:" + r.Status.State
	case r.Kind == "status-update" && r.Final:
		return "status:" + r.Status.State + "(final)"
	case r.Kind == "status-update":
		return "status:" + r.Status.State
	case r.Kind == "artifact-update":
		return "artifact:" + text(r.Artifact)
	}
	return "unknown:" + string(env.Result)
}

// readUntil reads frames until one is described as want, returning the
// descriptions seen and the last frame.
func readUntil(t *testing.T, s *sseStream, want string) ([]string, sseFrame) {
	t.Helper()
	var seen []string
	for {
		f, ok := s.next(t)
		if !ok {
			t.Fatalf("stream ended before %q; saw %q", want, seen)
		}
		d := describe(t, f)
		seen = append(seen, d)
		if d == want {
			return seen, f
		}
	}
}

// TestStreaming: SendStreamingMessage and message/stream relay the agent's
// chunks through Caddy as they come (the first chunk arrives while the
// agent still holds the second) and close on the final status.
func TestStreaming(t *testing.T) {
	gate := make(chan struct{})
	a := streamAgent(t, gate)
	load(t, minimal("heartbeat 50ms"), map[string]any{"Agent": a.URL()})
	url := base + "/a2a"

	s := openStream(t, url, "1.0", "SendStreamingMessage", map[string]any{"message": msg10("go", "", "")})
	seen, _ := readUntil(t, s, "artifact:chunk one, ")
	if !strings.HasPrefix(seen[0], "task:") {
		t.Errorf("stream opens with %q, want the task", seen[0])
	}
	gate <- struct{}{}
	rest, _ := readUntil(t, s, "status:TASK_STATE_COMPLETED")
	if rest[0] != "artifact:chunk two" {
		t.Errorf("after the gate: %q", rest)
	}
	s.ended(t)

	s03 := openStream(t, url, "", "message/stream", map[string]any{"message": msg03("go", "")})
	seen03, _ := readUntil(t, s03, "artifact:chunk one, ")
	if seen03[0] != "task:submitted" && seen03[0] != "task:working" {
		t.Errorf("0.3 stream opens with %q", seen03[0])
	}
	gate <- struct{}{}
	readUntil(t, s03, "status:completed(final)")
	s03.ended(t)
}

// TestStreamingErrors: an error found before a stream's first event is a
// plain JSON-RPC answer, what streaming clients that look at the media
// type read; 0.3's tasks/resubscribe keeps its one SSE error frame (a2a-go
// v0.3 reads nothing else there); streaming off answers -32004.
func TestStreamingErrors(t *testing.T) {
	a := textAgent(t)
	load(t, `
http://:9080 {
	a2a {
		upstream {{.Agent}}`+skillBlock+`
	}
	a2a {
		upstream {{.Agent}}
		card_path /off/.well-known/agent-card.json
		rpc_path /off
		streaming off`+skillBlock+`
	}
}
`, map[string]any{"Agent": a.URL()})

	streamError(t, call(t, base+"/a2a", "1.0", "SubscribeToTask", map[string]any{"id": "no-such-task"}, withHeader("Accept", "text/event-stream")), -32001)
	s := openStream(t, base+"/a2a", "", "tasks/resubscribe", map[string]any{"id": "no-such-task"})
	if f, _ := s.next(t); describe(t, f) != "error:-32001" {
		t.Errorf("0.3 resubscribe to a missing task: %s", f.Data)
	}
	s.ended(t)

	streamError(t, call(t, base+"/off", "1.0", "SendStreamingMessage", map[string]any{"message": msg10("go", "", "")}, withHeader("Accept", "text/event-stream")), -32004)
	_, c := fetchCard(t, base+"/off/.well-known/agent-card.json")
	if c.Capabilities.Streaming != nil && *c.Capabilities.Streaming {
		t.Errorf("streaming off, yet the card advertises streaming")
	}
	if n := len(a.Calls()); n != 0 {
		t.Errorf("refused streams called the agent %d times", n)
	}
}

// TestStreamingThroughEncode: a site that compresses its answers (encode)
// still relays each chunk as it comes.
func TestStreamingThroughEncode(t *testing.T) {
	gate := make(chan struct{})
	a := streamAgent(t, gate)
	load(t, `
http://:9080 {
	encode gzip
	a2a {
		upstream {{.Agent}}`+skillBlock+`
	}
}
`, map[string]any{"Agent": a.URL()})
	s := openStream(t, base+"/a2a", "1.0", "SendStreamingMessage", map[string]any{"message": msg10("go", "", "")},
		withHeader("Accept-Encoding", "gzip"))
	if got := s.resp.Header.Get("Content-Encoding"); got != "gzip" {
		t.Fatalf("Content-Encoding = %q: the test needs a compressed stream", got)
	}
	readUntil(t, s, "artifact:chunk one, ")
	close(gate)
	readUntil(t, s, "status:TASK_STATE_COMPLETED")
	s.ended(t)
}

package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// rawStream starts a streaming call and returns the answer with a line
// reader, for tests that look at what sseStream skips (comments).
func rawStream(t *testing.T, url, version, method string, params any) (*http.Response, *bufio.Reader) {
	t.Helper()
	p, _ := json.Marshal(params)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"r%d","method":%q,"params":%s}`, rpcIDs.Add(1), method, p)
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", version)
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp, bufio.NewReader(resp.Body)
}

// TestStreamingHeartbeatAndHeaders: through Caddy, a stream answer carries
// Cache-Control: no-cache and X-Accel-Buffering: no, and an idle stream
// gets a ": ping" comment every `heartbeat` (here 40ms, not the 15s
// default).
func TestStreamingHeartbeatAndHeaders(t *testing.T) {
	slow := slowAgent(t)
	load(t, minimal("heartbeat 40ms"), map[string]any{"Agent": slow.URL()})
	resp, br := rawStream(t, base+"/a2a", "1.0", "SendStreamingMessage", map[string]any{"message": msg10("idle", "", "")})
	for k, want := range map[string]string{
		"Content-Type":      "text/event-stream",
		"Cache-Control":     "no-cache",
		"X-Accel-Buffering": "no",
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	slow.next(t)

	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				return
			}
			lines <- strings.TrimRight(l, "\n")
		}
	}()
	// Three pings within the 5s bound prove the configured interval: the
	// 15s default would send none. (Their spacing is not checked: a loaded
	// machine may hand the client several at once.)
	pings := 0
	for pings < 3 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("stream ended after %d pings", pings)
			}
			if l == ": ping" {
				pings++
			}
		case <-timeout():
			t.Fatalf("only %d heartbeats in 5s with heartbeat 40ms", pings)
		}
	}
	close(slow.release)
	for l := range lines {
		if strings.Contains(l, "TASK_STATE_COMPLETED") {
			return
		}
	}
	t.Error("the stream ended without the completed status")
}

// TestCancelWhileStreaming: through Caddy, CancelTask aborts the upstream
// call, and every open stream of the task (the send's own, a 1.0
// subscriber, a 0.3 resubscriber) ends with the canceled status.
func TestCancelWhileStreaming(t *testing.T) {
	slow := slowAgent(t)
	load(t, minimal(), map[string]any{"Agent": slow.URL()})
	url := base + "/a2a"

	own := openStream(t, url, "1.0", "SendStreamingMessage", map[string]any{"message": msg10("long job", "", "")})
	id := openingTaskID(t, own)
	slow.next(t)
	readUntil(t, own, "status:TASK_STATE_WORKING")

	sub10 := openStream(t, url, "1.0", "SubscribeToTask", map[string]any{"id": id})
	sub03 := openStream(t, url, "", "tasks/resubscribe", map[string]any{"id": id})
	readUntil(t, sub10, "task:TASK_STATE_WORKING")
	readUntil(t, sub03, "task:working")

	var canceled wireTask
	call(t, url, "1.0", "CancelTask", map[string]any{"id": id}).ok(t, &canceled)
	if canceled.Status.State != "TASK_STATE_CANCELED" {
		t.Fatalf("CancelTask answered %s", canceled.Status.State)
	}
	select {
	case got := <-slow.aborted:
		if got != id {
			t.Errorf("aborted %s, want %s", got, id)
		}
	case <-timeout():
		t.Fatal("the upstream call was not aborted")
	}
	for name, tc := range map[string]struct {
		s    *sseStream
		want string
	}{
		"own stream":     {own, "status:TASK_STATE_CANCELED"},
		"1.0 subscriber": {sub10, "status:TASK_STATE_CANCELED"},
		"0.3 subscriber": {sub03, "status:canceled(final)"},
	} {
		f, ok := tc.s.next(t)
		if !ok {
			t.Fatalf("%s: ended without the canceled status", name)
		}
		if d := describe(t, f); d != tc.want {
			t.Errorf("%s: got %q, want %q", name, d, tc.want)
		}
		tc.s.ended(t)
	}
	if got := getTask10(t, url, id); got.Status.State != "TASK_STATE_CANCELED" {
		t.Errorf("GetTask after cancel: %s", got.Status.State)
	}
}

// TestStreamingRunFailure: a run that fails after its stream started (the
// agent sends a chunk, then an error event or a broken stream) ends the
// stream with a final failed status carrying the generic message, never
// the agent's text.
func TestStreamingRunFailure(t *testing.T) {
	a := newAgent(t, func(w http.ResponseWriter, _ *http.Request, c agentCall) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		io.WriteString(w, `{"text":"partial"}`+"\n")
		w.(http.Flusher).Flush()
		if c.inputText() == "error" {
			io.WriteString(w, `{"error":"`+secret+`"}`+"\n")
			return
		}
		io.WriteString(w, `{"text":"cut`)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	})
	load(t, minimal(), map[string]any{"Agent": a.URL()})
	url := base + "/a2a"
	for _, tc := range []struct {
		version, method, final string
		msg                    func(string) map[string]any
	}{
		{"1.0", "SendStreamingMessage", "status:TASK_STATE_FAILED", func(s string) map[string]any { return msg10(s, "", "") }},
		{"", "message/stream", "status:failed(final)", func(s string) map[string]any { return msg03(s, "") }},
	} {
		for _, input := range []string{"error", "break"} {
			s := openStream(t, url, tc.version, tc.method, map[string]any{"message": tc.msg(input)})
			seen, last := readUntil(t, s, tc.final)
			if !contains(seen, "artifact:partial") {
				t.Errorf("%s %s: the chunk before the failure was not relayed: %q", tc.method, input, seen)
			}
			s.ended(t)
			if strings.Contains(string(last.Data), "SECRET") || !strings.Contains(string(last.Data), "The agent could not complete the task.") {
				t.Errorf("%s %s: final frame %s", tc.method, input, last.Data)
			}
		}
	}
}

package jsonrpc

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timeRE = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"`)
)

// normalize replaces generated ids (numbered by first appearance, so the
// golden file still shows which ids are equal) and timestamps.
func normalize(s string) string {
	seen := map[string]string{}
	s = uuidRE.ReplaceAllStringFunc(s, func(u string) string {
		if n, ok := seen[u]; ok {
			return n
		}
		n := "uuid-" + strconv.Itoa(len(seen)+1)
		seen[u] = n
		return n
	})
	return timeRE.ReplaceAllString(s, `"<timestamp>"`)
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	got = normalize(got)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// goldenAgent answers with two chunks around a progress note, then asks a
// question (input-required, which also ends a 0.3 stream with final:true).
func goldenAgent() *fakeAgent {
	return scriptAgent(
		text("Hello, "),
		status(protocol.StateWorking, "looking it up"),
		text("world"),
		status(protocol.StateInputRequired, "Anything else?"),
	)
}

func TestGoldenSend(t *testing.T) {
	for _, tc := range []struct{ file, v, body string }{
		{"send_v10.json", "1.0", sendV10("SendMessage", "m-1", "", "")},
		{"send_v03.json", "", sendV03("message/send", "m-1", "", "")},
	} {
		t.Run(tc.file, func(t *testing.T) {
			h := newHarness(t, goldenAgent())
			resp := h.post(t.Context(), req{version: tc.v, body: tc.body})
			defer resp.Body.Close()
			golden(t, tc.file, string(readAll(t, resp))+"\n")
		})
	}
}

func TestGoldenStream(t *testing.T) {
	for _, tc := range []struct{ file, v, body string }{
		{"stream_v10.sse", "1.0", sendV10("SendStreamingMessage", "m-1", "", "")},
		{"stream_v03.sse", "", sendV03("message/stream", "m-1", "", "")},
		// An error before the first event is a plain JSON-RPC answer,
		// except for 0.3's tasks/resubscribe (one SSE error frame).
		{"stream_error_v10.json", "1.0", rpcCall("SubscribeToTask", `{"id":"nope"}`)},
		{"stream_error_v03.json", "", rpcCall("message/stream", `{"message":{}}`)},
		{"resubscribe_error_v03.sse", "", rpcCall("tasks/resubscribe", `{"id":"nope"}`)},
	} {
		t.Run(tc.file, func(t *testing.T) {
			h := newHarness(t, goldenAgent())
			resp := h.post(t.Context(), req{version: tc.v, body: tc.body})
			defer resp.Body.Close()
			body := string(readAll(t, resp))
			if strings.Contains(body, protocol.SSEHeartbeat) {
				t.Fatalf("unexpected heartbeat in a short stream")
			}
			golden(t, tc.file, body)
		})
	}
}

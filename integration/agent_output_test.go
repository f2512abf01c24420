package integration

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"
)

// failedText is the status message of every failed run.
const failedText = "The agent could not complete the task."

// logFile is a global `log` option writing Caddy's log to a file, and a
// reader of its entries.
type logFile struct{ path string }

func newLogFile(t *testing.T) *logFile {
	return &logFile{path: filepath.Join(t.TempDir(), "caddy.log")}
}

// global is the Caddyfile global option that sends the log to the file.
func (l *logFile) global() string {
	return fmt.Sprintf("log {\n\t\toutput file %s\n\t\tformat json\n\t}", l.path)
}

// runFailure returns the error of the "agent run failed" entry of task
// id, waiting briefly for it.
func (l *logFile) runFailure(t *testing.T, id string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := os.ReadFile(l.path)
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var e struct {
				Msg    string `json:"msg"`
				TaskID string `json:"task_id"`
				Error  string `json:"error"`
			}
			if json.Unmarshal(sc.Bytes(), &e) == nil && e.Msg == "a2a: agent run failed" && e.TaskID == id {
				return e.Error
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log entry of the failed run of task %s in:\n%s", id, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// gzipBytes compresses s.
func gzipBytes(s string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	io.WriteString(zw, s)
	zw.Close()
	return b.Bytes()
}

// ndjsonLines answers an NDJSON stream of lines.
func ndjsonLines(lines ...string) func(w http.ResponseWriter, r *http.Request, c agentCall) {
	return func(w http.ResponseWriter, _ *http.Request, _ agentCall) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		for _, l := range lines {
			io.WriteString(w, l+"\n")
		}
	}
}

// TestAgentOutputHeldToRulesThroughCaddy: an agent whose answer breaks a
// rule (nesting, bytes that are not UTF-8, a media type, a file URL or name, a content coding
// nobody asked for, headers past the cap, 1xx floods, an endless line, a
// redirect) fails the task with the generic status message; nothing of
// the bad output is in the answer or in GetTask (what the agent sent
// before it is kept); the log entry of the failed run names the cause.
// The same agents within the rules complete.
func TestAgentOutputHeldToRulesThroughCaddy(t *testing.T) {
	const before = `{"text":"before"}`
	redirected := newAgent(t, func(w http.ResponseWriter, r *http.Request, _ agentCall) {
		io.WriteString(w, "redirect followed")
	})
	cases := []struct {
		path string
		// serve is the agent; kept is the text that came before the bad
		// output; marker is a piece of the bad output that must not reach
		// the caller; cause is a piece of the logged error ("" : the run
		// completes).
		serve        func(w http.ResponseWriter, r *http.Request, c agentCall)
		extra        string
		kept, marker string
		cause        string
	}{
		{path: "/deep-plain", serve: func(w http.ResponseWriter, _ *http.Request, _ agentCall) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, strings.Repeat(`{"deep":`, 5000)+"1"+strings.Repeat("}", 5000))
		}, marker: `"deep"`, cause: "answer nests 5000 levels deep, over the max_json_depth limit of 32"},
		{path: "/deep-event", serve: ndjsonLines(before, `{"data":`+strings.Repeat(`{"deep":`, 40)+"1"+strings.Repeat("}", 40)+`}`),
			kept: "before", marker: `"deep"`, cause: "event nests 41 levels deep, over the max_json_depth limit of 32"},
		{path: "/deep-configured", extra: "limits {\n\t\t\tmax_json_depth 8\n\t\t}",
			serve: ndjsonLines(before, `{"data":`+strings.Repeat(`{"deep":`, 8)+"1"+strings.Repeat("}", 8)+`}`),
			kept:  "before", marker: `"deep"`, cause: "event nests 9 levels deep, over the max_json_depth limit of 8"},
		{path: "/media-type", serve: ndjsonLines(before, `{"file":{"uri":"https://files.example/a","mimeType":"text/html\r\nSet-Cookie: evil=1"}}`),
			kept: "before", marker: "evil=1", cause: "mediaType: must be a media type without control characters"},
		{path: "/javascript", serve: ndjsonLines(before, `{"file":{"uri":"javascript:alert(document.cookie)","mimeType":"text/html"}}`),
			kept: "before", marker: "javascript", cause: "url: must be an absolute http or https URL"},
		{path: "/not-utf8", serve: ndjsonLines(before, "{\"data\":{\"k\xff\":\"leak\"}}"),
			kept: "before", marker: "leak", cause: "event is not valid JSON: not UTF-8"},
		{path: "/name", serve: ndjsonLines(before, `{"artifact":{"parts":[{"file":{"uri":"https://files.example/a","name":"../../.bashrc"}}]}}`),
			kept: "before", marker: "bashrc", cause: "artifact.parts[0].filename: must be a base name"},
		{path: "/gzip", serve: func(w http.ResponseWriter, _ *http.Request, _ agentCall) {
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gzipBytes("compressed answer"))
		}, marker: "\\u001f", cause: `Content-Encoding "gzip", which the module did not ask for`},
		{path: "/big-header", serve: func(w http.ResponseWriter, _ *http.Request, _ agentCall) {
			w.Header().Set("X-Pad", strings.Repeat("a", 9<<20))
			io.WriteString(w, "after a big header")
		}, marker: "after a big header", cause: "server response headers exceeded 65536 bytes"},
		{path: "/tight-header", extra: "", serve: func(w http.ResponseWriter, _ *http.Request, _ agentCall) {
			w.Header().Set("X-Pad", strings.Repeat("a", 20<<10))
			io.WriteString(w, "after a 20KiB header")
		}, marker: "after a 20KiB header", cause: "server response headers exceeded 16384 bytes"},
		{path: "/early-hints", serve: func(w http.ResponseWriter, _ *http.Request, _ agentCall) {
			w.Header().Set("Link", "</"+strings.Repeat("a", 2<<10)+">; rel=preload")
			for range 1000 {
				w.WriteHeader(http.StatusEarlyHints)
			}
			w.Header().Del("Link")
			io.WriteString(w, "after 1000 early hints")
		}, marker: "after 1000 early hints", cause: "server response headers exceeded 65536 bytes"},
		{path: "/endless-line", serve: func(w http.ResponseWriter, r *http.Request, _ agentCall) {
			w.Header().Set("Content-Type", "application/x-ndjson")
			io.WriteString(w, before+"\n"+`{"text":"`)
			chunk := strings.Repeat("x", 64<<10)
			for range 16 << 10 { // 1 GiB, were it not cut off
				if _, err := io.WriteString(w, chunk); err != nil {
					return
				}
			}
		}, kept: "before", marker: "xxxx", cause: "event over the size limit"},
		{path: "/redirect", serve: func(w http.ResponseWriter, r *http.Request, _ agentCall) {
			http.Redirect(w, r, redirected.URL(), http.StatusTemporaryRedirect)
		}, marker: "redirect followed", cause: "/agent answered 307 Temporary Redirect"},

		// Within the rules.
		{path: "/ok-file", serve: ndjsonLines(before, `{"file":{"uri":"https://files.example/a.html","mimeType":"text/html; charset=utf-8","name":"a.html"}}`,
			`{"data":`+nested(30)+`}`)},
		{path: "/ok-header", serve: func(w http.ResponseWriter, _ *http.Request, _ agentCall) {
			w.Header().Set("X-Pad", strings.Repeat("a", 20<<10))
			io.WriteString(w, "after a 20KiB header")
		}},
		{path: "/ok-identity", serve: func(w http.ResponseWriter, _ *http.Request, _ agentCall) {
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Encoding", "identity")
			io.WriteString(w, "identity is no coding")
		}},
	}
	var mounts strings.Builder
	data := map[string]any{}
	for i, tc := range cases {
		a := newAgent(t, tc.serve)
		key := fmt.Sprintf("Agent%d", i)
		data[key] = a.URL()
		upstreamBlock := "upstream {{." + key + "}}"
		if tc.path == "/tight-header" {
			upstreamBlock += " {\n\t\t\tmax_response_header 16KiB\n\t\t}"
		}
		fmt.Fprintf(&mounts, "\ta2a {\n\t\t%s\n\t\trpc_path %s\n\t\tcard_path /card%s\n\t\t%s%s\n\t}\n",
			upstreamBlock, tc.path, tc.path, tc.extra, skillBlock)
	}
	logs := newLogFile(t)
	loadGlobal(t, logs.global(), "http://:9080 {\n"+mounts.String()+"}\n", data)

	for _, tc := range cases {
		t.Run(strings.TrimPrefix(tc.path, "/"), func(t *testing.T) {
			url := base + tc.path
			ans := call(t, url, "1.0", "SendMessage", map[string]any{"message": msg10("hi", "", "")})
			var res struct {
				Task wireTask `json:"task"`
			}
			ans.ok(t, &res)
			task := res.Task
			got := getTask10(t, url, task.ID)
			if tc.cause == "" {
				if task.Status.State != "TASK_STATE_COMPLETED" || got.Status.State != "TASK_STATE_COMPLETED" {
					t.Fatalf("state %s (GetTask %s), want completed: %s", task.Status.State, got.Status.State, ans.Body)
				}
				return
			}
			if task.Status.State != "TASK_STATE_FAILED" || task.statusText() != failedText {
				t.Fatalf("state %s, status %q: %s", task.Status.State, task.statusText(), ans.Body)
			}
			if got.Status.State != "TASK_STATE_FAILED" || got.text() != tc.kept || task.text() != tc.kept {
				t.Errorf("kept output %q (answer %q), want %q", got.text(), task.text(), tc.kept)
			}
			raw := call(t, url, "1.0", "GetTask", map[string]any{"id": task.ID})
			for _, body := range [][]byte{ans.Body, raw.Body} {
				if bytes.Contains(body, []byte(tc.marker)) {
					t.Errorf("the bad output (%q) reached the caller: %.300s", tc.marker, body)
				}
			}
			if e := logs.runFailure(t, task.ID); !strings.Contains(e, tc.cause) {
				t.Errorf("logged error %q, want it to name %q", e, tc.cause)
			}
		})
	}
	if n := len(redirected.Calls()); n != 0 {
		t.Errorf("the redirect was followed %d times", n)
	}
}

// nested is a JSON array nested depth levels deep.
func nested(depth int) string {
	return strings.Repeat("[", depth) + strings.Repeat("]", depth)
}

// TestCompressionAskedForThroughCaddy: with the transport's compression
// turned on (JSON config), the transport asks for gzip and decodes it: a
// gzip answer completes with what it decodes to, and a gzip bomb is cut
// off at the plain answer limit like any answer. Another coding, never
// asked for, still fails the run.
func TestCompressionAskedForThroughCaddy(t *testing.T) {
	bomb := gzipBytes(strings.Repeat("\x00", 64<<20))
	a := newAgent(t, func(w http.ResponseWriter, r *http.Request, c agentCall) {
		if r.Header.Get("Accept-Encoding") != "gzip" {
			http.Error(w, "not asked for gzip", http.StatusBadRequest)
			return
		}
		switch c.inputText() {
		case "gzip":
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gzipBytes("decoded answer"))
		case "bomb":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(bomb)
		case "br":
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Encoding", "br")
			io.WriteString(w, "\x0b\x02\x80brotli?")
		}
	})
	logs := newLogFile(t)
	cfg := fmt.Sprintf(`{
	"admin": {"listen": "localhost:%d", "config": {"persist": false}},
	"logging": {"logs": {"default": {"writer": {"output": "file", "filename": %q}, "encoder": {"format": "json"}}}},
	"apps": {"http": {"servers": {"srv0": {
		"listen": [":9080"],
		"automatic_https": {"disable": true},
		"routes": [{"handle": [{
			"handler": "a2a",
			"upstream": {"url": %q, "transport": {"protocol": "http", "compression": true}},
			"name": "Gzip agent",
			"description": "Answers compressed.",
			"skills": [{"id": "s", "name": "S", "description": "S.", "tags": ["t"]}]
		}]}]
	}}}}
}`, adminPort, logs.path, a.URL())
	tc := caddytest.NewTester(t).WithDefaultOverrides(caddytest.Config{AdminPort: adminPort})
	tc.InitServer(cfg, "json")
	if t.Failed() {
		t.FailNow()
	}
	settle(t, cfg)

	if task := send10(t, base+"/a2a", msg10("gzip", "", "")); task.Status.State != "TASK_STATE_COMPLETED" || task.text() != "decoded answer" {
		t.Fatalf("gzip asked for: state %s text %q", task.Status.State, task.text())
	}
	for _, tc := range []struct{ input, cause string }{
		{"bomb", "plain answer over the size limit"},
		{"br", `Content-Encoding "br"`},
	} {
		task := send10(t, base+"/a2a", msg10(tc.input, "", ""))
		if task.Status.State != "TASK_STATE_FAILED" || task.statusText() != failedText || len(task.Artifacts) != 0 {
			t.Fatalf("%s: state %s status %q artifacts %d", tc.input, task.Status.State, task.statusText(), len(task.Artifacts))
		}
		if e := logs.runFailure(t, task.ID); !strings.Contains(e, tc.cause) {
			t.Errorf("%s: logged error %q, want it to name %q", tc.input, e, tc.cause)
		}
	}
}

package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc/codes"
)

// metricLines are the caddy_a2a_ lines of the admin endpoint's metrics.
func metricLines(t *testing.T) map[string]string {
	t.Helper()
	_, body := get(t, "GET", fmt.Sprintf("http://localhost:%d/metrics", adminPort))
	out := map[string]string{}
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, "caddy_a2a_") {
			if i := strings.LastIndexByte(l, ' '); i > 0 {
				out[l[:i]] = l[i+1:]
			}
		}
	}
	return out
}

// settledMetrics is metricLines once it holds every value of want (or
// after 5s, for the test to report what differs): an answer can reach
// the test before the module has counted it (a request is counted after
// its answer is written, a run's end after its last state is stored, a
// push delivery after the webhook answered).
func settledMetrics(t *testing.T, want map[string]string) map[string]string {
	t.Helper()
	m := metricLines(t)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		ok := true
		for k, v := range want {
			ok = ok && m[k] == v
		}
		if ok {
			break
		}
		m = metricLines(t)
	}
	return m
}

// TestMetrics: the module's collectors are in Caddy's metrics: task
// transitions by state, the agent calls by kind and outcome, runs and
// streams in flight back at zero once done.
func TestMetrics(t *testing.T) {
	a := textAgent(t)
	load(t, minimal(), map[string]any{"Agent": a.URL()})
	for range 2 {
		send10(t, base+"/a2a", msg10("Ada", "", ""))
	}
	s := openStream(t, base+"/a2a", "1.0", "SendStreamingMessage", map[string]any{"message": msg10("Bo", "", "")})
	readUntil(t, s, "status:TASK_STATE_COMPLETED")
	s.ended(t)

	want := map[string]string{
		`caddy_a2a_tasks_total{state="submitted"}`:                                  "3",
		`caddy_a2a_tasks_total{state="working"}`:                                    "3",
		`caddy_a2a_tasks_total{state="completed"}`:                                  "3",
		`caddy_a2a_tasks_total{state="failed"}`:                                     "0",
		`caddy_a2a_runs_in_flight`:                                                  "0",
		`caddy_a2a_streams_open`:                                                    "0",
		`caddy_a2a_upstream_duration_seconds_count{kind="http",outcome="ok"}`:       "3",
		`caddy_a2a_upstream_errors_total{kind="http",reason="error"}`:               "0",
		`caddy_a2a_upstream_duration_seconds_count{kind="http",outcome="error"}`:    "0",
		`caddy_a2a_store_operations_total{op="create",outcome="ok",store="memory"}`: "3",
	}
	m := settledMetrics(t, want)
	for k, want := range want {
		if m[k] != want {
			t.Errorf("%s = %q, want %s", k, m[k], want)
		}
	}
	for k := range m {
		if strings.HasPrefix(k, "caddy_a2a_store_operations_total{") && !strings.Contains(k, `outcome="ok"`) {
			t.Errorf("a store operation that did not end well: %s = %s", k, m[k])
		}
	}
	if m[`caddy_a2a_store_operations_total{op="update",outcome="ok",store="memory"}`] == "" {
		t.Error("no task update was counted")
	}
	if t.Failed() {
		t.Logf("metrics: %v", m)
	}
}

// TestRequestMetricsAndPlaceholders: requests are counted by operation,
// version, binding and error code, and an access log line carries the
// request's {http.a2a.*} placeholders through log_append.
func TestRequestMetricsAndPlaceholders(t *testing.T) {
	a := textAgent(t)
	logFile := filepath.Join(t.TempDir(), "access.log")
	load(t, `http://:9080 {
	log {
		output file `+logFile+`
		format json
	}
	log_append a2a_method {http.a2a.method}
	log_append a2a_version {http.a2a.version}
	log_append a2a_binding {http.a2a.binding}
	log_append a2a_task {http.a2a.task_id}
	log_append a2a_context {http.a2a.context_id}
	log_append a2a_state {http.a2a.task_state}
	log_append a2a_error {http.a2a.error_code}
	a2a {
		upstream {{.Agent}}
		rest_path /a2a/rest`+skillBlock+`
	}
}
`, map[string]any{"Agent": a.URL()})
	task := send10(t, base+"/a2a", msg10("Ada", "", ""))
	call(t, base+"/a2a", "", "tasks/get", map[string]any{"id": "nope"}).fails(t, -32001)
	restDo(t, "GET", restURL+"/tasks/"+task.ID, "").ok(t, nil)

	want := map[string]string{
		`caddy_a2a_requests_total{binding="jsonrpc",code="0",method="SendMessage",server="srv0",version="1.0"}`:  "1",
		`caddy_a2a_requests_total{binding="jsonrpc",code="-32001",method="GetTask",server="srv0",version="0.3"}`: "1",
		`caddy_a2a_requests_total{binding="rest",code="0",method="GetTask",server="srv0",version="1.0"}`:         "1",
		`caddy_a2a_request_duration_seconds_count{binding="jsonrpc",method="SendMessage",server="srv0"}`:         "1",
	}
	m := settledMetrics(t, want)
	for k, want := range want {
		if m[k] != want {
			t.Errorf("%s = %q, want %s", k, m[k], want)
		}
	}
	if t.Failed() {
		t.Logf("metrics: %v", m)
	}

	var lines []map[string]any
	for range 50 {
		b, _ := os.ReadFile(logFile)
		lines = nil
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var e map[string]any
			if json.Unmarshal([]byte(l), &e) == nil && e["msg"] == "handled request" {
				lines = append(lines, e)
			}
		}
		if len(lines) >= 3 {
			break
		}
		waitBriefly()
	}
	if len(lines) < 3 {
		t.Fatalf("%d access log lines", len(lines))
	}
	wantLines := []map[string]any{
		{"a2a_method": "SendMessage", "a2a_version": "1.0", "a2a_binding": "jsonrpc", "a2a_task": task.ID, "a2a_context": task.ContextID, "a2a_state": "completed", "a2a_error": ""},
		{"a2a_method": "GetTask", "a2a_version": "0.3", "a2a_binding": "jsonrpc", "a2a_task": "", "a2a_error": "-32001"},
		{"a2a_method": "GetTask", "a2a_version": "1.0", "a2a_binding": "rest", "a2a_task": task.ID, "a2a_state": "completed"},
	}
	for i, w := range wantLines {
		for k, v := range w {
			if got := fmt.Sprint(lines[i][k]); got != v && !(v == "" && lines[i][k] == nil) {
				t.Errorf("access log line %d: %s = %q, want %q", i+1, k, got, v)
			}
		}
	}
}

// TestGRPCRequestMetrics: gRPC calls are counted by operation and A2A
// error code too.
func TestGRPCRequestMetrics(t *testing.T) {
	a := textAgent(t)
	loadGlobal(t, h2cGlobal, minimal("grpc on"), map[string]any{"Agent": a.URL()})
	c := grpcClient(t)
	if _, err := c.SendMessage(grpcCtx(t), &a2apb.SendMessageRequest{Message: &a2apb.Message{
		MessageId: "gm-1", Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "Ada"}}},
	}}); err != nil {
		t.Fatal(err)
	}
	_, err := c.GetTask(grpcCtx(t), &a2apb.GetTaskRequest{Id: "00000000-0000-4000-8000-000000000000"})
	grpcFails(t, err, codes.NotFound, "TASK_NOT_FOUND")
	want := map[string]string{
		`caddy_a2a_requests_total{binding="grpc",code="0",method="SendMessage",server="srv0",version="1.0"}`:  "1",
		`caddy_a2a_requests_total{binding="grpc",code="-32001",method="GetTask",server="srv0",version="1.0"}`: "1",
	}
	m := settledMetrics(t, want)
	for k, want := range want {
		if m[k] != want {
			t.Errorf("%s = %q, want %s (metrics %v)", k, m[k], want, m)
		}
	}
}

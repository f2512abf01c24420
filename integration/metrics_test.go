package integration

import (
	"fmt"
	"strings"
	"testing"
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

	m := metricLines(t)
	for k, want := range map[string]string{
		`caddy_a2a_tasks_total{state="submitted"}`:                               "3",
		`caddy_a2a_tasks_total{state="working"}`:                                 "3",
		`caddy_a2a_tasks_total{state="completed"}`:                               "3",
		`caddy_a2a_tasks_total{state="failed"}`:                                  "0",
		`caddy_a2a_runs_in_flight`:                                               "0",
		`caddy_a2a_streams_open`:                                                 "0",
		`caddy_a2a_upstream_duration_seconds_count{kind="http",outcome="ok"}`:    "3",
		`caddy_a2a_upstream_errors_total{kind="http",reason="error"}`:            "0",
		`caddy_a2a_upstream_duration_seconds_count{kind="http",outcome="error"}`: "0",
	} {
		if m[k] != want {
			t.Errorf("%s = %q, want %s", k, m[k], want)
		}
	}
	if t.Failed() {
		t.Logf("metrics: %v", m)
	}
}

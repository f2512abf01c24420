package integration

import (
	"net/http"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// An agent that holds SendStreamingMessage without naming its task,
// before its answer's headers or after them: upstream { timeout 1s }
// bounds the whole run, so the task fails with the generic message about
// a second in, not when the module stops waiting for the agent's task.
// The log names the setting and the agent; the caller never sees that.
func TestGatewayTimeoutBeforeTheAgentNamesItsTask(t *testing.T) {
	agent := startScripted(t, true)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // before the agent's Close, which waits for its handlers
	headers := make(chan bool, 1)
	agent.setRPC(func(w http.ResponseWriter, r *http.Request, req *protocol.Request) {
		if <-headers {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			http.NewResponseController(w).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	logs := newLogFile(t)
	loadGlobal(t, logs.global(), `http://:9080 {
	a2a {
		upstream a2a {{.Agent}} {
			timeout 1s
		}
	}
}
`, map[string]any{"Agent": agent.URL()})
	waitCard(t, "served", func(_ wireCard, r *http.Response) bool { return r.StatusCode == 200 })
	for _, answered := range []bool{false, true} {
		headers <- answered
		start := time.Now()
		task := send10(t, base+"/a2a", msg10("hold", "", ""))
		if took := time.Since(start); task.Status.State != "TASK_STATE_FAILED" || task.statusText() != "The agent could not complete the task." ||
			took > 3*time.Second {
			t.Fatalf("headers %v: after %v: %+v", answered, took, task)
		}
		want := "the agent at " + agent.iface + " did not finish within `timeout 1s`"
		if got := logs.runFailure(t, task.ID); got != want {
			t.Fatalf("headers %v: logged %q, want %q", answered, got, want)
		}
	}
}

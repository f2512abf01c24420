package jsonrpc

import (
	"runtime"
	"strings"
	"testing"
)

// workers counts the goroutines in Runner.work, busy or idle.
func workers() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "handler.(*Runner).work(")
}

// Runs one after another share one worker, and Close ends it.
func TestRunnerReusesWorkers(t *testing.T) {
	h := newHarness(t, scriptAgent(text("hi")))
	before := workers()
	for i := range 5 {
		resp := h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m", "", "")})
		if got := str(t, resp, "result", "task", "status", "state"); got != "TASK_STATE_COMPLETED" {
			t.Fatalf("send %d: %s", i, got)
		}
		waitFor(t, "run to end", func() bool { return runnerIdle(h.runner) })
	}
	if n := workers() - before; n != 1 {
		t.Fatalf("%d workers for 5 runs in a row, want 1", n)
	}
	if err := h.runner.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "worker to end", func() bool { return workers() == before })
}

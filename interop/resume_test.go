package interop

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestJSResume runs js/test/resume.test.js: a resubscribe with
// Last-Event-ID over JSON-RPC 1.0, HTTP+JSON 1.0 and JSON-RPC 0.3, its
// events applied by @a2a-js/sdk's own ResultManager, must leave each
// chunk's text in the task once, and the wire must carry no chunk after
// the Task frame that the Task already holds.
func TestJSResume(t *testing.T) {
	node, dir := nodeSuite(t)
	runNode(t, node, dir, "test/resume.test.js",
		"A2A_DUAL_URL="+dualURL,
		"A2A_LEGACY_URL="+legacyURL,
		"A2A_REST_URL="+restURL,
		"AGENT_CONTROL_URL="+agentURL,
	)
}

// stepGate names the gate that holds chunk i of a `steps N NAME` run.
func stepGate(name string, i int) string { return fmt.Sprintf("%s#%d", name, i) }

// steps answers `steps N NAME`: working, then N chunks "step-i;", each
// held at its own gate (stepGate) until the test releases it, so that a
// test decides exactly which chunks the task holds when it subscribes.
func (a *scriptedAgent) steps(w http.ResponseWriter, r *http.Request, call *agentCall, arg string) {
	count, name, _ := strings.Cut(arg, " ")
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 || n > 50 || name == "" {
		http.Error(w, "agent: steps wants a count 1..50 and a name", http.StatusBadRequest)
		return
	}
	nd := newNDJSON(w)
	nd.send(map[string]any{"status": "working", "message": "steps run started"})
	for i := 1; i <= n; i++ {
		if !a.holdAt(r, call, nd, stepGate(name, i), a.gate(stepGate(name, i))) {
			return
		}
		nd.send(map[string]any{"text": fmt.Sprintf("step-%d;", i)})
	}
}

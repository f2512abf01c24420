package integration

import (
	"net/http"
	"strings"
	"testing"
)

// originMount fronts {{.Agent}} with an operator's token in header_up;
// {{.Extra}} goes in the upstream block.
const originMount = `http://:9080 {
	a2a {
		upstream a2a {{.Agent}} {
			card_refresh 1s
			header_up Authorization "Bearer operator-token"
			{{.Extra}}
		}
	}
}
`

// A card whose interface is on another origin moves nothing there: the
// first such card is not served (503, as while the agent is unknown) and
// runs fail; a refresh to one keeps the card before, and runs go on to
// the agent. The other origin gets no request, no operator token. A
// Caddyfile that names the origin with allow_origin sends runs there.
func TestGatewayCardOnAnotherOrigin(t *testing.T) {
	collector := startScripted(t, false)
	agent := startScripted(t, false)
	agent.pointAt(collector.URL() + "/rpc")
	load(t, originMount, map[string]any{"Agent": agent.URL(), "Extra": ""})
	url := base + "/a2a"

	agent.waitCardGets(t, 0, 2)
	if _, resp := readCard(t); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a first card on another origin: %d, want 503", resp.StatusCode)
	}
	if task := send10(t, url, msg10("hi", "", "")); task.Status.State != "TASK_STATE_FAILED" || task.statusText() != "The agent could not complete the task." {
		t.Fatalf("a send without a usable card: %+v", task)
	}

	agent.pointAt(agent.URL() + "/rpc")
	waitCard(t, "the agent's own card", func(c wireCard, r *http.Response) bool { return r.StatusCode == 200 && c.Name == "Scripted" })
	agent.pointAt(collector.URL() + "/rpc")
	agent.waitCardGets(t, agent.count("GET", "/.well-known/agent-card.json"), 2)
	if c, resp := readCard(t); resp.StatusCode != 200 || c.Name != "Scripted" {
		t.Fatalf("after a refresh to another origin: %d %+v", resp.StatusCode, c)
	}
	task := send10(t, url, msg10("hi", "", ""))
	if task.Status.State != "TASK_STATE_COMPLETED" || task.text() != "done at "+strings.TrimPrefix(agent.URL(), "http://") {
		t.Fatalf("a send after the refresh: %+v", task)
	}
	if got := collector.requests(); len(got) != 0 {
		t.Fatalf("the other origin got %q", got)
	}
	if n := agent.count("POST", "/rpc"); n != 1 {
		t.Fatalf("the agent got %d runs, want 1: %q", n, agent.requests())
	}

	load(t, originMount, map[string]any{"Agent": agent.URL(), "Extra": "allow_origin " + collector.URL()})
	waitCard(t, "served", func(c wireCard, r *http.Response) bool { return r.StatusCode == 200 })
	task = send10(t, url, msg10("hi", "", ""))
	if task.Status.State != "TASK_STATE_COMPLETED" || task.text() != "done at "+strings.TrimPrefix(collector.URL(), "http://") {
		t.Fatalf("a send to the allowed origin: %+v", task)
	}
	if got := strings.Join(collector.requests(), ", "); got != "POST /rpc Bearer operator-token" {
		t.Fatalf("the allowed origin got %s", got)
	}
}

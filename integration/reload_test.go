package integration

import (
	"testing"
)

// reloadCfg has a text mount and a slow mount; {{.Desc}} changes between
// loads so each load is a real config change.
const reloadCfg = `
http://:9080 {
	a2a {
		upstream {{.Text}}
		rpc_path /text
		card_path /text/.well-known/agent-card.json
		name "Reloaded"
		description "{{.Desc}}"
		skill echo {
			name "Echo"
			description "Echoes."
			tags test
		}
		store memory {
			max_tasks {{.Max}}
		}
	}
	a2a {
		upstream {{.Slow}}
		rpc_path /slow` + skillBlock + `
	}
}
`

// TestReloadKeepsTasks: `caddy reload` (a new config through the admin
// API) keeps every task and lets a run in flight across it complete;
// changing a mount's store settings starts it afresh.
func TestReloadKeepsTasks(t *testing.T) {
	text, slow := textAgent(t), slowAgent(t)
	data := map[string]any{"Text": text.URL(), "Slow": slow.URL(), "Desc": "before", "Max": 100}
	load(t, reloadCfg, data)

	done := send10(t, base+"/text", msg10("kept", "", ""))
	var res struct {
		Task wireTask `json:"task"`
	}
	call(t, base+"/slow", "1.0", "SendMessage", map[string]any{
		"message": msg10("across", "", ""), "configuration": map[string]any{"returnImmediately": true},
	}).ok(t, &res)
	slow.next(t)

	data["Desc"] = "after"
	load(t, reloadCfg, data)

	_, card := fetchCard(t, base+"/text/.well-known/agent-card.json")
	if card.Description != "after" {
		t.Fatalf("the reload did not take: description %q", card.Description)
	}
	if got := getTask10(t, base+"/text", done.ID); got.Status.State != "TASK_STATE_COMPLETED" || got.text() != "Hello, kept" {
		t.Errorf("task after reload: %s %q", got.Status.State, got.text())
	}
	// The run started before the reload finishes after it.
	close(slow.release)
	if got := waitState(t, base+"/slow", res.Task.ID, "TASK_STATE_COMPLETED"); got.text() != "finally done" {
		t.Errorf("in-flight run: %q", got.text())
	}
	select {
	case id := <-slow.aborted:
		t.Errorf("the reload aborted the run of %s", id)
	default:
	}

	// Other store settings: another store; the old one went with the old
	// config.
	data["Max"] = 200
	load(t, reloadCfg, data)
	call(t, base+"/text", "1.0", "GetTask", map[string]any{"id": done.ID}).fails(t, -32001)
}

// TestReloadStreams: open streams end on reload (so the old server can
// stop), the run goes on, and a resubscribe with Last-Event-ID on the new
// config continues exactly where the client was: nothing missed, nothing
// repeated.
func TestReloadStreams(t *testing.T) {
	gate := make(chan struct{})
	a := streamAgent(t, gate)
	data := map[string]any{"Agent": a.URL(), "Desc": "before"}
	cfg := `
http://:9080 {
	a2a {
		upstream {{.Agent}}
		name "Streamer"
		description "{{.Desc}}"
		skill echo {
			name "Echo"
			description "Echoes."
			tags test
		}
	}
}
`
	load(t, cfg, data)
	url := base + "/a2a"

	s := openStream(t, url, "1.0", "SendStreamingMessage", map[string]any{"message": msg10("go", "", "")})
	taskID := openingTaskID(t, s)
	_, last := readUntil(t, s, "artifact:chunk one, ")
	if last.ID == "" {
		t.Fatal("frames carry no SSE id")
	}

	data["Desc"] = "after"
	load(t, cfg, data)
	// The stream of the old config ends...
	for {
		f, ok := s.next(t)
		if !ok {
			break
		}
		if d := describe(t, f); d != "status:TASK_STATE_WORKING" {
			t.Fatalf("old stream got %q after chunk one", d)
		}
	}

	// ...and the client picks up on the new config from its last id.
	if got := getTask10(t, url, taskID); got.Status.State != "TASK_STATE_WORKING" {
		t.Fatalf("task after reload: %s", got.Status.State)
	}
	s2 := openStream(t, url, "1.0", "SubscribeToTask", map[string]any{"id": taskID}, withHeader("Last-Event-ID", last.ID))
	f, _ := s2.next(t)
	if d := describe(t, f); d != "task:TASK_STATE_WORKING" {
		t.Fatalf("resubscribe opens with %q", d)
	}
	close(gate)
	rest, _ := readUntil(t, s2, "status:TASK_STATE_COMPLETED")
	for _, d := range rest {
		if d == "artifact:chunk one, " {
			t.Errorf("chunk one repeated after Last-Event-ID: %q", rest)
		}
	}
	if !contains(rest, "artifact:chunk two") {
		t.Errorf("chunk two missed: %q", rest)
	}
	s2.ended(t)
	if got := getTask10(t, url, taskID); got.text() != "chunk one, chunk two" {
		t.Errorf("task text %q", got.text())
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

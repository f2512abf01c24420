package integration

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// ndjsonAgent streams n text chunks of size bytes, then, if final is set,
// that final status.
func ndjsonAgent(t *testing.T, n, size int, final string) *agent {
	chunk := fmt.Sprintf(`{"text":%q}`+"\n", strings.Repeat("x", size))
	return newAgent(t, func(w http.ResponseWriter, _ *http.Request, _ agentCall) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		for range n {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
		if final != "" {
			fmt.Fprintf(w, `{"status":%q,"message":"more?"}`+"\n", final)
		}
	})
}

// TestAgentOutputBoundedThroughCaddy: an agent that streams far more than
// max_task_output ends its task failed, with a status message naming the
// limit, and the task keeps only what fit.
func TestAgentOutputBoundedThroughCaddy(t *testing.T) {
	a := ndjsonAgent(t, 200, 64<<10, "") // 12.5 MiB
	load(t, minimal(`limits {
			max_task_output 1MiB
		}`), map[string]any{"Agent": a.URL()})
	url := base + "/a2a"
	task := send10(t, url, msg10("flood me", "", ""))
	if task.Status.State != "TASK_STATE_FAILED" || !strings.Contains(task.statusText(), "max_task_output 1048576") {
		t.Fatalf("task %s: %q", task.Status.State, task.statusText())
	}
	got := getTask10(t, url, task.ID)
	if n := len(got.text()); n > 1<<20 || n == 0 {
		t.Errorf("the task keeps %d bytes of output (limit 1 MiB)", n)
	}
}

// TestChattyTurnsThroughCaddy: an agent that streams 4,000 chunks every
// turn keeps a conversation going turn after turn (its earlier turns are
// compacted; the bound on events is per turn). Before, turn 3 failed.
func TestChattyTurnsThroughCaddy(t *testing.T) {
	a := ndjsonAgent(t, 4000, 8, "input-required")
	load(t, minimal(), map[string]any{"Agent": a.URL()})
	url := base + "/a2a"
	id := ""
	for turn := range 4 {
		task := send10(t, url, msg10(fmt.Sprintf("turn %d", turn), id, ""))
		if task.Status.State != "TASK_STATE_INPUT_REQUIRED" {
			t.Fatalf("turn %d: %s %q", turn, task.Status.State, task.statusText())
		}
		id = task.ID
	}
	// Each turn's answer is whole in its artifact.
	task := getTask10(t, url, id)
	if len(task.Artifacts) != 4 {
		t.Fatalf("%d artifacts after 4 turns", len(task.Artifacts))
	}
	for i, art := range task.Artifacts {
		if len(art.Parts) != 1 || len(art.Parts[0].Text) != 4000*8 {
			t.Errorf("artifact %d: %d parts", i, len(art.Parts))
		}
	}
}

// TestOwnersCannotCrowdEachOtherOut: with a small store, bob's running
// tasks cannot push alice's waiting one out (he is refused with -32080,
// retryable, naming the bound), and bob's own bound on running tasks
// refuses him before he fills the store.
func TestOwnersCannotCrowdEachOtherOut(t *testing.T) {
	release := make(chan struct{})
	a := newAgent(t, func(w http.ResponseWriter, r *http.Request, c agentCall) {
		w.Header().Set("Content-Type", "text/plain")
		if c.User == "alice" {
			if len(c.History) == 0 {
				w.Header().Set("A2A-Task-State", "input-required")
				io.WriteString(w, "Which city?")
				return
			}
			io.WriteString(w, "Sunny")
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) })
	cfg := `
http://:9080 {
	basic_auth /a2a {
		alice {{.Alice}}
		bob {{.Bob}}
	}
	a2a {
		upstream {{.Agent}}` + skillBlock + `
		store memory {
			max_tasks {{.MaxTasks}}
		}
		{{.Limits}}
	}
}
`
	url := base + "/a2a"
	alice, bob := withAuth("alice", "alice-pw"), withAuth("bob", "bob-pw")
	nonBlocking := func(text string) map[string]any {
		return map[string]any{"message": msg10(text, "", ""), "configuration": map[string]any{"returnImmediately": true}}
	}

	load(t, cfg, map[string]any{"Agent": a.URL(), "Alice": aliceHash, "Bob": bobHash, "MaxTasks": 3, "Limits": ""})
	ask := send10(t, url, msg10("weather?", "", ""), alice)
	call(t, url, "1.0", "SendMessage", nonBlocking("b1"), bob).ok(t, nil)
	call(t, url, "1.0", "SendMessage", nonBlocking("b2"), bob).ok(t, nil)
	e := call(t, url, "1.0", "SendMessage", nonBlocking("b3"), bob).fails(t, -32080)
	if !strings.Contains(string(e.Data), `"reason":"RESOURCE_EXHAUSTED"`) || !strings.Contains(string(e.Data), `"limit":"max_tasks"`) {
		t.Errorf("full store: %s %s", e.Message, e.Data)
	}
	e = call(t, url, "", "message/send", map[string]any{"message": msg03("b4", ""), "configuration": map[string]any{"blocking": false}}, bob).fails(t, -32080)
	if e.Data != nil || !strings.Contains(e.Message, "max_tasks") {
		t.Errorf("0.3 full store: %+v", e)
	}
	// Alice's conversation is still there and goes on.
	if done := send10(t, url, msg10("Oslo", ask.ID, ""), alice); done.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("alice's continuation: %s", done.Status.State)
	}

	// A fresh store (another max_tasks; the old one's runs end with it)
	// with a bound on bob's runs. (Runs, and so the slots they hold,
	// outlive a reload that keeps the store.)
	load(t, cfg, map[string]any{"Agent": a.URL(), "Alice": aliceHash, "Bob": bobHash, "MaxTasks": 10,
		"Limits": "limits {\n\t\t\tmax_runs_per_owner 1\n\t\t}"})
	call(t, url, "1.0", "SendMessage", nonBlocking("b1"), bob).ok(t, nil)
	e = call(t, url, "1.0", "SendMessage", nonBlocking("b2"), bob).fails(t, -32080)
	if !strings.Contains(string(e.Data), `"limit":"max_runs_per_owner"`) || !strings.Contains(string(e.Data), `"max":"1"`) {
		t.Errorf("runs bound: %s %s", e.Message, e.Data)
	}
	if task := send10(t, url, msg10("weather?", "", ""), alice); task.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Errorf("alice held up by bob: %s", task.Status.State)
	}
}

// TestContextsPerOwnerThroughCaddy: two callers naming the same contextId
// each keep it, but the agent sees two contexts that never meet, and
// nothing of one reaches the other.
func TestContextsPerOwnerThroughCaddy(t *testing.T) {
	a := textAgent(t)
	load(t, `
http://:9080 {
	basic_auth /a2a {
		alice {{.Alice}}
		bob {{.Bob}}
	}
	a2a {
		upstream {{.Agent}}`+skillBlock+`
	}
}
`, map[string]any{"Agent": a.URL(), "Alice": aliceHash, "Bob": bobHash})
	url := base + "/a2a"
	alice, bob := withAuth("alice", "alice-pw"), withAuth("bob", "bob-pw")
	ta1 := send10(t, url, msg10("one", "", "shared-ctx"), alice)
	ca1 := a.next(t)
	ta2 := send10(t, url, msg10("two", "", "shared-ctx"), alice)
	ca2 := a.next(t)
	tb := send10(t, url, msg10("three", "", "shared-ctx"), bob)
	cb := a.next(t)
	for _, task := range []wireTask{ta1, ta2, tb} {
		if task.ContextID != "shared-ctx" {
			t.Fatalf("contextId %q, want the caller's", task.ContextID)
		}
	}
	if ca1.ContextID != ca2.ContextID {
		t.Errorf("alice's one context has two ids at the agent: %s, %s", ca1.ContextID, ca2.ContextID)
	}
	if cb.ContextID == ca1.ContextID || ca1.ContextID == "shared-ctx" || cb.ContextID == "shared-ctx" {
		t.Errorf("agent contexts: alice %s, bob %s", ca1.ContextID, cb.ContextID)
	}
	var list struct {
		Tasks []wireTask `json:"tasks"`
	}
	call(t, url, "1.0", "ListTasks", map[string]any{"contextId": "shared-ctx"}, bob).ok(t, &list)
	if len(list.Tasks) != 1 || list.Tasks[0].ID != tb.ID {
		t.Errorf("bob's shared-ctx lists %d tasks", len(list.Tasks))
	}
}

// TestListTasksReadsLittle: listing 20 finished tasks of 1 MiB answers
// without decoding what the answer leaves out (it allocated 20 MiB and
// more to send a few KB).
func TestListTasksReadsLittle(t *testing.T) {
	a := ndjsonAgent(t, 16, 64<<10, "")
	load(t, `
http://:9080 {
	basic_auth /a2a {
		alice {{.Alice}}
	}
	a2a {
		upstream {{.Agent}}`+skillBlock+`
	}
}
`, map[string]any{"Agent": a.URL(), "Alice": aliceHash})
	url := base + "/a2a"
	alice := withAuth("alice", "alice-pw")
	for i := range 20 {
		if task := send10(t, url, msg10(fmt.Sprint(i), "", ""), alice); task.Status.State != "TASK_STATE_COMPLETED" {
			t.Fatalf("task %d: %s", i, task.Status.State)
		}
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	var list struct {
		Tasks []wireTask `json:"tasks"`
	}
	call(t, url, "1.0", "ListTasks", map[string]any{"pageSize": 100, "historyLength": 0}, alice).ok(t, &list)
	runtime.ReadMemStats(&ms)
	if len(list.Tasks) != 20 {
		t.Fatalf("%d tasks listed", len(list.Tasks))
	}
	if got := ms.TotalAlloc - before; got > 8<<20 {
		t.Errorf("ListTasks without artifacts over 20 MiB of tasks allocated %d MiB", got>>20)
	}
}

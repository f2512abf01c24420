package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"
)

// entries returns the log entries whose message is msg, waiting briefly
// for at least n of them.
func (l *logFile) entries(t *testing.T, msg string, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := os.ReadFile(l.path)
		var out []map[string]any
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var e map[string]any
			if json.Unmarshal(sc.Bytes(), &e) == nil && e["msg"] == msg {
				out = append(out, e)
			}
		}
		if len(out) >= n {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d log entries %q, want %d, in:\n%s", len(out), msg, n, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMountedLogLine: each mount says at load what it serves: its paths,
// versions, upstream kind and target, store type and share.
func TestMountedLogLine(t *testing.T) {
	a := textAgent(t)
	logs := newLogFile(t)
	loadGlobal(t, logs.global(), `http://:9080 {
	a2a {
		upstream {{.Agent}}`+skillBlock+`
	}
	a2a {
		upstream {{.Agent}}
		rpc_path /v03
		card_path /v03/card.json
		spec_version 0.3
		store memory {
			share team
		}`+skillBlock+`
	}
}
`, map[string]any{"Agent": a.URL()})
	got := logs.entries(t, "a2a: mounted", 2)
	byPath := map[string]map[string]any{}
	for _, e := range got {
		byPath[e["rpc_path"].(string)] = e
	}
	for rpc, want := range map[string]map[string]any{
		"/a2a": {"card_path": "/.well-known/agent-card.json", "versions": []any{"0.3", "1.0"},
			"upstream": "http", "upstream_target": a.URL(), "store": "memory", "name": "Test agent", "server": "srv0"},
		"/v03": {"card_path": "/v03/card.json", "versions": []any{"0.3"},
			"upstream": "http", "upstream_target": a.URL(), "store": "memory", "share": "team"},
	} {
		e := byPath[rpc]
		if e == nil {
			t.Errorf("no mounted line for %s in %v", rpc, got)
			continue
		}
		if e["level"] != "info" || e["logger"] != "http.handlers.a2a" {
			t.Errorf("%s: level %v logger %v", rpc, e["level"], e["logger"])
		}
		for k, v := range want {
			if vs, ok := v.([]any); ok {
				if got, _ := e[k].([]any); !slices.Equal(got, vs) {
					t.Errorf("%s: %s = %v, want %v", rpc, k, e[k], v)
				}
			} else if e[k] != v {
				t.Errorf("%s: %s = %v, want %v", rpc, k, e[k], v)
			}
		}
	}
	if _, ok := byPath["/a2a"]["share"]; ok {
		t.Errorf("a mount without a share logs one: %v", byPath["/a2a"])
	}
}

// TestReloadDropWarns: a reload that changes the upstream URL starts the
// mount on a new, empty store; the old one, which held tasks, is dropped
// with a warning counting them (how many waited on the client, how many
// were running).
func TestReloadDropWarns(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	mixed := newAgent(t, func(w http.ResponseWriter, r *http.Request, c agentCall) {
		w.Header().Set("Content-Type", "text/plain")
		switch c.inputText() {
		case "ask":
			w.Header().Set("A2A-Task-State", "input-required")
			io.WriteString(w, "Which city?")
		case "slow":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		default:
			io.WriteString(w, "done")
		}
	})
	other := textAgent(t)
	logs := newLogFile(t)
	loadGlobal(t, logs.global(), minimal(), map[string]any{"Agent": mixed.URL()})

	for _, text := range []string{"one", "two", "ask"} {
		send10(t, base+"/a2a", msg10(text, "", ""))
	}
	call(t, base+"/a2a", "1.0", "SendMessage", map[string]any{
		"message": msg10("slow", "", ""), "configuration": map[string]any{"returnImmediately": true},
	}).ok(t, nil)
	for range 4 {
		mixed.next(t)
	}

	loadGlobal(t, logs.global(), minimal(), map[string]any{"Agent": other.URL()})
	got := logs.entries(t, "a2a: config change dropped a task store with its tasks (a new store starts empty); "+
		"to keep tasks across a change of upstream or rpc_path, name the store's share (store memory { share <name> })", 1)
	e := got[len(got)-1]
	if e["level"] != "warn" || e["tasks"] != 4.0 || e["waiting"] != 1.0 || e["running"] != 1.0 {
		t.Errorf("drop warning: %v, want 4 tasks, 1 waiting, 1 running", e)
	}
	if e["last_mount"] != `the a2a mount "Test agent" in server srv0 (:9080) at rpc_path /a2a` {
		t.Errorf("drop warning names %v", e["last_mount"])
	}
}

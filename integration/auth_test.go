package integration

import (
	"testing"
)

// Test users (bcrypt cost 4: fast to check, fine for tests).
const (
	aliceHash = "$2a$04$XY4e5x.3exIDiMJlIkv66ejQTBJom50QAt35Ghs5vSsJQCvnaDn9q" // alice-pw
	bobHash   = "$2a$04$LZhzp5o2SKwUBzUdx7m2H.hLKXVFskaiNZxKK2JTZsOQ0PjcSxW/O" // bob-pw
)

// TestCallerIdentity: basic_auth gates the RPC path while the card stays
// public; tasks belong to the authenticated user, who reaches the agent
// as "user"; another user's task looks like a missing one.
func TestCallerIdentity(t *testing.T) {
	ask := askAgent(t)
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
`, map[string]any{"Agent": ask.URL(), "Alice": aliceHash, "Bob": bobHash})
	url := base + "/a2a"
	alice, bob := withAuth("alice", "alice-pw"), withAuth("bob", "bob-pw")

	// The card is public.
	if resp, _ := get(t, "GET", base+"/.well-known/agent-card.json"); resp.StatusCode != 200 {
		t.Fatalf("card without credentials: %d", resp.StatusCode)
	}
	// The RPC path is not.
	if a := call(t, url, "1.0", "ListTasks", map[string]any{}); a.Status != 401 {
		t.Fatalf("RPC without credentials: %d %s", a.Status, a.Body)
	}
	if a := call(t, url, "1.0", "ListTasks", map[string]any{}, withAuth("alice", "wrong")); a.Status != 401 {
		t.Fatalf("RPC with a wrong password: %d", a.Status)
	}

	task := send10(t, url, msg10("weather?", "", ""), alice)
	if c := ask.next(t); c.User != "alice" {
		t.Errorf("agent got user %q, want alice", c.User)
	}

	// Bob cannot see, continue, cancel or list alice's task.
	call(t, url, "1.0", "GetTask", map[string]any{"id": task.ID}, bob).fails(t, -32001)
	call(t, url, "", "tasks/get", map[string]any{"id": task.ID}, bob).fails(t, -32001)
	call(t, url, "1.0", "CancelTask", map[string]any{"id": task.ID}, bob).fails(t, -32001)
	call(t, url, "1.0", "SendMessage", map[string]any{"message": msg10("Oslo", task.ID, "")}, bob).fails(t, -32001)
	var list struct {
		Tasks     []wireTask `json:"tasks"`
		TotalSize int        `json:"totalSize"`
	}
	call(t, url, "1.0", "ListTasks", map[string]any{}, bob).ok(t, &list)
	if len(list.Tasks) != 0 || list.TotalSize != 0 {
		t.Errorf("bob lists %d tasks", len(list.Tasks))
	}

	// Alice can, and the agent hears from alice again.
	got := send10(t, url, msg10("Oslo", task.ID, ""), alice)
	if got.Status.State != "TASK_STATE_COMPLETED" || got.text() != "Sunny in Oslo" {
		t.Errorf("alice's continuation: %s %q", got.Status.State, got.text())
	}
	if c := ask.next(t); c.User != "alice" || len(c.History) != 2 {
		t.Errorf("agent got user %q history %d", c.User, len(c.History))
	}
	call(t, url, "1.0", "ListTasks", map[string]any{}, alice).ok(t, &list)
	if len(list.Tasks) != 1 || list.Tasks[0].ID != task.ID {
		t.Errorf("alice lists %+v", list.Tasks)
	}
}

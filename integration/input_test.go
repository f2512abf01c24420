package integration

import (
	"strings"
	"testing"
)

// TestCallerInputNormalised: what a caller sends is read one way only, and
// everything a caller names is bounded: a 3 MB contextId, 300,000
// referenceTaskIds, a member given twice (`"taskId":"","taskId":"x"`),
// invalid UTF-8 inside a data part: each is refused with its exact code,
// and nothing is stored or reaches the agent.
func TestCallerInputNormalised(t *testing.T) {
	a := textAgent(t)
	load(t, minimal("owner {http.request.header.X-Owner}"), map[string]any{"Agent": a.URL()})
	owner := withHeader("X-Owner", "x")
	url := base + "/a2a"
	msg := func(extra string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]` + extra + `}}}`
	}
	refs := `"` + strings.Repeat(`r","`, 300000) + `r"`
	for _, c := range []struct {
		name, body string
		code       int
		field      string // in the error (1.0: the BadRequest field violation)
	}{
		{"3 MB contextId", msg(`,"contextId":"` + strings.Repeat("c", 3<<20) + `"`), -32602, "message.contextId"},
		{"300,000 referenceTaskIds", msg(`,"referenceTaskIds":[` + refs + `]`), -32602, "message.referenceTaskIds"},
		{"taskId twice", msg(`,"taskId":"","taskId":"nope"`), -32602, "message.taskId"},
		{"a part's text twice", strings.Replace(msg(""), `{"text":"hi"}`, `{"text":"hi","text":"other"}`, 1), -32602, "message.parts[0].text"},
		{"invalid UTF-8 in a data part", strings.Replace(msg(""), `{"text":"hi"}`, "{\"data\":{\"k\":\"\xff\"}}", 1), -32700, ""},
		{"invalid UTF-8 in a metadata key", msg(",\"metadata\":{\"k\xc3\":1}"), -32700, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := post(t, url, "1.0", c.body, owner).fails(t, c.code)
			if c.field != "" && !strings.Contains(string(e.Data), `"field":"`+c.field+`"`) {
				t.Errorf("error does not name %s: %s %s", c.field, e.Message, e.Data)
			}
			if len(e.Message) > 400 {
				t.Errorf("the error message carries the input back (%d bytes)", len(e.Message))
			}
		})
	}
	if n := len(a.Calls()); n != 0 {
		t.Fatalf("refused requests reached the agent %d times", n)
	}
	// One good send, and it is the owner's only task.
	post(t, url, "1.0", msg(""), owner).ok(t, nil)
	var list struct {
		Tasks []wireTask `json:"tasks"`
	}
	call(t, url, "1.0", "ListTasks", map[string]any{}, owner).ok(t, &list)
	if len(list.Tasks) != 1 {
		t.Fatalf("the owner holds %d tasks, want the one good send's", len(list.Tasks))
	}
}

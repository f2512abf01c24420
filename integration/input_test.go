package integration

import (
	"encoding/json"
	"fmt"
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
	// Each message its own messageId: a send under a used one is a retry
	// or refused as another message, which no case here is about.
	msg := func(extra string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"` + fmt.Sprintf("in-%d", msgIDs.Add(1)) +
			`","role":"ROLE_USER","parts":[{"text":"hi"}]` + extra + `}}}`
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

// TestCallerInputRoundTrips: what still must hold. Big numbers, -0,
// escapes, NUL and a lone surrogate reach the agent as the caller reads
// them back (data as sent, byte for byte; text decoded once, a lone
// surrogate as U+FFFD on both sides); no header the caller sends reaches
// the agent, and extensions travel in the body only.
func TestCallerInputRoundTrips(t *testing.T) {
	a := textAgent(t)
	load(t, minimal(`extension urn:ext:x`), map[string]any{"Agent": a.URL()})
	data := `{"big":12345678901234567890,"neg":-0,"esc":"\u00e9\"\\","nul":"a\u0000b","lone":"\ud800"}`
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[` +
		`{"text":"t\u0000\ud800"},{"data":` + data + `}]}}}`
	ans := post(t, base+"/a2a", "1.0", body,
		withHeader("Cookie", "session=secret"), withHeader("Authorization", "Bearer caller-token"),
		withHeader("X-Custom", "caller"), withHeader("A2A-Extensions", "urn:ext:x"))
	var res struct {
		Task struct {
			History []struct {
				Parts []struct {
					Text *string         `json:"text"`
					Data json.RawMessage `json:"data"`
				} `json:"parts"`
			} `json:"history"`
		} `json:"task"`
	}
	ans.ok(t, &res)
	c := a.next(t)
	var sent struct {
		Parts []struct {
			Text *string         `json:"text"`
			Data json.RawMessage `json:"data"`
		} `json:"parts"`
	}
	if err := json.Unmarshal(c.Message, &sent); err != nil || len(sent.Parts) != 2 || len(res.Task.History) != 1 {
		t.Fatalf("agent got %s (%v)", c.Message, err)
	}
	back := res.Task.History[0].Parts
	if string(sent.Parts[1].Data) != data || string(back[1].Data) != data {
		t.Errorf("data:\n sent   %s\n agent  %s\n caller %s", data, sent.Parts[1].Data, back[1].Data)
	}
	if want := "t\x00\uFFFD"; *sent.Parts[0].Text != want || *back[0].Text != want {
		t.Errorf("text: agent %q, caller %q, want %q", *sent.Parts[0].Text, *back[0].Text, want)
	}
	for _, h := range []string{"Cookie", "Authorization", "X-Custom", "A2a-Extensions", "X-A2a-Extensions"} {
		if v := c.Header.Get(h); v != "" {
			t.Errorf("the caller's %s reached the agent: %q", h, v)
		}
	}
	if len(c.Extensions) != 1 || c.Extensions[0] != "urn:ext:x" {
		t.Errorf("extensions in the body: %v", c.Extensions)
	}
}

package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// replyCfg has a message-reply mount in front of {{.Agent}} and another in
// front of {{.Fail}}, an agent that answers 500.
const replyCfg = `
http://:9080 {
	a2a {
		upstream {{.Agent}}
		owner {http.request.header.X-Owner}
		reply message` + skillBlock + `
	}
	a2a {
		upstream {{.Fail}}
		rpc_path /fail
		card_path /fail/.well-known/agent-card.json
		reply message` + skillBlock + `
	}
}
`

// outputAgent streams every kind of output a reply gathers: a progress
// note (not part of it), two text chunks, a data part and a separate
// artifact.
func outputAgent(t *testing.T) *agent {
	return newAgent(t, func(w http.ResponseWriter, _ *http.Request, c agentCall) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		in, _ := json.Marshal(c.inputText())
		fmt.Fprintf(w, `{"status":"working","message":"thinking"}`+"\n"+`{"text":"Hello, "}`+"\n"+`{"text":%s}`+"\n", in)
		io.WriteString(w, `{"data":{"n":1}}`+"\n"+`{"artifact":{"name":"extra","parts":[{"text":"appendix"}]}}`+"\n")
	})
}

// replyParts renders a reply's parts as text, data as its JSON.
func replyParts(m wireMessage) []string {
	var out []string
	for _, p := range m.Parts {
		if p.Data != nil {
			out = append(out, string(p.Data))
		} else {
			out = append(out, p.Text)
		}
	}
	return out
}

// checkReply checks a reply message of either version.
func checkReply(t *testing.T, what string, m wireMessage, v10 bool, input string) {
	t.Helper()
	role, kind := "agent", "message"
	if v10 {
		role, kind = "ROLE_AGENT", ""
	}
	want := []string{"Hello, " + input, `{"n":1}`, "appendix"}
	if got := replyParts(m); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: parts %q, want %q", what, got, want)
	}
	if m.Role != role || m.Kind != kind || m.TaskID != "" || m.ContextID == "" || m.MessageID == "" {
		t.Errorf("%s: message %+v", what, m)
	}
}

// TestMessageReplies: `reply message` through the Caddyfile: sends of
// both versions (blocking or not) answer one Message, a streaming send is
// exactly one message frame, nothing is stored, and an agent failure is
// -32603 without the agent's text.
func TestMessageReplies(t *testing.T) {
	a, fail := outputAgent(t), failAgent(t)
	load(t, replyCfg, map[string]any{"Agent": a.URL(), "Fail": fail.URL()})
	url := base + "/a2a"

	var r10 struct {
		Task    *wireTask    `json:"task"`
		Message *wireMessage `json:"message"`
	}
	alice := withHeader("X-Owner", "alice")
	call(t, url, "1.0", "SendMessage", map[string]any{"message": msg10("one", "", "")}, alice).ok(t, &r10)
	if r10.Task != nil || r10.Message == nil {
		t.Fatalf("1.0 answer holds task %v, message %v", r10.Task, r10.Message)
	}
	checkReply(t, "SendMessage", *r10.Message, true, "one")
	// The agent is told an id of its own for the reply's context.
	if c := a.next(t); c.TaskID != "" || len(c.History) != 0 || c.ContextID == r10.Message.ContextID || len(c.ContextID) != 36 {
		t.Errorf("agent called with taskId %q, history %d, contextId %q", c.TaskID, len(c.History), c.ContextID)
	}

	r10.Message = nil
	call(t, url, "1.0", "SendMessage", map[string]any{
		"message": msg10("two", "", "ctx-7"), "configuration": map[string]any{"returnImmediately": true},
	}).ok(t, &r10)
	checkReply(t, "SendMessage returnImmediately", *r10.Message, true, "two")
	if r10.Message.ContextID != "ctx-7" {
		t.Errorf("contextId %q, want the request's", r10.Message.ContextID)
	}

	var r03 wireMessage
	call(t, url, "", "message/send", map[string]any{"message": msg03("three", "")}).ok(t, &r03)
	checkReply(t, "message/send", r03, false, "three")

	for _, tc := range []struct {
		version, method, input string
		msg                    map[string]any
	}{
		{"1.0", "SendStreamingMessage", "four", msg10("four", "", "")},
		{"", "message/stream", "five", msg03("five", "")},
	} {
		s := openStream(t, url, tc.version, tc.method, map[string]any{"message": tc.msg})
		if cc, xa := s.resp.Header.Get("Cache-Control"), s.resp.Header.Get("X-Accel-Buffering"); cc != "no-cache" || xa != "no" {
			t.Errorf("%s: Cache-Control %q, X-Accel-Buffering %q", tc.method, cc, xa)
		}
		f, _ := s.next(t)
		var env struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(f.Data, &env); err != nil {
			t.Fatalf("%s: frame %s", tc.method, f.Data)
		}
		var m wireMessage
		if tc.version == "1.0" {
			var sr struct {
				Message *wireMessage `json:"message"`
			}
			if json.Unmarshal(env.Result, &sr) != nil || sr.Message == nil {
				t.Fatalf("%s: frame is not a message event: %s", tc.method, f.Data)
			}
			m = *sr.Message
		} else if err := json.Unmarshal(env.Result, &m); err != nil {
			t.Fatal(err)
		}
		checkReply(t, tc.method, m, tc.version == "1.0", tc.input)
		if f.ID != "" {
			t.Errorf("%s: the message frame has SSE id %q", tc.method, f.ID)
		}
		s.ended(t)
	}

	// No task exists: not by id, not by a message naming one, not listed
	// (the owner comes from X-Owner, so alice's tasks would be listed).
	call(t, url, "1.0", "GetTask", map[string]any{"id": "t-1"}).fails(t, -32001)
	call(t, url, "1.0", "SendMessage", map[string]any{"message": msg10("x", "t-1", "")}).fails(t, -32001)
	streamError(t, call(t, url, "1.0", "SendStreamingMessage", map[string]any{"message": msg10("x", "t-1", "")}), -32001)
	var list struct {
		Tasks []wireTask `json:"tasks"`
	}
	call(t, url, "1.0", "ListTasks", map[string]any{}, alice).ok(t, &list)
	if len(list.Tasks) != 0 {
		t.Errorf("ListTasks lists %d tasks", len(list.Tasks))
	}

	// An agent failure is a generic -32603, blocking and streaming.
	for _, a := range []rpcAnswer{
		call(t, base+"/fail", "1.0", "SendMessage", map[string]any{"message": msg10("x", "", "")}),
		call(t, base+"/fail", "", "message/send", map[string]any{"message": msg03("x", "")}),
	} {
		if e := a.fails(t, -32603); strings.Contains(string(a.Body), "SECRET") || !strings.HasPrefix(e.Message, "Internal error") {
			t.Errorf("failure answer: %s", a.Body)
		}
	}
	// The reply's stream opened before the agent failed: the error is
	// its one frame.
	s := openStream(t, base+"/fail", "1.0", "SendStreamingMessage", map[string]any{"message": msg10("x", "", "")})
	if f, _ := s.next(t); describe(t, f) != "error:-32603" || strings.Contains(string(f.Data), "SECRET") {
		t.Errorf("streaming failure: %s", f.Data)
	}
	s.ended(t)
}

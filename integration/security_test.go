package integration

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// TestExtensionsThroughCaddy: declared extensions are in the card; a
// request that does not activate the required one is -32008 in both
// versions; activated ones are echoed under the header name the client
// used (JSON and SSE answers) and reach the agent.
func TestExtensionsThroughCaddy(t *testing.T) {
	a := textAgent(t)
	load(t, minimal(`extension urn:ext:trace {
			required
			description "Carries a trace id."
			params `+"`"+`{"header":"X-Trace"}`+"`"+`
		}
		extension urn:ext:cite`), map[string]any{"Agent": a.URL()})
	url := base + "/a2a"

	// The card declares both, and needs no extension header.
	_, body := get(t, "GET", base+"/.well-known/agent-card.json", withHeader("A2A-Version", "1.0"))
	var card struct {
		Capabilities struct {
			Extensions []struct {
				URI         string          `json:"uri"`
				Description string          `json:"description"`
				Required    bool            `json:"required"`
				Params      json.RawMessage `json:"params"`
			} `json:"extensions"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(body, &card); err != nil {
		t.Fatal(err)
	}
	exts := card.Capabilities.Extensions
	if len(exts) != 2 || exts[0].URI != "urn:ext:trace" || !exts[0].Required || exts[0].Description != "Carries a trace id." ||
		string(exts[0].Params) != `{"header":"X-Trace"}` || exts[1].URI != "urn:ext:cite" || exts[1].Required {
		t.Fatalf("card extensions: %s", body)
	}

	// Missing the required one: -32008, nothing reaches the agent.
	e := call(t, url, "1.0", "SendMessage", map[string]any{"message": msg10("hi", "", "")}).fails(t, -32008)
	if !strings.Contains(string(e.Data), `"reason":"EXTENSION_SUPPORT_REQUIRED"`) || !strings.Contains(string(e.Data), `"extension":"urn:ext:trace"`) {
		t.Errorf("1.0 -32008 data: %s", e.Data)
	}
	e = call(t, url, "", "message/send", map[string]any{"message": msg03("hi", "")}, withHeader("X-A2A-Extensions", "urn:ext:cite")).fails(t, -32008)
	if e.Data != nil || !strings.Contains(e.Message, "urn:ext:trace") {
		t.Errorf("0.3 -32008: %+v", e)
	}
	if n := len(a.Calls()); n != 0 {
		t.Fatalf("refused requests reached the agent %d times", n)
	}

	// Activated: echoed under the name used, passed to the agent.
	ans := call(t, url, "1.0", "SendMessage", map[string]any{"message": msg10("hi", "", "")},
		withHeader("A2A-Extensions", "urn:ext:cite, urn:ext:unknown,urn:ext:trace"))
	ans.ok(t, nil)
	if got := ans.Header.Get("A2A-Extensions"); got != "urn:ext:cite, urn:ext:trace" || ans.Header.Get("X-A2A-Extensions") != "" {
		t.Errorf("1.0 echo %q / %q", got, ans.Header.Get("X-A2A-Extensions"))
	}
	if c := a.next(t); !slices.Equal(c.Extensions, []string{"urn:ext:cite", "urn:ext:trace"}) {
		t.Errorf("agent got extensions %v", c.Extensions)
	}
	ans = call(t, url, "", "message/send", map[string]any{"message": msg03("hi", "")}, withHeader("X-A2A-Extensions", "urn:ext:trace"))
	ans.ok(t, nil)
	if got := ans.Header.Get("X-A2A-Extensions"); got != "urn:ext:trace" || ans.Header.Get("A2A-Extensions") != "" {
		t.Errorf("0.3 echo %q / %q", got, ans.Header.Get("A2A-Extensions"))
	}
	if c := a.next(t); !slices.Equal(c.Extensions, []string{"urn:ext:trace"}) {
		t.Errorf("agent got extensions %v", c.Extensions)
	}

	// A stream echoes too, and a refused stream is a plain -32008 answer.
	s := openStream(t, url, "1.0", "SendStreamingMessage", map[string]any{"message": msg10("hi", "", "")},
		withHeader("A2A-Extensions", "urn:ext:trace"))
	if got := s.resp.Header.Get("A2A-Extensions"); got != "urn:ext:trace" {
		t.Errorf("SSE echo %q", got)
	}
	readUntil(t, s, "status:TASK_STATE_COMPLETED")
	streamError(t, call(t, url, "1.0", "SendStreamingMessage", map[string]any{"message": msg10("hi", "", "")}), -32008)
}

// TestLimitThroughCaddy: a limit set in the Caddyfile refuses a request
// over it with -32602 naming the limit, before the agent is called.
func TestLimitThroughCaddy(t *testing.T) {
	// A short answer: the agent's parts are held to max_text_size too,
	// and an echo of a message at the limit would be over it.
	a := newAgent(t, func(w http.ResponseWriter, _ *http.Request, _ agentCall) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok")
	})
	load(t, minimal(`limits {
			max_parts 2
			max_text_size 16
		}`), map[string]any{"Agent": a.URL()})
	url := base + "/a2a"
	three := msg10("a", "", "")
	three["parts"] = []any{map[string]any{"text": "a"}, map[string]any{"text": "b"}, map[string]any{"text": "c"}}
	e := call(t, url, "1.0", "SendMessage", map[string]any{"message": three}).fails(t, -32602)
	var data []map[string]any
	if err := json.Unmarshal(e.Data, &data); err != nil || len(data) != 2 {
		t.Fatalf("data %s", e.Data)
	}
	if md, _ := data[0]["metadata"].(map[string]any); md["limit"] != "max_parts" || md["max"] != "2" {
		t.Errorf("ErrorInfo %v", data[0])
	}
	if fv, _ := data[1]["fieldViolations"].([]any); data[1]["@type"] != "type.googleapis.com/google.rpc.BadRequest" ||
		len(fv) != 1 || fv[0].(map[string]any)["field"] != "message.parts" {
		t.Errorf("BadRequest %v", data[1])
	}
	e = call(t, url, "", "message/send", map[string]any{"message": msg03(strings.Repeat("x", 17), "")}).fails(t, -32602)
	if !strings.Contains(e.Message, "max_text_size") || !strings.Contains(e.Message, "message.parts[0].text") {
		t.Errorf("0.3 message %q", e.Message)
	}
	if n := len(a.Calls()); n != 0 {
		t.Fatalf("refused requests reached the agent %d times", n)
	}
	// At the limit it goes through.
	two := msg10("a", "", "")
	two["parts"] = []any{map[string]any{"text": "a"}, map[string]any{"text": strings.Repeat("y", 16)}}
	if task := send10(t, url, two); task.Status.State != "TASK_STATE_COMPLETED" {
		t.Errorf("at the limit: %s", task.Status.State)
	}
}

// authService is a forward_auth endpoint: bearer tokens map to users
// (answered as Remote-User); "anon" is let in without a user; anything
// else is 401.
func authService(t *testing.T) *httptest.Server {
	users := map[string]string{"Bearer alice-token": "alice", "Bearer bob-token": "bob"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if u, ok := users[auth]; ok {
			w.Header().Set("Remote-User", u)
			w.WriteHeader(http.StatusOK)
			return
		}
		if auth == "Bearer anon" {
			w.WriteHeader(http.StatusOK)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="a2a"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func withBearer(token string) reqOpt { return withHeader("Authorization", "Bearer "+token) }

// TestOwnershipThroughAuth runs the same isolation checks behind real
// basic_auth and a real forward_auth (owner from the copied Remote-User
// header): the card is public, the RPC path is 401 without credentials,
// one user's task is -32001 for another on every method that names it
// (get, cancel, subscribe, send with taskId, in both versions), ListTasks
// shows only the caller's own tasks, and the agent hears who asks.
func TestOwnershipThroughAuth(t *testing.T) {
	auth := authService(t)
	for _, tc := range []struct {
		name       string
		cfg        string
		data       map[string]any
		alice, bob reqOpt
		// wrong is a credential that is refused.
		wrong reqOpt
	}{
		{
			name: "basic_auth",
			cfg: `
http://:9080 {
	basic_auth /a2a {
		alice {{.Alice}}
		bob {{.Bob}}
	}
	a2a {
		upstream {{.Agent}}` + skillBlock + `
	}
}
`,
			data:  map[string]any{"Alice": aliceHash, "Bob": bobHash},
			alice: withAuth("alice", "alice-pw"), bob: withAuth("bob", "bob-pw"), wrong: withAuth("alice", "bob-pw"),
		},
		{
			name: "forward_auth",
			cfg: `
http://:9080 {
	forward_auth /a2a {{.Auth}} {
		uri /check
		copy_headers Remote-User
	}
	a2a {
		upstream {{.Agent}}` + skillBlock + `
		owner {http.request.header.Remote-User}
	}
}
`,
			data:  map[string]any{"Auth": auth.URL},
			alice: withBearer("alice-token"), bob: withBearer("bob-token"), wrong: withBearer("mallory"),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ask := askAgent(t)
			tc.data["Agent"] = ask.URL()
			load(t, tc.cfg, tc.data)
			url := base + "/a2a"

			if resp, _ := get(t, "GET", base+"/.well-known/agent-card.json"); resp.StatusCode != 200 {
				t.Fatalf("card without credentials: %d", resp.StatusCode)
			}
			for _, opts := range [][]reqOpt{nil, {tc.wrong}} {
				if a := call(t, url, "1.0", "ListTasks", map[string]any{}, opts...); a.Status != 401 {
					t.Fatalf("RPC without valid credentials: %d %s", a.Status, a.Body)
				}
			}

			// Alice's task waits for input: it can be subscribed to and continued.
			task := send10(t, url, msg10("weather?", "", ""), tc.alice)
			if task.Status.State != "TASK_STATE_INPUT_REQUIRED" {
				t.Fatalf("alice's task: %s", task.Status.State)
			}
			if c := ask.next(t); c.User != "alice" {
				t.Errorf("agent got user %q, want alice", c.User)
			}
			bobTask := send03(t, url, msg03("weather?", ""), tc.bob)
			if c := ask.next(t); c.User != "bob" {
				t.Errorf("agent got user %q, want bob", c.User)
			}

			// Bob reaches none of it: each answer is exactly "not found".
			for _, c := range []struct{ version, method string }{
				{"1.0", "GetTask"}, {"", "tasks/get"}, {"1.0", "CancelTask"}, {"", "tasks/cancel"},
			} {
				e := call(t, url, c.version, c.method, map[string]any{"id": task.ID}, tc.bob).fails(t, -32001)
				missing := call(t, url, c.version, c.method, map[string]any{"id": "no-such-task"}, tc.bob).fails(t, -32001)
				if e.Message != missing.Message || strings.ReplaceAll(string(e.Data), task.ID, "X") != strings.ReplaceAll(string(missing.Data), "no-such-task", "X") {
					t.Errorf("%s: another's task %+v differs from a missing one %+v", c.method, e, missing)
				}
			}
			call(t, url, "1.0", "SendMessage", map[string]any{"message": msg10("Oslo", task.ID, "")}, tc.bob).fails(t, -32001)
			call(t, url, "", "message/send", map[string]any{"message": msg03("Oslo", task.ID)}, tc.bob).fails(t, -32001)
			streamError(t, call(t, url, "1.0", "SubscribeToTask", map[string]any{"id": task.ID}, tc.bob), -32001)
			s := openStream(t, url, "", "tasks/resubscribe", map[string]any{"id": task.ID}, tc.bob)
			if f, _ := s.next(t); describe(t, f) != "error:-32001" {
				t.Errorf("tasks/resubscribe by bob: %s", f.Data)
			}
			s.ended(t)
			// Alice can subscribe to her own: the task first (it waits
			// for input; the stream stays open for the next turn).
			s = openStream(t, url, "1.0", "SubscribeToTask", map[string]any{"id": task.ID}, tc.alice)
			if f, _ := s.next(t); describe(t, f) != "task:TASK_STATE_INPUT_REQUIRED" {
				t.Errorf("alice's subscribe: %s", f.Data)
			}

			// Each lists only their own.
			listIDs := func(opt reqOpt) []string {
				var list struct {
					Tasks []wireTask `json:"tasks"`
				}
				call(t, url, "1.0", "ListTasks", map[string]any{}, opt).ok(t, &list)
				var ids []string
				for _, t := range list.Tasks {
					ids = append(ids, t.ID)
				}
				return ids
			}
			if ids := listIDs(tc.alice); !slices.Equal(ids, []string{task.ID}) {
				t.Errorf("alice lists %v", ids)
			}
			if ids := listIDs(tc.bob); !slices.Equal(ids, []string{bobTask.ID}) {
				t.Errorf("bob lists %v", ids)
			}

			// Nothing bob tried changed alice's task; she continues it.
			got := send10(t, url, msg10("Oslo", task.ID, ""), tc.alice)
			if got.Status.State != "TASK_STATE_COMPLETED" || got.text() != "Sunny in Oslo" {
				t.Errorf("alice's continuation: %s %q", got.Status.State, got.text())
			}
			if c := ask.next(t); c.User != "alice" || len(c.History) != 2 {
				t.Errorf("agent got user %q history %d", c.User, len(c.History))
			}

			if tc.name != "forward_auth" {
				return
			}
			// The identity is what the auth service said, never what the
			// client claims: forward_auth replaces a client's Remote-User,
			// and removes it when the service names nobody.
			if ids := listIDs(func(r *http.Request) { tc.alice(r); r.Header.Set("Remote-User", "bob") }); !slices.Equal(ids, []string{task.ID}) {
				t.Errorf("alice claiming to be bob lists %v", ids)
			}
			anonAsBob := func(r *http.Request) { withBearer("anon")(r); r.Header.Set("Remote-User", "bob") }
			if ids := listIDs(anonAsBob); len(ids) != 0 {
				t.Errorf("an anonymous caller claiming to be bob lists %v", ids)
			}
			call(t, url, "1.0", "GetTask", map[string]any{"id": bobTask.ID}, anonAsBob).fails(t, -32001)
		})
	}
}

// TestHistoryLimitThroughCaddy: limits { max_history } bounds what a task
// keeps; the oldest messages go first.
func TestHistoryLimitThroughCaddy(t *testing.T) {
	ask := askAgent(t)
	load(t, minimal(`limits {
			max_history 2
		}`), map[string]any{"Agent": ask.URL()})
	url := base + "/a2a"
	task := send10(t, url, msg10("weather?", "", ""))
	got := send10(t, url, msg10("Oslo", task.ID, ""))
	if got.Status.State != "TASK_STATE_COMPLETED" || len(got.History) != 2 ||
		got.History[0].Role != "ROLE_AGENT" || got.History[1].Parts[0].Text != "Oslo" {
		t.Fatalf("history %+v", got.History)
	}
}

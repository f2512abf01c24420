package integration

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSend: blocking sends in both dialects against plain-text, JSON and
// NDJSON-stream agents; the agent sees the contract's request.
func TestSend(t *testing.T) {
	text, data, stream := textAgent(t), dataAgent(t), streamAgent(t, nil)
	load(t, `
http://:9080 {
	a2a {
		upstream {{.Text}}
		rpc_path /text`+skillBlock+`
	}
	a2a {
		upstream {{.Data}}
		rpc_path /data
		card_path /data.json`+skillBlock+`
	}
	a2a {
		upstream {{.Stream}}
		rpc_path /stream
		card_path /stream.json`+skillBlock+`
	}
}
`, map[string]any{"Text": text.URL(), "Data": data.URL(), "Stream": stream.URL()})

	t.Run("1.0 text", func(t *testing.T) {
		task := send10(t, base+"/text", msg10("world", "", ""))
		if task.Status.State != "TASK_STATE_COMPLETED" || task.text() != "Hello, world" {
			t.Fatalf("task: state %s text %q", task.Status.State, task.text())
		}
		if task.Kind != "" || task.ID == "" || task.ContextID == "" {
			t.Errorf("1.0 task shape: kind=%q id=%q contextId=%q", task.Kind, task.ID, task.ContextID)
		}
		c := text.next(t)
		// The agent is told the context id of this owner's context (see
		// TestContextsPerOwnerThroughCaddy), never the caller's.
		if c.TaskID != task.ID || c.ContextID == task.ContextID || len(c.ContextID) != 36 || c.inputText() != "world" || len(c.History) != 0 {
			t.Errorf("agent call: %+v", c)
		}
		if got := c.Header.Get("Content-Type"); got != "application/json" {
			t.Errorf("agent got Content-Type %q", got)
		}
	})
	t.Run("0.3 text", func(t *testing.T) {
		task := send03(t, base+"/text", msg03("there", ""))
		if task.Status.State != "completed" || task.text() != "Hello, there" {
			t.Fatalf("task: state %s text %q", task.Status.State, task.text())
		}
		if len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != 1 || task.Artifacts[0].Parts[0].Kind != "text" {
			t.Errorf("0.3 artifact: %+v", task.Artifacts)
		}
		text.next(t)
	})
	t.Run("JSON data part", func(t *testing.T) {
		task := send10(t, base+"/data", msg10("q", "", ""))
		if task.Status.State != "TASK_STATE_COMPLETED" || len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != 1 {
			t.Fatalf("task: %+v", task)
		}
		var got map[string]any
		if err := json.Unmarshal(task.Artifacts[0].Parts[0].Data, &got); err != nil || got["answer"] != 42.0 {
			t.Errorf("data part: %s", task.Artifacts[0].Parts[0].Data)
		}
	})
	t.Run("NDJSON stream consumed to the end", func(t *testing.T) {
		task := send10(t, base+"/stream", msg10("go", "", ""))
		if task.Status.State != "TASK_STATE_COMPLETED" || task.text() != "chunk one, chunk two" {
			t.Fatalf("task: state %s text %q artifacts %+v", task.Status.State, task.text(), task.Artifacts)
		}
		if len(task.Artifacts) != 1 {
			t.Errorf("chunks must build one artifact, got %d", len(task.Artifacts))
		}
	})
}

// TestNonBlocking: returnImmediately (1.0) and blocking:false (0.3)
// answer at once; the run goes on and GetTask / tasks/get see it finish.
func TestNonBlocking(t *testing.T) {
	slow := slowAgent(t)
	load(t, minimal(), map[string]any{"Agent": slow.URL()})
	url := base + "/a2a"

	var res struct {
		Task wireTask `json:"task"`
	}
	call(t, url, "1.0", "SendMessage", map[string]any{
		"message":       msg10("later", "", ""),
		"configuration": map[string]any{"returnImmediately": true},
	}).ok(t, &res)
	if s := res.Task.Status.State; s != "TASK_STATE_SUBMITTED" && s != "TASK_STATE_WORKING" {
		t.Fatalf("returnImmediately answered state %s", s)
	}
	id10 := res.Task.ID

	var task03 wireTask
	call(t, url, "", "message/send", map[string]any{
		"message":       msg03("later too", ""),
		"configuration": map[string]any{"blocking": false},
	}).ok(t, &task03)
	if s := task03.Status.State; s != "submitted" && s != "working" {
		t.Fatalf("blocking:false answered state %s", s)
	}

	slow.next(t)
	slow.next(t)
	close(slow.release)

	done := waitState(t, url, id10, "TASK_STATE_COMPLETED")
	if done.text() != "finally done" {
		t.Errorf("1.0 task text %q", done.text())
	}
	// The 0.3 task, through tasks/get with historyLength.
	deadline := 0
	for {
		var got wireTask
		call(t, url, "", "tasks/get", map[string]any{"id": task03.ID, "historyLength": 1}).ok(t, &got)
		if got.Status.State == "completed" {
			if got.text() != "finally done" || len(got.History) > 1 {
				t.Errorf("0.3 task: text %q history %d", got.text(), len(got.History))
			}
			break
		}
		if deadline++; deadline > 500 {
			t.Fatalf("0.3 task stuck in %s", got.Status.State)
		}
		waitBriefly()
	}
}

// TestMultiTurn: input-required, then a message carrying the taskId
// continues the task; the agent receives the earlier turns as history.
func TestMultiTurn(t *testing.T) {
	ask := askAgent(t)
	load(t, minimal(), map[string]any{"Agent": ask.URL()})
	url := base + "/a2a"

	for _, v := range []string{"1.0", "0.3"} {
		t.Run(v, func(t *testing.T) {
			var first, second wireTask
			if v == "1.0" {
				first = send10(t, url, msg10("weather?", "", ""))
			} else {
				first = send03(t, url, msg03("weather?", ""))
			}
			wantAsk := map[string]string{"1.0": "TASK_STATE_INPUT_REQUIRED", "0.3": "input-required"}[v]
			if first.Status.State != wantAsk || first.statusText() != "Which city?" {
				t.Fatalf("first turn: state %s status %q", first.Status.State, first.statusText())
			}
			ask.next(t)
			if v == "1.0" {
				// A contextId that is not the task's is refused (-32602)
				// and leaves the task waiting.
				call(t, url, "1.0", "SendMessage", map[string]any{"message": msg10("Rome", first.ID, "not-"+first.ContextID)}).fails(t, -32602)
				second = send10(t, url, msg10("Paris", first.ID, first.ContextID))
			} else {
				second = send03(t, url, msg03("Paris", first.ID))
			}
			wantDone := map[string]string{"1.0": "TASK_STATE_COMPLETED", "0.3": "completed"}[v]
			if second.ID != first.ID || second.Status.State != wantDone || second.text() != "Sunny in Paris" {
				t.Fatalf("second turn: id %s state %s text %q", second.ID, second.Status.State, second.text())
			}
			c := ask.next(t)
			if c.TaskID != first.ID || c.inputText() != "Paris" || len(c.History) != 2 {
				t.Fatalf("agent call: task %s input %q history %d", c.TaskID, c.inputText(), len(c.History))
			}
			// history: the first user message, then the agent's question.
			var h0, h1 struct {
				Role  string           `json:"role"`
				Parts []map[string]any `json:"parts"`
			}
			json.Unmarshal(c.History[0], &h0)
			json.Unmarshal(c.History[1], &h1)
			if h0.Role != "user" || len(h0.Parts) != 1 || h0.Parts[0]["text"] != "weather?" ||
				h1.Role != "agent" || len(h1.Parts) != 1 || h1.Parts[0]["text"] != "Which city?" {
				t.Errorf("history: %s / %s", c.History[0], c.History[1])
			}
		})
	}
}

// TestCancel: CancelTask aborts the upstream call.
func TestCancel(t *testing.T) {
	slow := slowAgent(t)
	load(t, minimal(), map[string]any{"Agent": slow.URL()})
	url := base + "/a2a"

	var res struct {
		Task wireTask `json:"task"`
	}
	call(t, url, "1.0", "SendMessage", map[string]any{
		"message": msg10("long job", "", ""), "configuration": map[string]any{"returnImmediately": true},
	}).ok(t, &res)
	slow.next(t)

	var canceled wireTask
	call(t, url, "1.0", "CancelTask", map[string]any{"id": res.Task.ID}).ok(t, &canceled)
	if canceled.Status.State != "TASK_STATE_CANCELED" {
		t.Fatalf("CancelTask answered %s", canceled.Status.State)
	}
	select {
	case id := <-slow.aborted:
		if id != res.Task.ID {
			t.Errorf("aborted task %s, want %s", id, res.Task.ID)
		}
	case <-timeout():
		t.Fatal("the upstream call was not aborted")
	}
	// Canceled stays canceled; a second cancel is -32002 (0.3 dialect too).
	if got := getTask10(t, url, res.Task.ID); got.Status.State != "TASK_STATE_CANCELED" {
		t.Errorf("after cancel: %s", got.Status.State)
	}
	call(t, url, "", "tasks/cancel", map[string]any{"id": res.Task.ID}).fails(t, -32002)
}

// TestListTasks: owner-scoped (the owner here comes from a header the
// config names), newest first, newest first, cursor paging with
// nextPageToken always present, artifacts only when asked for.
func TestListTasks(t *testing.T) {
	a := textAgent(t)
	load(t, minimal("owner {http.request.header.X-Caller}"), map[string]any{"Agent": a.URL()})
	url := base + "/a2a"
	carol := withHeader("X-Caller", "carol")

	var ids []string
	for _, s := range []string{"one", "two", "three"} {
		ids = append(ids, send10(t, url, msg10(s, "", ""), carol).ID)
		waitBriefly() // distinct status timestamps
	}
	send10(t, url, msg10("not carol's", "", ""), withHeader("X-Caller", "dave"))
	type page struct {
		Tasks         []wireTask `json:"tasks"`
		NextPageToken *string    `json:"nextPageToken"`
		PageSize      int        `json:"pageSize"`
		TotalSize     int        `json:"totalSize"`
	}
	var p1 page
	call(t, url, "1.0", "ListTasks", map[string]any{"pageSize": 2}, carol).ok(t, &p1)
	if len(p1.Tasks) != 2 || p1.Tasks[0].ID != ids[2] || p1.Tasks[1].ID != ids[1] {
		t.Fatalf("page 1: %+v", p1)
	}
	if p1.NextPageToken == nil || *p1.NextPageToken == "" || p1.TotalSize != 3 || p1.PageSize != 2 {
		t.Fatalf("page 1 paging: token %v total %d size %d", p1.NextPageToken, p1.TotalSize, p1.PageSize)
	}
	if len(p1.Tasks[0].Artifacts) != 0 {
		t.Errorf("artifacts listed without includeArtifacts")
	}
	var p2 page
	call(t, url, "1.0", "ListTasks", map[string]any{"pageSize": 2, "pageToken": *p1.NextPageToken, "includeArtifacts": true}, carol).ok(t, &p2)
	if len(p2.Tasks) != 1 || p2.Tasks[0].ID != ids[0] || p2.Tasks[0].text() != "Hello, one" {
		t.Fatalf("page 2: %+v", p2)
	}
	if p2.NextPageToken == nil || *p2.NextPageToken != "" {
		t.Errorf("last page nextPageToken = %v, want present and empty", p2.NextPageToken)
	}
	// An anonymous caller (no owner) lists nothing, not everyone's tasks.
	var anon page
	call(t, url, "1.0", "ListTasks", map[string]any{}).ok(t, &anon)
	if len(anon.Tasks) != 0 || anon.NextPageToken == nil {
		t.Errorf("anonymous list: %+v", anon)
	}
}

// TestRPCErrors: each JSON-RPC error class once, through Caddy, on HTTP
// 200, echoing the id.
func TestRPCErrors(t *testing.T) {
	a := textAgent(t)
	load(t, `
http://:9080 {
	a2a {
		upstream {{.Agent}}`+skillBlock+`
	}
	a2a {
		upstream {{.Agent}}
		rpc_path /textonly
		card_path /textonly/.well-known/agent-card.json
		input_modes text/plain`+skillBlock+`
	}
}
`, map[string]any{"Agent": a.URL()})
	url := base + "/a2a"
	done := send10(t, url, msg10("finish", "", ""))

	t.Run("-32700 parse error has id null", func(t *testing.T) {
		ans := post(t, url, "1.0", `{"jsonrpc":"2.0","id":7,"method":`)
		ans.fails(t, -32700)
		if string(ans.ID) != "null" {
			t.Errorf("id = %s, want null", ans.ID)
		}
	})
	t.Run("-32600 wrong jsonrpc version", func(t *testing.T) {
		ans := post(t, url, "1.0", `{"jsonrpc":"1.0","id":"x","method":"GetTask","params":{"id":"a"}}`)
		ans.fails(t, -32600)
		if string(ans.ID) != `"x"` {
			t.Errorf("id = %s", ans.ID)
		}
	})
	t.Run("-32601 unknown method", func(t *testing.T) {
		call(t, url, "1.0", "DoTheThing", map[string]any{}).fails(t, -32601)
	})
	t.Run("-32602 missing message", func(t *testing.T) {
		call(t, url, "1.0", "SendMessage", map[string]any{}).fails(t, -32602)
	})
	t.Run("-32001 unknown task", func(t *testing.T) {
		call(t, url, "1.0", "GetTask", map[string]any{"id": "no-such-task"}).fails(t, -32001)
		call(t, url, "", "tasks/get", map[string]any{"id": "no-such-task"}).fails(t, -32001)
	})
	t.Run("-32002 cancel a completed task", func(t *testing.T) {
		call(t, url, "1.0", "CancelTask", map[string]any{"id": done.ID}).fails(t, -32002)
	})
	t.Run("-32003 push not supported", func(t *testing.T) {
		call(t, url, "1.0", "CreateTaskPushNotificationConfig", map[string]any{"taskId": done.ID, "url": "https://hook.example/"}).fails(t, -32003)
		call(t, url, "", "tasks/pushNotificationConfig/set", map[string]any{"taskId": done.ID, "pushNotificationConfig": map[string]any{"url": "https://hook.example/"}}).fails(t, -32003)
	})
	t.Run("-32004 message to a terminal task", func(t *testing.T) {
		call(t, url, "1.0", "SendMessage", map[string]any{"message": msg10("again", done.ID, "")}).fails(t, -32004)
	})
	t.Run("-32004 extended card not declared", func(t *testing.T) {
		call(t, url, "1.0", "GetExtendedAgentCard", map[string]any{}).fails(t, -32004)
	})
	t.Run("-32005 a part the agent does not accept", func(t *testing.T) {
		msg := msg10("", "", "")
		msg["parts"] = []any{map[string]any{"data": map[string]any{"x": 1}}}
		call(t, base+"/textonly", "1.0", "SendMessage", map[string]any{"message": msg}).fails(t, -32005)
	})
	t.Run("-32009 unsupported A2A-Version", func(t *testing.T) {
		e := call(t, url, "9.9", "GetTask", map[string]any{"id": done.ID}).fails(t, -32009)
		if !strings.Contains(string(e.Data), "VERSION_NOT_SUPPORTED") {
			t.Errorf("no ErrorInfo reason in data: %s", e.Data)
		}
	})
	t.Run("0.3 errors carry object data, never an array", func(t *testing.T) {
		e := call(t, url, "", "tasks/get", map[string]any{}).fails(t, -32602)
		if len(e.Data) > 0 && e.Data[0] == '[' {
			t.Errorf("0.3 error data is an array: %s", e.Data)
		}
	})
}

// TestEnvelopeRefusals: a notification, a repeated method member and a
// 2 KiB id are -32600 with id null through Caddy; none reaches the agent
// or creates a task.
func TestEnvelopeRefusals(t *testing.T) {
	a := textAgent(t)
	load(t, minimal("owner {http.request.header.X-Caller}"), map[string]any{"Agent": a.URL()})
	url := base + "/a2a"
	erin := withHeader("X-Caller", "erin")
	params := `{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"run me"}]}}`
	hugeID := `"` + strings.Repeat("x", 2046) + `"`

	for _, tc := range []struct {
		name, body, message string
	}{
		{"notification", `{"jsonrpc":"2.0","method":"SendMessage","params":` + params + `}`, "no id"},
		{"duplicate method", `{"jsonrpc":"2.0","id":1,"method":"GetTask","method":"SendMessage","params":` + params + `}`, `more than one "method"`},
		{"2 KiB id", `{"jsonrpc":"2.0","id":` + hugeID + `,"method":"SendMessage","params":` + params + `}`, "max_id_size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ans := post(t, url, "1.0", tc.body, erin)
			e := ans.fails(t, -32600)
			if string(ans.ID) != "null" {
				t.Errorf("id = %.40s, want null", ans.ID)
			}
			if !strings.Contains(e.Message, tc.message) {
				t.Errorf("message %q lacks %q", e.Message, tc.message)
			}
			if tc.name == "2 KiB id" && (!strings.Contains(string(e.Data), `"limit":"max_id_size"`) || !strings.Contains(string(e.Data), `"max":"1024"`)) {
				t.Errorf("ErrorInfo without the limit: %s", e.Data)
			}
		})
	}
	var list struct {
		Tasks []wireTask `json:"tasks"`
	}
	call(t, url, "1.0", "ListTasks", map[string]any{}, erin).ok(t, &list)
	if len(list.Tasks) != 0 || len(a.Calls()) != 0 {
		t.Fatalf("refused requests ran: %d tasks, %d agent calls", len(list.Tasks), len(a.Calls()))
	}
	// The same send with an id runs: the refusals were about the envelope.
	if task := send10(t, url, msg10("run me", "", ""), erin); task.text() != "Hello, run me" {
		t.Fatalf("control send: %+v", task)
	}
}

// TestFailingUpstreams: a 500 or a dead agent fails the task with a
// generic message; the agent's own error text never reaches the caller.
func TestFailingUpstreams(t *testing.T) {
	fail, slow := failAgent(t), slowAgent(t)
	load(t, `
http://:9080 {
	a2a {
		upstream {{.Fail}}
		rpc_path /fail
		card_path /fail.json`+skillBlock+`
	}
	a2a {
		upstream {{.Slow}} {
			timeout 300ms
		}
		rpc_path /slow
		card_path /slow.json`+skillBlock+`
	}
	a2a {
		upstream {{.Dead}} {
			timeout 2s
		}
		rpc_path /dead
		card_path /dead.json`+skillBlock+`
	}
}
`, map[string]any{"Fail": fail.URL(), "Dead": deadURL(t), "Slow": slow.URL()})

	for _, path := range []string{"/fail", "/dead", "/slow"} {
		t.Run(path, func(t *testing.T) {
			ans := call(t, base+path, "1.0", "SendMessage", map[string]any{"message": msg10("hi", "", "")})
			var res struct {
				Task wireTask `json:"task"`
			}
			ans.ok(t, &res)
			if res.Task.Status.State != "TASK_STATE_FAILED" || res.Task.statusText() == "" {
				t.Fatalf("task: state %s message %q", res.Task.Status.State, res.Task.statusText())
			}
			// "500 " (the status line's code and a space): a bare "500"
			// also matches random hex in the task's UUIDs.
			// Nor the log's words for the failure: "the agent at …", "did
			// not finish within `timeout 300ms`".
			for _, leak := range []string{"SECRET", "hunter2", "500 ", "connection refused", "dial tcp", "the agent at", "did not finish"} {
				if strings.Contains(string(ans.Body), leak) {
					t.Errorf("answer leaks %q: %s", leak, ans.Body)
				}
			}
			got := getTask10(t, base+path, res.Task.ID)
			if got.Status.State != "TASK_STATE_FAILED" || got.statusText() != res.Task.statusText() {
				t.Errorf("GetTask after failure: %+v", got.Status)
			}
			if path == "/slow" {
				// The timeout aborted the agent call.
				select {
				case id := <-slow.aborted:
					if id != res.Task.ID {
						t.Errorf("aborted %s, want %s", id, res.Task.ID)
					}
				case <-timeout():
					t.Error("the timed-out call was not aborted")
				}
			}
		})
	}
}

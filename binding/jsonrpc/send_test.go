package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

func TestSendBlocking(t *testing.T) {
	for _, tc := range []struct {
		name  string
		v     string
		body  string
		task  []any // path to the task in the result
		state string
	}{
		{"1.0", "1.0", sendV10("SendMessage", "m-1", "", ""), []any{"result", "task"}, "TASK_STATE_COMPLETED"},
		{"0.3", "", sendV03("message/send", "m-1", "", ""), []any{"result"}, "completed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, scriptAgent(text("Hel"), text("lo"), status(protocol.StateWorking, "thinking"), text("!")))
			resp := h.rpc(req{version: tc.v, owner: "alice", body: tc.body})
			task := at(t, resp, tc.task...)
			if got := str(t, task, "status", "state"); got != tc.state {
				t.Fatalf("state %s, want %s", got, tc.state)
			}
			// The snapshot merges the chunks into one text part.
			if got := str(t, task, "artifacts", 0, "parts", 0, "text"); got != "Hello!" {
				t.Fatalf("artifact text %q", got)
			}
			if has(task, "artifacts", 0, "parts", 1) || has(task, "artifacts", 1) {
				t.Fatalf("want one artifact with one part: %v", at(t, task, "artifacts"))
			}
			// History: the user message with task and context ids filled in.
			id, ctxID := str(t, task, "id"), str(t, task, "contextId")
			if str(t, task, "history", 0, "messageId") != "m-1" ||
				str(t, task, "history", 0, "taskId") != id ||
				str(t, task, "history", 0, "contextId") != ctxID {
				t.Fatalf("history %v", at(t, task, "history"))
			}
			if len(id) != 36 || len(ctxID) != 36 || id == ctxID {
				t.Fatalf("ids %q %q are not distinct uuids", id, ctxID)
			}
		})
	}
}

func TestSendKeepsClientContextID(t *testing.T) {
	h := newHarness(t, scriptAgent(text("x")))
	resp := h.rpc(req{version: "1.0", body: sendV10("SendMessage", "m-1", `,"contextId":"ctx-9"`, "")})
	if got := str(t, resp, "result", "task", "contextId"); got != "ctx-9" {
		t.Fatalf("contextId %q", got)
	}
}

func TestSendNonBlocking(t *testing.T) {
	agent := controlledAgent()
	h := newHarness(t, agent)
	for _, tc := range []struct{ v, body string }{
		{"1.0", sendV10("SendMessage", "m-1", "", `{"returnImmediately":true}`)},
		{"", sendV03("message/send", "m-1", "", `{"blocking":false}`)},
	} {
		resp := h.rpc(req{version: tc.v, owner: "alice", body: tc.body})
		task := at(t, resp, "result")
		if tc.v == "1.0" {
			task = at(t, task, "task")
		}
		st := str(t, task, "status", "state")
		if st != "TASK_STATE_SUBMITTED" && st != "submitted" && st != "TASK_STATE_WORKING" && st != "working" {
			t.Fatalf("non-blocking send answered state %s", st)
		}
		id := str(t, task, "id")
		run := agent.next(t)
		if run.req.TaskID != id || run.req.User != "alice" {
			t.Fatalf("run request %+v", run.req)
		}
		run.send(t, text("done"))
		close(run.steps)
		waitFor(t, "task completed", func() bool {
			r := h.rpc(req{version: "1.0", owner: "alice", body: rpcCall("GetTask", `{"id":"`+id+`"}`)})
			return str(t, r, "result", "status", "state") == "TASK_STATE_COMPLETED"
		})
	}
}

func TestSendMultiTurn(t *testing.T) {
	agent := controlledAgent()
	h := newHarness(t, agent)
	// Turn 1 ends in input-required; the blocking send returns then.
	respc := make(chan map[string]any, 1)
	go func() {
		respc <- h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m-1", "", "")})
	}()
	run := agent.next(t)
	if len(run.req.History) != 0 {
		t.Fatalf("first turn has history %v", run.req.History)
	}
	agentCtx := run.req.ContextID
	run.send(t, status(protocol.StateInputRequired, "Which city?"))
	resp := <-respc
	task := at(t, resp, "result", "task")
	if got := str(t, task, "status", "state"); got != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("state %s", got)
	}
	if got := str(t, task, "status", "message", "parts", 0, "text"); got != "Which city?" {
		t.Fatalf("status message %q", got)
	}
	if got := str(t, task, "status", "message", "role"); got != "ROLE_AGENT" {
		t.Fatalf("status message role %q", got)
	}
	id, ctxID := str(t, task, "id"), str(t, task, "contextId")

	// A message to a task that is input-required continues it with the
	// earlier turns as history; the contextId may be given or inferred.
	go func() {
		respc <- h.rpc(req{version: "1.0", owner: "alice",
			body: sendV10("SendMessage", "m-2", `,"taskId":"`+id+`","contextId":"`+ctxID+`"`, "")})
	}()
	run = agent.next(t)
	// The agent's context id is the owner's own, the same every turn.
	if agentCtx != agentContextID(h.key, "alice", ctxID) || agentCtx == ctxID {
		t.Fatalf("agent context %q for the caller's %q", agentCtx, ctxID)
	}
	if run.req.TaskID != id || run.req.ContextID != agentCtx || run.req.Message.ID != "m-2" {
		t.Fatalf("second run request %+v", run.req)
	}
	if len(run.req.History) != 2 || run.req.History[0].ID != "m-1" ||
		run.req.History[1].Role != protocol.RoleAgent || run.req.History[1].Parts[0].Text != "Which city?" {
		t.Fatalf("second run history %+v", run.req.History)
	}
	// While it runs, another message is refused.
	busy := h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m-x", `,"taskId":"`+id+`"`, "")})
	wantError(t, busy, -32004, 7, true, "UNSUPPORTED_OPERATION")

	run.send(t, text("Sunny in Paris"))
	close(run.steps)
	resp = <-respc
	task = at(t, resp, "result", "task")
	if got := str(t, task, "status", "state"); got != "TASK_STATE_COMPLETED" {
		t.Fatalf("state %s", got)
	}
	var ids []string
	for i := 0; has(task, "history", i); i++ {
		ids = append(ids, str(t, task, "history", i, "role"))
	}
	if strings.Join(ids, ",") != "ROLE_USER,ROLE_AGENT,ROLE_USER" {
		t.Fatalf("history roles %v", ids)
	}
}

func TestSendHistoryLength(t *testing.T) {
	h := newHarness(t, scriptAgent(status(protocol.StateInputRequired, "more?")))
	first := h.rpc(req{version: "1.0", owner: "a", body: sendV10("SendMessage", "m-1", "", "")})
	id := str(t, first, "result", "task", "id")
	// Continue so the task holds user, agent, user, agent.
	h.rpc(req{version: "1.0", owner: "a", body: sendV10("SendMessage", "m-2", `,"taskId":"`+id+`"`, "")})
	get := func(hl string) map[string]any {
		return h.rpc(req{version: "1.0", owner: "a", body: rpcCall("GetTask", `{"id":"`+id+`"`+hl+`}`)})
	}
	if n := len(at(t, get(""), "result", "history").([]any)); n != 4 {
		t.Fatalf("full history has %d messages", n)
	}
	r := get(`,"historyLength":2`)
	if n := len(at(t, r, "result", "history").([]any)); n != 2 {
		t.Fatalf("historyLength 2 gave %d", n)
	}
	if got := str(t, r, "result", "history", 0, "messageId"); got != "m-2" {
		t.Fatalf("historyLength keeps the most recent: first is %s", got)
	}
	if has(get(`,"historyLength":0`), "result", "history") {
		t.Fatalf("historyLength 0 must omit history")
	}
	// And on the send itself.
	r = h.rpc(req{version: "1.0", owner: "a", body: sendV10("SendMessage", "m-3", `,"taskId":"`+id+`"`, `{"historyLength":1}`)})
	if n := len(at(t, r, "result", "task", "history").([]any)); n != 1 {
		t.Fatalf("send historyLength 1 gave %d", n)
	}
}

func TestSendMaxHistory(t *testing.T) {
	h := newHarness(t, scriptAgent(status(protocol.StateInputRequired, "more?")), func(o *handler.Options) { o.MaxHistory = 3 })
	first := h.rpc(req{version: "1.0", body: sendV10("SendMessage", "m-1", "", "")})
	id := str(t, first, "result", "task", "id")
	r := h.rpc(req{version: "1.0", body: sendV10("SendMessage", "m-2", `,"taskId":"`+id+`"`, "")})
	hist := at(t, r, "result", "task", "history").([]any)
	if len(hist) != 3 || str(t, hist, 0, "role") != "ROLE_AGENT" || str(t, hist, 1, "messageId") != "m-2" {
		t.Fatalf("history not trimmed to the 3 newest: %v", hist)
	}
}

func TestSendInputModes(t *testing.T) {
	h := newHarness(t, scriptAgent(text("x")), func(o *handler.Options) { o.InputModes = []string{"text/plain", "image/*"} })
	for _, tc := range []struct {
		name  string
		parts string
		code  int64
	}{
		{"text", `[{"text":"hi"}]`, 0},
		{"image wildcard", `[{"url":"https://e.x/a.png","mediaType":"image/png"}]`, 0},
		{"file without media type", `[{"url":"https://e.x/a"}]`, 0},
		{"text with charset", `[{"text":"hi","mediaType":"text/plain; charset=utf-8"}]`, 0},
		{"data part", `[{"data":{"a":1}}]`, -32005},
		{"pdf", `[{"url":"https://e.x/a.pdf","mediaType":"application/pdf"}]`, -32005},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := rpcCall("SendMessage", `{"message":{"messageId":"m","role":"ROLE_USER","parts":`+tc.parts+`}}`)
			resp := h.rpc(req{version: "1.0", body: body})
			if tc.code == 0 {
				if !has(resp, "result", "task") {
					t.Fatalf("want a task: %v", resp)
				}
				return
			}
			wantError(t, resp, tc.code, 3, true, "CONTENT_TYPE_NOT_SUPPORTED")
		})
	}
}

func TestRunFailures(t *testing.T) {
	for _, tc := range []struct {
		name  string
		agent *fakeAgent
		want  string
	}{
		{"run error", &fakeAgent{runErr: errors.New("dial tcp: connection refused")}, failedText},
		{"stream error", scriptAgent(text("partial"), step{err: errors.New("unexpected EOF from 10.0.0.7")}), failedText},
		{"agent failed without message", scriptAgent(step{ev: upstream.Event{Kind: upstream.EventStatus, State: protocol.StateFailed, Detail: "secret stack trace"}}), failedText},
		{"agent failed with message", scriptAgent(status(protocol.StateFailed, "Quota exceeded")), "Quota exceeded"},
		{"rejected", scriptAgent(status(protocol.StateRejected, "No.")), "No."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.agent)
			resp := h.rpc(req{version: "1.0", body: sendV10("SendMessage", "m", "", "")})
			task := at(t, resp, "result", "task")
			state := str(t, task, "status", "state")
			if state != "TASK_STATE_FAILED" && state != "TASK_STATE_REJECTED" {
				t.Fatalf("state %s", state)
			}
			if got := str(t, task, "status", "message", "parts", 0, "text"); got != tc.want {
				t.Fatalf("status message %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRunArtifactsAndParts(t *testing.T) {
	h := newHarness(t, scriptAgent(
		text("a"),
		step{ev: upstream.Event{Kind: upstream.EventParts, Parts: []protocol.Part{{Kind: protocol.PartData, Data: []byte(`{"k":1}`)}}}},
		text("b"),
		step{ev: upstream.Event{Kind: upstream.EventArtifact, Artifact: &protocol.Artifact{ID: "agent-chosen", Name: "report",
			Parts: []protocol.Part{{Kind: protocol.PartText, Text: "r"}}}}},
	))
	resp := h.rpc(req{version: "1.0", body: sendV10("SendMessage", "m", "", "")})
	arts := at(t, resp, "result", "task", "artifacts").([]any)
	if len(arts) != 2 {
		t.Fatalf("artifacts %v", arts)
	}
	main := arts[0]
	if str(t, main, "parts", 0, "text") != "a" || num(t, main, "parts", 1, "data", "k") != 1 || str(t, main, "parts", 2, "text") != "b" {
		t.Fatalf("main artifact %v", main)
	}
	if str(t, arts[1], "name") != "report" || str(t, arts[1], "artifactId") == "agent-chosen" ||
		str(t, arts[1], "artifactId") == str(t, main, "artifactId") {
		t.Fatalf("separate artifact %v", arts[1])
	}
}

func TestSendBlockingEndsOnDone(t *testing.T) {
	agent := controlledAgent()
	h := newHarness(t, agent)
	respc := make(chan map[string]any, 1)
	go func() { respc <- h.rpc(req{version: "1.0", owner: "a", body: sendV10("SendMessage", "m", "", "")}) }()
	run := agent.next(t)
	h.closeDone()
	resp := <-respc
	if got := str(t, resp, "result", "task", "status", "state"); got != "TASK_STATE_WORKING" {
		t.Fatalf("state %s", got)
	}
	id := str(t, resp, "result", "task", "id")
	close(run.steps)
	waitFor(t, "task completed", func() bool {
		rec, err := h.store.Get(context.Background(), "a", id)
		return err == nil && rec.Task.Status.State == protocol.StateCompleted
	})
}

func TestSendBlockingClientGone(t *testing.T) {
	agent := controlledAgent()
	h := newHarness(t, agent)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		hr, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.srv.URL, strings.NewReader(sendV10("SendMessage", "m", "", "")))
		hr.Header.Set("A2A-Version", "1.0")
		resp, err := h.srv.Client().Do(hr)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	run := agent.next(t)
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("request succeeded after cancel")
	}
	run.send(t, text("still"))
	close(run.steps)
	waitFor(t, "task completed", func() bool {
		rec, err := h.store.Get(context.Background(), "", run.req.TaskID)
		return err == nil && rec.Task.Status.State == protocol.StateCompleted
	})
}

// TestSnapshotMergesTextAroundParts: text chunks merge into one text part
// until a data part comes; text after it starts (or, after a plain text
// part, extends) the next text part, and the snapshot keeps the order.
func TestSnapshotMergesTextAroundParts(t *testing.T) {
	data := step{ev: upstream.Event{Kind: upstream.EventParts, Parts: []protocol.Part{{Kind: protocol.PartData, Data: []byte(`{"n":1}`)}}}}
	plain := step{ev: upstream.Event{Kind: upstream.EventParts, Parts: []protocol.Part{{Kind: protocol.PartText, Text: "C"}}}}
	h := newHarness(t, scriptAgent(text("a"), text("b"), data, text("x"), text("y"), plain, text("D")))
	resp := h.rpc(req{version: "1.0", body: sendV10("SendMessage", "m-1", "", "")})
	task := at(t, resp, "result", "task")
	if str(t, task, "artifacts", 0, "parts", 0, "text") != "ab" ||
		fmt.Sprint(at(t, task, "artifacts", 0, "parts", 1, "data", "n")) != "1" ||
		str(t, task, "artifacts", 0, "parts", 2, "text") != "xy" ||
		str(t, task, "artifacts", 0, "parts", 3, "text") != "CD" ||
		has(task, "artifacts", 0, "parts", 4) {
		t.Fatalf("artifact parts %v", at(t, task, "artifacts", 0, "parts"))
	}
}

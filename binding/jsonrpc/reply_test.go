package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/handler/handlertest"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
	"github.com/caddy-a2a/caddy-a2a/upstream/httpagent"
)

// messageMode configures an endpoint for message replies.
func messageMode(o *handler.Options) { o.Reply = handler.ReplyMessage }

// replyAgent exercises every way output reaches a reply: merged text
// chunks, a progress note (not part of the answer), a data part, text
// after it, a separate artifact.
func replyAgent() *fakeAgent {
	return scriptAgent(
		text("Hel"),
		text("lo"),
		status(protocol.StateWorking, "thinking"),
		step{Event: upstream.Event{Kind: upstream.EventParts, Parts: []protocol.Part{{Kind: protocol.PartData, Data: []byte(`{"k":1}`)}}}},
		text("!"),
		step{Event: upstream.Event{Kind: upstream.EventArtifact, Artifact: &protocol.Artifact{Name: "report",
			Parts: []protocol.Part{{Kind: protocol.PartText, Text: "r"}}}}},
	)
}

// wantReplyParts checks a reply message's parts, text and data alike,
// given as their text or their JSON (data parts, as "{k:1}"-ish strings
// compared through fmt).
func wantReplyParts(t *testing.T, msg any, want ...string) {
	t.Helper()
	parts, ok := at(t, msg, "parts").([]any)
	if !ok || len(parts) != len(want) {
		t.Fatalf("parts %v, want %d", at(t, msg, "parts"), len(want))
	}
	for i, w := range want {
		p := parts[i].(map[string]any)
		var got string
		if d, isData := p["data"]; isData {
			got = fmt.Sprint(d)
		} else {
			got = str(t, p, "text")
		}
		if got != w {
			t.Fatalf("part %d = %q, want %q (parts %v)", i, got, w, parts)
		}
	}
}

// wantAgentMessage checks the members every reply has in either version:
// role agent, a new messageId, the given contextId (or a new uuid when
// ""), no taskId.
func wantAgentMessage(t *testing.T, msg any, v10 bool, contextID string) {
	t.Helper()
	role, kind := "agent", true
	if v10 {
		role, kind = "ROLE_AGENT", false
	}
	if got := str(t, msg, "role"); got != role {
		t.Fatalf("role %q, want %q", got, role)
	}
	if has(msg, "kind") != kind || (kind && str(t, msg, "kind") != "message") {
		t.Fatalf("kind member wrong for the version: %v", msg)
	}
	if id := str(t, msg, "messageId"); len(id) != 36 || id == "m-1" {
		t.Fatalf("messageId %q is not a new uuid", id)
	}
	got := str(t, msg, "contextId")
	if contextID != "" && got != contextID {
		t.Fatalf("contextId %q, want %q", got, contextID)
	}
	if contextID == "" && len(got) != 36 {
		t.Fatalf("contextId %q is not a new uuid", got)
	}
	if has(msg, "taskId") {
		t.Fatalf("reply carries a taskId: %v", msg)
	}
}

// noTasks asserts that message mode stored nothing, through the store and
// through ListTasks as the caller.
func noTasks(t *testing.T, h *harness) {
	t.Helper()
	if n := h.store.Len(); n != 0 {
		t.Fatalf("message mode stored %d tasks", n)
	}
	resp := h.rpc(req{version: "1.0", owner: "alice", body: rpcCall("ListTasks", `{}`)})
	if tasks := at(t, resp, "result", "tasks").([]any); len(tasks) != 0 {
		t.Fatalf("ListTasks lists %v", tasks)
	}
}

func TestReplySend(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    string
		body string
		msg  []any // path to the message in the answer
		ctx  string
	}{
		{"1.0 blocking", "1.0", sendV10("SendMessage", "m-1", "", ""), []any{"result", "message"}, ""},
		{"1.0 returnImmediately", "1.0", sendV10("SendMessage", "m-1", "", `{"returnImmediately":true}`), []any{"result", "message"}, ""},
		{"1.0 contextId kept", "1.0", sendV10("SendMessage", "m-1", `,"contextId":"ctx-9"`, ""), []any{"result", "message"}, "ctx-9"},
		{"0.3 blocking", "", sendV03("message/send", "m-1", "", ""), []any{"result"}, ""},
		{"0.3 blocking false", "", sendV03("message/send", "m-1", "", `{"blocking":false}`), []any{"result"}, ""},
		{"0.3 contextId kept", "", sendV03("message/send", "m-1", `,"contextId":"ctx-3"`, ""), []any{"result"}, "ctx-3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agent := replyAgent()
			var got *upstream.RunRequest
			script := agent.Script
			agent.Script = func(r *upstream.RunRequest) []step { got = r; return script(r) }
			h := newHarness(t, agent, messageMode)
			resp := h.rpc(req{version: tc.v, owner: "alice", body: tc.body})
			if tc.v == "1.0" && has(resp, "result", "task") {
				t.Fatalf("1.0 answer has a task: %v", resp)
			}
			msg := at(t, resp, tc.msg...)
			wantAgentMessage(t, msg, tc.v == "1.0", tc.ctx)
			wantReplyParts(t, msg, "Hello", "map[k:1]", "!", "r")
			// The agent was asked without a task: no task id, no history,
			// the reply's context.
			// The agent is told the owner's own id for the reply's context.
			if got.TaskID != "" || len(got.History) != 0 || got.ContextID != handlertest.AgentContextID(h.key, "alice", str(t, msg, "contextId")) || got.User != "alice" ||
				got.Message.ID != "m-1" {
				t.Fatalf("agent request %+v", got)
			}
			noTasks(t, h)
		})
	}
}

func TestReplyStream(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    string
		body string
		msg  []any
	}{
		{"1.0", "1.0", sendV10("SendStreamingMessage", "m-1", "", ""), []any{"result", "message"}},
		{"0.3", "", sendV03("message/stream", "m-1", "", ""), []any{"result"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, replyAgent(), messageMode)
			s := h.openStream(t, req{version: tc.v, owner: "alice", body: tc.body})
			fs, ms := s.rest(t)
			if len(fs) != 1 {
				t.Fatalf("want exactly one frame, got %d: %v", len(fs), fs)
			}
			if fs[0].id != "" {
				t.Fatalf("reply frame has SSE id %q", fs[0].id)
			}
			if kind := kindOf(t, ms[0]); kind != "message" {
				t.Fatalf("frame kind %q", kind)
			}
			if !sameID(ms[0]["id"], idOf(tc.body)) {
				t.Fatalf("frame id member %v", ms[0]["id"])
			}
			msg := at(t, ms[0], tc.msg...)
			wantAgentMessage(t, msg, tc.v == "1.0", "")
			wantReplyParts(t, msg, "Hello", "map[k:1]", "!", "r")
			noTasks(t, h)
		})
	}
}

func TestReplyEndings(t *testing.T) {
	for _, tc := range []struct {
		name  string
		agent *fakeAgent
		want  []string
	}{
		{"input-required after output", scriptAgent(text("partial "), status(protocol.StateInputRequired, "Which city?")),
			[]string{"partial ", "Which city?"}},
		{"auth-required", scriptAgent(status(protocol.StateAuthRequired, "Sign in first")), []string{"Sign in first"}},
		{"rejected", scriptAgent(status(protocol.StateRejected, "No.")), []string{"No."}},
		{"completed with a message", scriptAgent(text("x"), status(protocol.StateCompleted, "done")), []string{"x", "done"}},
		{"stops at the final status", scriptAgent(text("a"), status(protocol.StateCompleted, ""), text("ignored")), []string{"a"}},
		{"says nothing", scriptAgent(), []string{""}},
		{"empty chunks only", scriptAgent(text(""), text("")), []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.agent, messageMode)
			resp := h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m-1", "", "")})
			wantReplyParts(t, at(t, resp, "result", "message"), tc.want...)
			noTasks(t, h)
		})
	}
}

// TestReplyFailures: every way an agent fails is -32603 with an error id,
// blocking and streaming in both versions; the agent's words are only in
// the log line carrying that id.
func TestReplyFailures(t *testing.T) {
	leak := errors.New("upstream: POST http://10.0.0.9/agent: " + marker)
	huge := strings.Repeat("x", handler.DefaultMaxTaskOutput/2+1)
	many := make([]step, handler.DefaultMaxRunEvents+1)
	for i := range many {
		many[i] = text("x")
	}
	for _, tc := range []struct {
		name  string
		agent func() *fakeAgent
		cause string // what the log line's error must hold
	}{
		{"run error", func() *fakeAgent { return &fakeAgent{RunErr: leak} }, marker},
		{"stream error", func() *fakeAgent { return scriptAgent(text("partial"), step{Err: leak}) }, marker},
		{"failed with detail", func() *fakeAgent {
			return scriptAgent(step{Event: upstream.Event{Kind: upstream.EventStatus, State: protocol.StateFailed, Detail: marker}})
		}, marker},
		{"failed with a message", func() *fakeAgent { return scriptAgent(text("so far"), status(protocol.StateFailed, marker)) }, marker},
		{"too many bytes", func() *fakeAgent { return scriptAgent(text(huge), text(huge)) }, "agent reply over a run limit (max_task_output 16777216)"},
		{"too many events", func() *fakeAgent { return scriptAgent(many...) }, "agent reply over a run limit (max_run_events 10000)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.DebugLevel)
			h := newHarness(t, tc.agent(), messageMode, func(o *handler.Options) { o.Logger = zap.New(core) })
			for _, r := range []req{
				{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m", "", "")},
				{owner: "alice", body: sendV03("message/send", "m", "", "")},
			} {
				checkReplyError(t, rawAnswer(t, h, r), logs, tc.cause)
				wantError(t, h.rpc(r), -32603, idOf(r.body), r.version == "1.0", "")
			}
			for _, r := range []req{
				{version: "1.0", owner: "alice", body: sendV10("SendStreamingMessage", "m", "", "")},
				{owner: "alice", body: sendV03("message/stream", "m", "", "")},
			} {
				checkReplyError(t, rawAnswer(t, h, r), logs, tc.cause)
				// The reply's stream opened before the agent failed.
				wantError(t, h.sseError(r), -32603, idOf(r.body), r.version == "1.0", "")
			}
			noTasks(t, h)
		})
	}
}

// checkReplyError checks one raw answer: a generic -32603 whose error id
// is in exactly one log line, which holds the cause; no agent text.
func checkReplyError(t *testing.T, raw string, logs *observer.ObservedLogs, cause string) {
	t.Helper()
	if strings.Contains(raw, marker) || strings.Contains(raw, "10.0.0.9") || strings.Contains(raw, "so far") {
		t.Fatalf("agent text reached the caller:\n%s", raw)
	}
	m := errorIDRE.FindStringSubmatch(raw)
	if m == nil || !strings.Contains(raw, `"code":-32603`) {
		t.Fatalf("want -32603 with an error id:\n%s", raw)
	}
	id := m[1] + m[2]
	found := logs.FilterField(zap.String("error_id", id)).All()
	if len(found) != 1 || !strings.Contains(fmt.Sprint(found[0].ContextMap()["error"]), cause) {
		t.Fatalf("error id %s: log entries %v", id, found)
	}
}

func TestReplyRefusals(t *testing.T) {
	h := newHarness(t, scriptAgent(text("x")), messageMode)
	for _, tc := range []struct {
		name   string
		r      req
		stream bool
		code   int64
		v10    bool
		reason string
	}{
		{"taskId 1.0", req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m", `,"taskId":"t-1"`, "")}, false, -32001, true, "TASK_NOT_FOUND"},
		{"taskId 0.3", req{owner: "alice", body: sendV03("message/send", "m", `,"taskId":"t-1"`, "")}, false, -32001, false, ""},
		{"taskId streaming 1.0", req{version: "1.0", owner: "alice", body: sendV10("SendStreamingMessage", "m", `,"taskId":"t-1"`, "")}, true, -32001, true, "TASK_NOT_FOUND"},
		{"taskId streaming 0.3", req{owner: "alice", body: sendV03("message/stream", "m", `,"taskId":"t-1"`, "")}, true, -32001, false, ""},
		{"push config", req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m", "", `{"taskPushNotificationConfig":{"url":"https://e.x/hook"}}`)}, false, -32003, true, "PUSH_NOTIFICATION_NOT_SUPPORTED"},
		{"agent role", req{version: "1.0", owner: "alice", body: strings.Replace(sendV10("SendMessage", "m", "", ""), "ROLE_USER", "ROLE_AGENT", 1)}, false, -32602, true, ""},
		{"GetTask", req{version: "1.0", owner: "alice", body: rpcCall("GetTask", `{"id":"t-1"}`)}, false, -32001, true, "TASK_NOT_FOUND"},
		{"CancelTask", req{version: "1.0", owner: "alice", body: rpcCall("CancelTask", `{"id":"t-1"}`)}, false, -32001, true, "TASK_NOT_FOUND"},
		{"subscribe", req{version: "1.0", owner: "alice", body: rpcCall("SubscribeToTask", `{"id":"t-1"}`)}, true, -32001, true, "TASK_NOT_FOUND"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var resp map[string]any
			if tc.stream {
				resp = h.streamError(tc.r)
			} else {
				resp = h.rpc(tc.r)
			}
			wantError(t, resp, tc.code, idOf(tc.r.body), tc.v10, tc.reason)
		})
	}
	noTasks(t, h)
}

// TestReplyClientGoneAbortsAgent: a reply runs within its request; a
// client that leaves aborts the agent call, blocking or streaming, and
// nothing goes on in the background (goleak in TestMain checks the rest).
func TestReplyClientGoneAbortsAgent(t *testing.T) {
	for _, tc := range []struct{ name, v, body string }{
		{"blocking", "1.0", sendV10("SendMessage", "m", "", "")},
		{"streaming", "1.0", sendV10("SendStreamingMessage", "m", "", "")},
		{"streaming 0.3", "", sendV03("message/stream", "m", "", "")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agent := controlledAgent()
			h := newHarness(t, agent, messageMode)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errc := make(chan error, 1)
			go func() {
				hr, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.srv.URL, strings.NewReader(tc.body))
				hr.Header.Set("A2A-Version", tc.v)
				resp, err := h.srv.Client().Do(hr)
				if err == nil {
					// Streaming: the headers came at once; wait on the body.
					_, err = resp.Body.Read(make([]byte, 1))
					resp.Body.Close()
				}
				errc <- err
			}()
			run := agent.Next(t)
			// If the call is not aborted, end it so the test fails instead
			// of hanging in the server's Close.
			t.Cleanup(func() {
				if run.Ctx.Err() == nil {
					close(run.Steps)
				}
			})
			run.Send(t, text("partial"))
			cancel()
			select {
			case <-run.Ctx.Done():
			case <-time.After(waitTimeout):
				t.Fatal("the agent call outlived its request")
			}
			if err := <-errc; err == nil {
				t.Fatal("the request got an answer after it was canceled")
			}
			if !runnerIdle(h.runner) {
				t.Fatal("a message reply went to the runner")
			}
			noTasks(t, h)
		})
	}
}

// TestReplyStreamHeartbeat: the stream opens before the agent answers and
// carries heartbeats while it works; then the one message frame.
func TestReplyStreamHeartbeat(t *testing.T) {
	agent := controlledAgent()
	h := newHarness(t, agent, messageMode, func(o *handler.Options) { o.Heartbeat = 20 * time.Millisecond })
	s := h.openStream(t, req{version: "1.0", owner: "alice", body: sendV10("SendStreamingMessage", "m", "", "")})
	run := agent.Next(t)
	for range 2 {
		f, err := s.next()
		if err != nil || f.comment == "" || f.data != "" {
			t.Fatalf("want a heartbeat comment, got %+v %v", f, err)
		}
	}
	run.Send(t, text("late answer"))
	close(run.Steps)
	fs, ms := s.rest(t)
	if len(fs) != 1 || kindOf(t, ms[0]) != "message" {
		t.Fatalf("frames %v", fs)
	}
	wantReplyParts(t, at(t, ms[0], "result", "message"), "late answer")
}

// TestReplyOutlivesDone: a config unload does not cut a reply in flight
// (it finishes like a proxied request would).
func TestReplyOutlivesDone(t *testing.T) {
	agent := controlledAgent()
	h := newHarness(t, agent, messageMode)
	respc := make(chan map[string]any, 1)
	go func() { respc <- h.rpc(req{version: "1.0", owner: "a", body: sendV10("SendMessage", "m", "", "")}) }()
	run := agent.Next(t)
	h.closeDone()
	run.Send(t, text("after unload"))
	close(run.Steps)
	wantReplyParts(t, at(t, <-respc, "result", "message"), "after unload")
}

func TestReplyOptionChecked(t *testing.T) {
	h := newHarness(t, scriptAgent())
	o := h.opts
	o.Reply = handler.ReplyAuto + 1
	if _, err := handler.New(o); err == nil {
		t.Fatal("handler.New accepted an unknown reply mode")
	}
}

func TestGoldenReply(t *testing.T) {
	for _, tc := range []struct{ file, v, body string }{
		{"reply_v10.json", "1.0", sendV10("SendMessage", "m-1", "", "")},
		{"reply_v03.json", "", sendV03("message/send", "m-1", "", "")},
		{"reply_stream_v10.sse", "1.0", sendV10("SendStreamingMessage", "m-1", "", "")},
		{"reply_stream_v03.sse", "", sendV03("message/stream", "m-1", "", "")},
	} {
		t.Run(tc.file, func(t *testing.T) {
			h := newHarness(t, goldenAgent(), messageMode)
			resp := h.post(t.Context(), req{version: tc.v, body: tc.body})
			defer resp.Body.Close()
			body := string(readAll(t, resp))
			if strings.HasSuffix(tc.file, ".json") {
				body += "\n"
			}
			golden(t, tc.file, body)
		})
	}
}

// TestReplyUpstreamMisbehaviour: through the real httpagent.Agent, an
// agent that refuses, hangs past the timeout, answers 500 or breaks its
// stream after a chunk gives a message reply of -32603 with no agent text,
// blocking and streaming; no goroutine outlives the case.
func TestReplyUpstreamMisbehaviour(t *testing.T) {
	for _, tc := range []struct {
		name  string
		serve func(w http.ResponseWriter, r *http.Request) // nil: nothing listens
	}{
		{name: "refuses connections"},
		{name: "hangs past the timeout", serve: func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }},
		{name: "answers 500", serve: func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "boom-secret", http.StatusInternalServerError)
		}},
		{name: "breaks its stream after a chunk", serve: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-ndjson")
			io.WriteString(w, `{"text":"boom-secret first"}`+"\n"+`{"text":"sec`)
			http.NewResponseController(w).Flush()
			panic(http.ErrAbortHandler)
		}},
		{name: "sends an error event", serve: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-ndjson")
			io.WriteString(w, `{"text":"first"}`+"\n"+`{"error":"boom-secret"}`+"\n")
		}},
	} {
		ignore := goleak.IgnoreCurrent()
		t.Run(tc.name, func(t *testing.T) {
			cfg := httpagent.Config{HTTPConfig: upstream.HTTPConfig{Timeout: 250 * time.Millisecond}}
			agentEndpoint(t, &cfg, tc.serve)
			agent, err := httpagent.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, agent, messageMode)
			for _, r := range []req{
				{version: "1.0", body: sendV10("SendMessage", "m", "", "")},
				{body: sendV03("message/send", "m", "", "")},
			} {
				// Not exchange: its short deadline is too close to the
				// agent timeout on a loaded machine.
				raw := rawAnswer(t, h, r)
				noLeak(t, raw)
				wantError(t, decode(t, []byte(raw)), -32603, idOf(r.body), r.version == "1.0", "")
			}
			for _, r := range []req{
				{version: "1.0", body: sendV10("SendStreamingMessage", "m", "", "")},
				{body: sendV03("message/stream", "m", "", "")},
			} {
				m := h.sseError(r) // the reply's stream opened first
				noLeak(t, fmt.Sprint(m))
				wantError(t, m, -32603, idOf(r.body), r.version == "1.0", "")
			}
			noTasks(t, h)
		})
		goleak.VerifyNone(t, ignore)
	}
}

// A message reply is bounded by the same limits as a task's run, as
// configured, and is one of its owner's runs.
func TestReplyBoundedByRunLimits(t *testing.T) {
	agent := scriptAgent(text(strings.Repeat("x", 600)), text(strings.Repeat("y", 600)))
	h := newHarness(t, agent, messageMode, func(o *handler.Options) { o.MaxTaskOutput = 1000 })
	wantError(t, h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m", "", "")}), -32603, 7, true, "")
	h = newHarness(t, agent, messageMode, func(o *handler.Options) { o.MaxRunEvents = 1 })
	wantError(t, h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m", "", "")}), -32603, 7, true, "")
	h = newHarness(t, agent, messageMode, func(o *handler.Options) { o.MaxTaskOutput = 1200 })
	if got := str(t, h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m", "", "")}), "result", "message", "parts", 0, "text"); len(got) != 1200 {
		t.Fatalf("reply within the limit: %d bytes", len(got))
	}

	// A reply holds one of the owner's run slots while the agent works.
	ctl := controlledAgent()
	h = newHarness(t, ctl, messageMode, func(o *handler.Options) { o.MaxRunsPerOwner = 1 })
	first := make(chan map[string]any, 1)
	go func() {
		first <- h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m-1", "", "")})
	}()
	run := ctl.Next(t)
	resp := h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m-2", "", "")})
	wantError(t, resp, protocol.CodeResourceExhausted, 7, true, "RESOURCE_EXHAUSTED")
	run.Send(t, text("done"))
	close(run.Steps)
	if got := <-first; !has(got, "result", "message") {
		t.Fatalf("first reply: %v", got)
	}
	// The slot is back once the reply is done.
	go func() {
		first <- h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m-3", "", "")})
	}()
	close(ctl.Next(t).Steps)
	if got := <-first; !has(got, "result", "message") {
		t.Fatalf("after the reply: %v", got)
	}
}

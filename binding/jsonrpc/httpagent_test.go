package jsonrpc

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/handler/handlertest"
	"github.com/caddy-a2a/caddy-a2a/upstream"
	"github.com/caddy-a2a/caddy-a2a/upstream/httpagent"
)

// agentCall is one request the HTTP test agent received.
type agentCall struct {
	body map[string]any
	done <-chan struct{} // closed when the handler's request context ends
}

// httpAgentHarness runs the endpoint against the real httpagent.Agent
// calling serve, an in-process HTTP agent.
func httpAgentHarness(t *testing.T, serve func(w http.ResponseWriter, r *http.Request, call int)) (*harness, <-chan agentCall) {
	t.Helper()
	calls := make(chan agentCall, 16)
	var mu sync.Mutex
	n := 0
	agentSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &body); err != nil {
			t.Errorf("agent got bad JSON %q", b)
		}
		calls <- agentCall{body: body, done: r.Context().Done()}
		mu.Lock()
		n++
		i := n
		mu.Unlock()
		serve(w, r, i)
	}))
	t.Cleanup(agentSrv.Close)
	agent, err := httpagent.New(httpagent.Config{URL: agentSrv.URL, HTTPConfig: upstream.HTTPConfig{Client: agentSrv.Client()}})
	if err != nil {
		t.Fatal(err)
	}
	return newHarness(t, agent), calls
}

func nextCall(t *testing.T, calls <-chan agentCall) agentCall {
	t.Helper()
	select {
	case c := <-calls:
		return c
	case <-time.After(waitTimeout):
		t.Fatal("agent not called")
		return agentCall{}
	}
}

func TestHTTPAgentPlainMultiTurn(t *testing.T) {
	h, calls := httpAgentHarness(t, func(w http.ResponseWriter, r *http.Request, call int) {
		w.Header().Set("Content-Type", "text/plain")
		if call == 1 {
			w.Header().Set(httpagent.HeaderTaskState, "input-required")
			io.WriteString(w, "Which city?")
			return
		}
		io.WriteString(w, "Sunny.")
	})
	resp := h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m-1", "", "")})
	task := at(t, resp, "result", "task")
	if str(t, task, "status", "state") != "TASK_STATE_INPUT_REQUIRED" || str(t, task, "status", "message", "parts", 0, "text") != "Which city?" {
		t.Fatalf("turn 1: %v", task)
	}
	c := nextCall(t, calls)
	id, ctxID := str(t, task, "id"), str(t, task, "contextId")
	// The agent is told the owner's own context id, not the caller's.
	if agentCtx := handlertest.AgentContextID(h.key, "alice", ctxID); str(t, c.body, "contextId") != agentCtx || agentCtx == ctxID {
		t.Fatalf("agent context %q, want %q (not the caller's %q)", str(t, c.body, "contextId"), agentCtx, ctxID)
	}
	if str(t, c.body, "taskId") != id || str(t, c.body, "input") != "hello" ||
		str(t, c.body, "user") != "alice" || str(t, c.body, "message", "messageId") != "m-1" {
		t.Fatalf("agent request 1: %v", c.body)
	}
	if hist, _ := c.body["history"].([]any); len(hist) != 0 {
		t.Fatalf("turn 1 history %v", hist)
	}

	resp = h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m-2", `,"taskId":"`+id+`"`, "")})
	task = at(t, resp, "result", "task")
	if str(t, task, "status", "state") != "TASK_STATE_COMPLETED" || str(t, task, "artifacts", 0, "parts", 0, "text") != "Sunny." {
		t.Fatalf("turn 2: %v", task)
	}
	c = nextCall(t, calls)
	hist := at(t, c.body, "history").([]any)
	if len(hist) != 2 || str(t, hist, 0, "role") != "user" || str(t, hist, 1, "role") != "agent" ||
		str(t, hist, 1, "parts", 0, "text") != "Which city?" {
		t.Fatalf("turn 2 history %v", hist)
	}
}

func TestHTTPAgentStreamsWithoutBuffering(t *testing.T) {
	sawChunk1 := make(chan struct{})
	h, _ := httpAgentHarness(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		rc := http.NewResponseController(w)
		io.WriteString(w, `{"text":"chunk 1"}`+"\n")
		rc.Flush()
		select {
		case <-sawChunk1:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, `{"text":"chunk 2"}`+"\n"+`{"status":"completed"}`+"\n")
	})
	s := h.openStream(t, req{version: "1.0", body: sendV10("SendStreamingMessage", mid(), "", "")})
	s.event(t) // task
	s.event(t) // working
	_, m := s.event(t)
	if str(t, m, "result", "artifactUpdate", "artifact", "parts", 0, "text") != "chunk 1" {
		t.Fatalf("frame %v", m)
	}
	close(sawChunk1)
	_, ms := s.rest(t)
	if len(ms) != 3 || str(t, ms[0], "result", "artifactUpdate", "artifact", "parts", 0, "text") != "chunk 2" ||
		at(t, ms[1], "result", "artifactUpdate", "lastChunk") != true ||
		str(t, ms[2], "result", "statusUpdate", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Fatalf("rest %v", ms)
	}
}

func TestHTTPAgentCancelAbortsRequest(t *testing.T) {
	h, calls := httpAgentHarness(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		io.WriteString(w, `{"status":"working","message":"on it"}`+"\n")
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
	})
	resp := h.rpc(req{version: "1.0", body: sendV10("SendMessage", mid(), "", `{"returnImmediately":true}`)})
	id := str(t, resp, "result", "task", "id")
	c := nextCall(t, calls)
	resp = h.rpc(req{version: "1.0", body: rpcCall("CancelTask", `{"id":"`+id+`"}`)})
	if str(t, resp, "result", "status", "state") != "TASK_STATE_CANCELED" {
		t.Fatalf("cancel %v", resp)
	}
	select {
	case <-c.done:
	case <-time.After(waitTimeout):
		t.Fatal("the upstream request was not aborted")
	}
	waitFor(t, "run to end", func() bool { return runnerIdle(h.runner) })
	resp = h.rpc(req{version: "1.0", body: rpcCall("GetTask", `{"id":"`+id+`"}`)})
	if str(t, resp, "result", "status", "state") != "TASK_STATE_CANCELED" {
		t.Fatalf("after cancel %v", resp)
	}
}

func TestHTTPAgentErrorsStayInTheLog(t *testing.T) {
	for _, tc := range []struct {
		name  string
		serve func(w http.ResponseWriter)
	}{
		{"500", func(w http.ResponseWriter) { http.Error(w, "db password is hunter2", http.StatusInternalServerError) }},
		{"error event", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/x-ndjson")
			io.WriteString(w, `{"text":"part"}`+"\n"+`{"error":"db password is hunter2"}`+"\n")
		}},
		{"broken stream", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/x-ndjson")
			io.WriteString(w, `{"text":"part"}`+"\n"+`{"text": hunter2`+"\n")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := httpAgentHarness(t, func(w http.ResponseWriter, _ *http.Request, _ int) { tc.serve(w) })
			ctxResp := h.post(t.Context(), req{version: "1.0", body: sendV10("SendMessage", mid(), "", "")})
			defer ctxResp.Body.Close()
			raw := string(readAll(t, ctxResp))
			if strings.Contains(raw, "hunter2") {
				t.Fatalf("agent error text reached the caller: %s", raw)
			}
			m := decode(t, []byte(raw))
			if str(t, m, "result", "task", "status", "state") != "TASK_STATE_FAILED" ||
				str(t, m, "result", "task", "status", "message", "parts", 0, "text") != failedText {
				t.Fatalf("answer %s", raw)
			}
		})
	}
}

// TestHTTPAgentPlainAnswerIsOneArtifactUpdate: a plain (non-streaming)
// agent answer is the whole artifact, so a streaming client gets exactly one
// artifact update, marked lastChunk and not append, and no empty closer.
func TestHTTPAgentPlainAnswerIsOneArtifactUpdate(t *testing.T) {
	h, _ := httpAgentHarness(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "all at once")
	})
	for _, v := range []struct{ version, body, result, artifact string }{
		{"1.0", sendV10("SendStreamingMessage", mid(), "", ""), "artifactUpdate", ""},
		{"", sendV03("message/stream", mid(), "", ""), "", "artifact-update"},
	} {
		s := h.openStream(t, req{version: v.version, body: v.body})
		_, ms := s.rest(t)
		var updates []map[string]any
		for _, m := range ms {
			res := at(t, m, "result").(map[string]any)
			if v.result != "" {
				if u, ok := res[v.result].(map[string]any); ok {
					updates = append(updates, u)
				}
			} else if res["kind"] == v.artifact {
				updates = append(updates, res)
			}
		}
		if len(updates) != 1 {
			t.Fatalf("%q: %d artifact updates, want 1: %v", v.version, len(updates), ms)
		}
		u := updates[0]
		if u["lastChunk"] != true || u["append"] == true || str(t, u, "artifact", "parts", 0, "text") != "all at once" {
			t.Fatalf("%q: artifact update %v", v.version, u)
		}
	}
}

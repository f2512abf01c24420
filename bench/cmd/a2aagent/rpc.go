package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// JSON-RPC and A2A 1.0 error codes the agent answers.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeNoMethod       = -32601
	codeInvalidParams  = -32602
	codeVersion        = -32009
)

// The task states the agent reports.
const (
	stateSubmitted = "TASK_STATE_SUBMITTED"
	stateCompleted = "TASK_STATE_COMPLETED"
)

// maxRequestBytes bounds a request body: the benchmark's are a few hundred
// bytes.
const maxRequestBytes = 1 << 20

// request is the part of a JSON-RPC send the agent reads.
type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Message *struct {
			MessageID string `json:"messageId"`
			ContextID string `json:"contextId"`
			TaskID    string `json:"taskId"`
			Role      string `json:"role"`
			Parts     []struct {
				Text *string `json:"text"`
			} `json:"parts"`
		} `json:"message"`
	} `json:"params"`
}

// turn names one send's task.
type turn struct {
	taskID, contextID, artifactID string
}

// plan is what one agent answers a send: n chunks of its artifact, pause
// apart when streamed, each the echoed text, or the time it is written.
type plan struct {
	n      int
	pause  time.Duration
	stamps bool
	echo   string
}

// text is the next chunk's text.
func (p *plan) text() string {
	if p.stamps {
		return strconv.FormatInt(time.Now().UnixNano(), 10)
	}
	return p.echo
}

// planFunc decides the plan of a send whose message holds text; false: the
// path names no agent.
type planFunc func(r *http.Request, text string) (plan, bool)

func echoPlan(_ *http.Request, text string) (plan, bool) {
	return plan{n: 1, echo: text}, true
}

func chunksPlan(r *http.Request, _ string) (plan, bool) {
	n, err := strconv.Atoi(r.PathValue("n"))
	pause, err2 := time.ParseDuration(r.PathValue("pause"))
	if err != nil || err2 != nil || n <= 0 || pause < 0 {
		return plan{}, false
	}
	return plan{n: n, pause: pause, stamps: true}, true
}

// seq numbers the agent's tasks.
var seq atomic.Uint64

// serveRPC answers SendMessage and SendStreamingMessage per the plan.
func serveRPC(plans planFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes))
		if err != nil {
			return
		}
		var req request
		if err := json.Unmarshal(body, &req); err != nil {
			writeJSON(w, appendError(nil, []byte("null"), codeParse, "Parse error"))
			return
		}
		id := []byte(req.ID)
		if len(id) == 0 || (id[0] != '"' && (id[0] < '0' || id[0] > '9') && id[0] != '-') {
			writeJSON(w, appendError(nil, []byte("null"), codeInvalidRequest, "Invalid Request: id must be a string or a number"))
			return
		}
		if req.JSONRPC != "2.0" {
			writeJSON(w, appendError(nil, id, codeInvalidRequest, `Invalid Request: jsonrpc must be "2.0"`))
			return
		}
		if v := r.Header.Get("A2A-Version"); v != "1.0" {
			writeJSON(w, appendError(nil, id, codeVersion, "Version not supported: "+strconv.Quote(v)+", this agent speaks 1.0"))
			return
		}
		stream := false
		switch req.Method {
		case "SendMessage":
		case "SendStreamingMessage":
			stream = true
		default:
			writeJSON(w, appendError(nil, id, codeNoMethod, "Method not found: "+req.Method))
			return
		}
		m := req.Params.Message
		switch {
		case m == nil:
			writeJSON(w, appendError(nil, id, codeInvalidParams, "Invalid params: message is required"))
			return
		case m.MessageID == "" || m.Role != "ROLE_USER" || len(m.Parts) == 0:
			writeJSON(w, appendError(nil, id, codeInvalidParams, "Invalid params: message needs messageId, role ROLE_USER and parts"))
			return
		}
		var text strings.Builder
		for _, p := range m.Parts {
			if p.Text == nil {
				writeJSON(w, appendError(nil, id, codeInvalidParams, "Invalid params: this agent takes text parts only"))
				return
			}
			text.WriteString(*p.Text)
		}
		p, ok := plans(r, text.String())
		if !ok {
			http.NotFound(w, r)
			return
		}
		n := strconv.FormatUint(seq.Add(1), 10)
		t := turn{taskID: m.TaskID, contextID: m.ContextID, artifactID: "artifact-" + n}
		if t.taskID == "" {
			t.taskID = "task-" + n
		}
		if t.contextID == "" {
			t.contextID = "context-" + n
		}
		if stream {
			streamTurn(w, r, id, &t, &p)
			return
		}
		texts := make([]string, p.n)
		for i := range texts {
			texts[i] = p.text()
		}
		b := appendHead(make([]byte, 0, 512), id)
		b = appendTask(b, &t, stateCompleted, texts)
		writeJSON(w, append(b, '}'))
	}
}

// writeJSON answers b as the whole JSON body.
func writeJSON(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

// streamTurn answers the plan as SSE frames: the submitted Task, the
// chunks, the completed status. Paced chunks are flushed one by one, each
// stamped just before its write; the rest is left to the buffer.
func streamTurn(w http.ResponseWriter, r *http.Request, id []byte, t *turn, p *plan) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	paced := p.pause > 0
	var b []byte
	frame := func(result func([]byte) []byte) bool {
		b = append(b[:0], "data: "...)
		b = appendHead(b, id)
		b = result(b)
		b = append(b, "}\n\n"...)
		if _, err := w.Write(b); err != nil {
			return false
		}
		return !paced || rc.Flush() == nil
	}
	if !frame(func(b []byte) []byte { return appendTask(b, t, stateSubmitted, nil) }) {
		return
	}
	for i := range p.n {
		if i > 0 && paced {
			select {
			case <-time.After(p.pause):
			case <-r.Context().Done():
				return
			}
		}
		last := i == p.n-1
		if !frame(func(b []byte) []byte { return appendArtifactUpdate(b, t, p.text(), i > 0, last) }) {
			return
		}
	}
	frame(func(b []byte) []byte { return appendStatusUpdate(b, t, stateCompleted) })
}

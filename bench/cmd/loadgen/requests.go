package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Kind is what a target speaks, which decides the request the generator
// sends and how it checks the answer.
type Kind string

// The kinds of target.
const (
	// KindCeiling is the upstream behind Caddy's reverse_proxy: the agent
	// contract's request in, the input text back as text/plain.
	KindCeiling Kind = "ceiling"
	// KindV10 is an A2A 1.0 JSON-RPC SendMessage (A2A-Version: 1.0).
	KindV10 Kind = "v1.0"
	// KindV03 is an A2A 0.3 JSON-RPC message/send (no version header).
	KindV03 Kind = "v0.3"
	// KindREST is an A2A 1.0 HTTP+JSON POST <url>/message:send, the same
	// message as KindV10's without the envelope; the answer is
	// {"task":…}.
	KindREST Kind = "rest"
	// KindGRPC is an A2A 1.0 gRPC SendMessage over h2c (grpc_load.go); the
	// url is http://host:port.
	KindGRPC Kind = "grpc"
)

func parseKind(s string) (Kind, error) {
	switch k := Kind(s); k {
	case KindCeiling, KindV10, KindV03, KindREST, KindGRPC:
		return k, nil
	}
	return "", fmt.Errorf("unknown kind %q (ceiling, v1.0, v0.3, rest, grpc)", s)
}

// requestBuilder appends complete HTTP requests for one target.
type requestBuilder struct {
	kind Kind
	head []byte // request line and fixed headers, up to Content-Length
	// run is runID, the run's own part of every messageId.
	run []byte
}

// runID is this process's own part of every messageId it sends: the
// module answers a send under a messageId it has seen from the first
// send's task (exactly-once sends), so a later run against the same
// server must not repeat an earlier run's ids, or it would measure
// retries.
var runID = strconv.FormatInt(time.Now().UnixNano(), 36)

func newRequestBuilder(kind Kind, rawURL string) (*requestBuilder, string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, "", err
	}
	if u.Scheme != "http" {
		return nil, "", fmt.Errorf("%s: only http:// targets", rawURL)
	}
	path := u.RequestURI()
	if kind == KindREST {
		path = strings.TrimSuffix(u.EscapedPath(), "/") + "/message:send"
	}
	var h []byte
	h = fmt.Appendf(h, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n", path, u.Host)
	if kind == KindV10 || kind == KindREST {
		h = append(h, "A2A-Version: 1.0\r\n"...)
	}
	h = append(h, "Content-Length: "...)
	return &requestBuilder{kind: kind, head: h, run: []byte(runID)}, u.Host, nil
}

// text is the unique message text of request seq on worker w: the echo a
// correct answer must carry.
func appendText(b []byte, w, seq int) []byte {
	b = append(b, "hi "...)
	b = strconv.AppendInt(b, int64(w), 10)
	b = append(b, '-')
	return strconv.AppendInt(b, int64(seq), 10)
}

// build appends the request for (w, seq) to dst, using body as scratch.
func (rb *requestBuilder) build(dst, body []byte, w, seq int) ([]byte, []byte) {
	body = body[:0]
	// id appends the messageId's tail after "m-": the run, worker and
	// sequence.
	id := func(b []byte) []byte { return appendID(append(append(b, rb.run...), '-'), w, seq) }
	switch rb.kind {
	case KindCeiling:
		// What the module would send the agent, so the upstream does the
		// same work behind both.
		body = append(body, `{"taskId":"t-`...)
		body = appendID(body, w, seq)
		body = append(body, `","contextId":"c-`...)
		body = appendID(body, w, seq)
		body = append(body, `","input":"`...)
		body = appendText(body, w, seq)
		body = append(body, `","message":{"messageId":"m-`...)
		body = id(body)
		body = append(body, `","role":"user","parts":[{"text":"`...)
		body = appendText(body, w, seq)
		body = append(body, `"}]},"history":[]}`...)
	case KindV10:
		body = append(body, `{"jsonrpc":"2.0","id":`...)
		body = strconv.AppendInt(body, int64(seq), 10)
		body = append(body, `,"method":"SendMessage","params":{"message":{"messageId":"m-`...)
		body = id(body)
		body = append(body, `","role":"ROLE_USER","parts":[{"text":"`...)
		body = appendText(body, w, seq)
		body = append(body, `"}]}}}`...)
	case KindREST:
		body = append(body, `{"message":{"messageId":"m-`...)
		body = id(body)
		body = append(body, `","role":"ROLE_USER","parts":[{"text":"`...)
		body = appendText(body, w, seq)
		body = append(body, `"}]}}`...)
	case KindV03:
		body = append(body, `{"jsonrpc":"2.0","id":`...)
		body = strconv.AppendInt(body, int64(seq), 10)
		body = append(body, `,"method":"message/send","params":{"message":{"kind":"message","messageId":"m-`...)
		body = id(body)
		body = append(body, `","role":"user","parts":[{"kind":"text","text":"`...)
		body = appendText(body, w, seq)
		body = append(body, `"}]}}}`...)
	}
	dst = append(dst[:0], rb.head...)
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	dst = append(dst, "\r\n\r\n"...)
	return append(dst, body...), body
}

func appendID(b []byte, w, seq int) []byte {
	b = strconv.AppendInt(b, int64(w), 10)
	b = append(b, '-')
	return strconv.AppendInt(b, int64(seq), 10)
}

// rpcAnswer is the part of a JSON-RPC answer the checks read. Both wire
// versions fit: 1.0 wraps the task in result.task, 0.3 makes result the
// task with kind "task".
type rpcAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Result *struct {
		answerTask
		Task *answerTask `json:"task"`
	} `json:"result"`
}

type answerTask struct {
	Kind   string `json:"kind"`
	ID     string `json:"id"`
	Status struct {
		State string `json:"state"`
	} `json:"status"`
	Artifacts []struct {
		Parts []struct {
			Kind string `json:"kind"`
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"artifacts"`
}

// check validates one answer: HTTP 200, and for the A2A kinds a JSON-RPC
// result with the request's id holding a completed task whose artifacts
// carry exactly the text that was sent.
func check(kind Kind, resp response, w, seq int, scratch []byte) error {
	if resp.Status != 200 {
		return fmt.Errorf("HTTP %d: %.200s", resp.Status, resp.Body)
	}
	want := appendText(scratch[:0], w, seq)
	if kind == KindCeiling {
		if !bytes.Equal(resp.Body, want) {
			return fmt.Errorf("body %.200q, want %q", resp.Body, want)
		}
		return nil
	}
	var a rpcAnswer
	if kind == KindREST {
		// No envelope: the body is what result holds over JSON-RPC.
		var r struct {
			Task *answerTask `json:"task"`
		}
		if err := json.Unmarshal(resp.Body, &r); err != nil {
			return fmt.Errorf("answer is not JSON (%v): %.200s", err, resp.Body)
		}
		return checkTask(kind, r.Task, "TASK_STATE_COMPLETED", resp.Body, want)
	}
	if err := json.Unmarshal(resp.Body, &a); err != nil {
		return fmt.Errorf("answer is not JSON (%v): %.200s", err, resp.Body)
	}
	if a.JSONRPC != "2.0" || string(a.ID) != strconv.Itoa(seq) {
		return fmt.Errorf("envelope jsonrpc=%q id=%s, want 2.0 and %d", a.JSONRPC, a.ID, seq)
	}
	if a.Error != nil {
		return fmt.Errorf("JSON-RPC error %d %s", a.Error.Code, a.Error.Message)
	}
	if a.Result == nil {
		return errors.New("no result")
	}
	t, state := a.Result.Task, "TASK_STATE_COMPLETED"
	if kind == KindV03 {
		t, state = &a.Result.answerTask, "completed"
		if t.Kind != "task" {
			return fmt.Errorf("result kind %q, want task", t.Kind)
		}
	}
	return checkTask(kind, t, state, resp.Body, want)
}

// checkTask checks the task of an answer (body): in state, its artifacts
// carrying exactly want.
func checkTask(kind Kind, t *answerTask, state string, body, want []byte) error {
	if t == nil || t.ID == "" {
		return fmt.Errorf("result holds no task: %.200s", body)
	}
	if t.Status.State != state {
		return fmt.Errorf("task state %q, want %s", t.Status.State, state)
	}
	var got []byte
	for _, art := range t.Artifacts {
		for _, p := range art.Parts {
			if kind == KindV03 && p.Kind != "text" {
				return fmt.Errorf("part kind %q, want text", p.Kind)
			}
			got = append(got, p.Text...)
		}
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("artifact text %q, want %q", got, want)
	}
	return nil
}

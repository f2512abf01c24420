package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rpcAnswer is what one raw JSON-RPC call got back.
type rpcAnswer struct {
	Status      int
	ContentType string
	// Code is error.code, 0 when the answer was a result.
	Code    int
	Message string
	Result  json.RawMessage
	// Frames counts the SSE data frames of a streamed answer.
	Frames int
}

// outcome is the answer in one word for tables: "ok" or the error code.
func (a rpcAnswer) outcome() string {
	if a.Code != 0 {
		return fmt.Sprint(a.Code)
	}
	return "ok"
}

// taskID is the task id of a send or task result, in either dialect (1.0
// wraps a send's task as {"task":{…}}, 0.3 answers the task itself).
func (a rpcAnswer) taskID() string {
	var r struct {
		ID   string `json:"id"`
		Task *struct {
			ID string `json:"id"`
		} `json:"task"`
	}
	_ = json.Unmarshal(a.Result, &r)
	if r.Task != nil {
		return r.Task.ID
	}
	return r.ID
}

// state is the result task's state, in the 0.3 spelling.
func (a rpcAnswer) state() string {
	var r struct {
		Status *struct {
			State string `json:"state"`
		} `json:"status"`
		Task *struct {
			Status struct {
				State string `json:"state"`
			} `json:"status"`
		} `json:"task"`
	}
	_ = json.Unmarshal(a.Result, &r)
	if r.Task != nil {
		return normState(r.Task.Status.State)
	}
	if r.Status != nil {
		return normState(r.Status.State)
	}
	return ""
}

// rawRPC posts one JSON-RPC request as a hand-written client would, with
// A2A-Version set to version unless it is "". A streamed answer is read to
// its end (or 5s) and its first frame decoded.
func rawRPC(t *testing.T, url, version, method string, params any) rpcAnswer {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	streaming := map[string]bool{"SendStreamingMessage": true, "SubscribeToTask": true, "message/stream": true, "tasks/resubscribe": true}[method]
	if streaming {
		req.Header.Set("Accept", "text/event-stream")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	a := rpcAnswer{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type")}
	var first []byte
	if strings.HasPrefix(a.ContentType, "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				a.Frames++
				if first == nil {
					first = []byte(strings.TrimSpace(data))
				}
			}
		}
	} else {
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(resp.Body)
		first = buf.Bytes()
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(first, &env); err != nil {
		t.Fatalf("%s %s: answer %d %q is not JSON-RPC: %v", method, url, a.Status, first, err)
	}
	a.Result = env.Result
	if env.Error != nil {
		a.Code, a.Message = env.Error.Code, env.Error.Message
	}
	return a
}

// rawDialect writes the requests of one protocol version by hand.
type rawDialect struct {
	version string // A2A-Version header sent ("" for the 0.3 way of none)
	ops     map[string]string
	message func(text, taskID string) map[string]any
}

var (
	raw10 = rawDialect{version: "1.0", ops: ops10, message: func(text, taskID string) map[string]any {
		m := map[string]any{"messageId": fmt.Sprintf("m-%d", time.Now().UnixNano()), "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
		if taskID != "" {
			m["taskId"] = taskID
		}
		return m
	}}
	raw03 = rawDialect{version: "", ops: ops03, message: func(text, taskID string) map[string]any {
		m := map[string]any{"kind": "message", "messageId": fmt.Sprintf("m-%d", time.Now().UnixNano()), "role": "user", "parts": []any{map[string]any{"kind": "text", "text": text}}}
		if taskID != "" {
			m["taskId"] = taskID
		}
		return m
	}}
)

func (d rawDialect) send(t *testing.T, url, text, taskID string) rpcAnswer {
	t.Helper()
	return rawRPC(t, url, d.version, d.ops["send"], map[string]any{"message": d.message(text, taskID)})
}

func (d rawDialect) onTask(t *testing.T, url, op, id string) rpcAnswer {
	t.Helper()
	return rawRPC(t, url, d.version, d.ops[op], map[string]any{"id": id})
}

package replicas

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var ids atomic.Int64

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// call sends one 1.0 JSON-RPC request as caller and decodes its result.
func call(t *testing.T, url, caller, method string, params any, result any) *rpcError {
	t.Helper()
	p, _ := json.Marshal(params)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, ids.Add(1), method, p)
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("X-Caller", caller)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatalf("%s: %v: %s", method, err, raw)
	}
	if env.Error == nil && result != nil {
		if err := json.Unmarshal(env.Result, result); err != nil {
			t.Fatalf("%s result: %v: %s", method, err, env.Result)
		}
	}
	return env.Error
}

type task struct {
	ID        string `json:"id"`
	ContextID string `json:"contextId"`
	Status    struct {
		State string `json:"state"`
	} `json:"status"`
	Artifacts []struct {
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"artifacts"`
}

func (tk *task) text() string {
	var b strings.Builder
	for _, a := range tk.Artifacts {
		for _, p := range a.Parts {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func message(text, taskID string) map[string]any {
	m := map[string]any{"messageId": fmt.Sprintf("m-%d", ids.Add(1)), "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	if taskID != "" {
		m["taskId"] = taskID
	}
	return m
}

// send sends a SendMessage (blocking unless nonBlocking) and returns its task.
func send(t *testing.T, url, caller string, msg map[string]any, nonBlocking bool) task {
	t.Helper()
	params := map[string]any{"message": msg}
	if nonBlocking {
		params["configuration"] = map[string]any{"returnImmediately": true}
	}
	var res struct {
		Task task `json:"task"`
	}
	if e := call(t, url, caller, "SendMessage", params, &res); e != nil {
		t.Fatalf("SendMessage: %+v", e)
	}
	return res.Task
}

func getTask(t *testing.T, url, caller, id string) (task, *rpcError) {
	t.Helper()
	var tk task
	e := call(t, url, caller, "GetTask", map[string]any{"id": id}, &tk)
	return tk, e
}

// waitState polls GetTask on url until the task is in state.
func waitState(t *testing.T, url, caller, id, state string) task {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tk, e := getTask(t, url, caller, id)
		if e == nil && tk.Status.State == state {
			return tk
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s: %+v %+v, want %s", id, tk, e, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// frame is one SSE frame: its id and data.
type frame struct{ id, data string }

// stream opens a streaming call and returns its frames as they come.
func stream(t *testing.T, url, caller, method string, params any, lastEventID string) (<-chan frame, func()) {
	t.Helper()
	p, _ := json.Marshal(params)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, ids.Add(1), method, p)
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-Caller", caller)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("%s: not a stream: %s", method, raw)
	}
	out := make(chan frame, 64)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		var f frame
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if f.data != "" {
					out <- f
				}
				f = frame{}
			case strings.HasPrefix(line, "id: "):
				f.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				f.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	closeFn := func() { resp.Body.Close() }
	t.Cleanup(closeFn)
	return out, closeFn
}

// describe is a frame as kind:detail ("task:…", "status:…", "artifact:text").
func describe(t *testing.T, f frame) string {
	t.Helper()
	var env struct {
		Result struct {
			Task           *task                                    `json:"task"`
			StatusUpdate   *struct{ Status struct{ State string } } `json:"statusUpdate"`
			ArtifactUpdate *struct {
				Artifact struct {
					Parts []struct{ Text string } `json:"parts"`
				} `json:"artifact"`
			} `json:"artifactUpdate"`
		} `json:"result"`
		Error *rpcError `json:"error"`
	}
	if err := json.Unmarshal([]byte(f.data), &env); err != nil {
		t.Fatalf("frame %q: %v", f.data, err)
	}
	r := env.Result
	switch {
	case env.Error != nil:
		return fmt.Sprintf("error:%d", env.Error.Code)
	case r.Task != nil:
		return "task:" + r.Task.Status.State
	case r.StatusUpdate != nil:
		return "status:" + r.StatusUpdate.Status.State
	case r.ArtifactUpdate != nil:
		var b strings.Builder
		for _, p := range r.ArtifactUpdate.Artifact.Parts {
			b.WriteString(p.Text)
		}
		return "artifact:" + b.String()
	}
	return "unknown:" + f.data
}

func nextFrame(t *testing.T, frames <-chan frame) (frame, bool) {
	t.Helper()
	select {
	case f, ok := <-frames:
		return f, ok
	case <-time.After(10 * time.Second):
		t.Fatal("no frame within 10s")
		return frame{}, false
	}
}

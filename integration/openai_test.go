package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
)

// modelServer is an OpenAI-compatible chat completions server: it keeps
// each request's messages and answers by the last user message, streaming
// in the API's wire format: "deny" → 401, "long" → cut at the length
// limit, "tool" → "Let me look." then a tool call (finish_reason
// tool_calls), "hold" → one delta then waits until the request goes away,
// anything else → "Hel", "lo" and stop.
type modelServer struct {
	srv *httptest.Server
	mu  sync.Mutex
	// requests are the decoded bodies, auth the Authorization headers.
	requests []map[string]any
	auth     []string
	// held is signalled when a "hold" request has its first delta, gone
	// when that request went away.
	held, gone chan struct{}
}

func newModelServer(t *testing.T) *modelServer {
	m := &modelServer{held: make(chan struct{}, 4), gone: make(chan struct{}, 4)}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

// base is the API base URL the upstream is configured with.
func (m *modelServer) base() string { return m.srv.URL + "/v1" }

func (m *modelServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	m.mu.Lock()
	m.requests = append(m.requests, body)
	m.auth = append(m.auth, r.Header.Get("Authorization"))
	m.mu.Unlock()
	msgs, _ := body["messages"].([]any)
	last, _ := msgs[len(msgs)-1].(map[string]any)
	input, _ := last["content"].(string)
	if input == "deny" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided: sk-int-key","type":"invalid_request_error","code":"invalid_api_key"}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(content, finish string) {
		fr := "null"
		if finish != "" {
			fr = `"` + finish + `"`
		}
		fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"tiny\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":%s}]}\n\n", content, fr)
		w.(http.Flusher).Flush()
	}
	switch input {
	case "hold":
		chunk("wait", "")
		m.held <- struct{}{}
		<-r.Context().Done()
		m.gone <- struct{}{}
		return
	case "long":
		chunk("cut", "")
		chunk("", "length")
	case "tool":
		chunk("Let me look.", "")
		fmt.Fprint(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"tiny\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"search\",\"arguments\":\"{}\"}}]},\"finish_reason\":null}]}\n\n")
		chunk("", "tool_calls")
	default:
		chunk("Hel", "")
		chunk("lo", "")
		chunk("", "stop")
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// messages is request i's messages as role:content lines.
func (m *modelServer) messages(t *testing.T, i int) []string {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if i >= len(m.requests) {
		t.Fatalf("the model server got %d requests, want request %d", len(m.requests), i+1)
	}
	var out []string
	for _, raw := range m.requests[i]["messages"].([]any) {
		mm := raw.(map[string]any)
		c, _ := json.Marshal(mm["content"])
		if s, ok := mm["content"].(string); ok {
			c = []byte(s)
		}
		out = append(out, mm["role"].(string)+":"+string(c))
	}
	return out
}

const openAIMount = `http://:9080 {
	a2a {
		upstream openai {{.Base}} {
			model tiny
			api_key sk-int-key
			system "Be brief."
			history 4
		}
		owner {http.request.header.X-Caller}` + skillBlock + `
	}
}
`

// TestOpenAIUpstream: a blocking send becomes one streamed chat request
// (model, key, stream: true, the system prompt first) and a completed
// task holding the answer; the next task of the context is sent the
// conversation so far, and another caller's context is not.
func TestOpenAIUpstream(t *testing.T) {
	m := newModelServer(t)
	load(t, openAIMount, map[string]any{"Base": m.base()})
	alice, bob := withHeader("X-Caller", "alice"), withHeader("X-Caller", "bob")

	first := send10(t, base+"/a2a", msg10("Hi, I am Ada.", "", ""), alice)
	if first.Status.State != "TASK_STATE_COMPLETED" || first.text() != "Hello" {
		t.Fatalf("first task %s %q", first.Status.State, first.text())
	}
	if got := strings.Join(m.messages(t, 0), "|"); got != "system:Be brief.|user:Hi, I am Ada." {
		t.Errorf("first request messages %s", got)
	}
	m.mu.Lock()
	req, auth := m.requests[0], m.auth[0]
	m.mu.Unlock()
	if req["model"] != "tiny" || req["stream"] != true || auth != "Bearer sk-int-key" {
		t.Errorf("request model %v stream %v auth %q", req["model"], req["stream"], auth)
	}

	second := send10(t, base+"/a2a", msg10("What is my name?", "", first.ContextID), alice)
	if second.ID == first.ID || second.ContextID != first.ContextID || second.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("second task %s in %s: %s", second.ID, second.ContextID, second.Status.State)
	}
	if got := strings.Join(m.messages(t, 1), "|"); got != "system:Be brief.|user:Hi, I am Ada.|assistant:Hello|user:What is my name?" {
		t.Errorf("second request messages %s", got)
	}
	// history 4: the newest four earlier messages only.
	third := send10(t, base+"/a2a", msg10("And now?", "", first.ContextID), alice)
	if got := strings.Join(m.messages(t, 2), "|"); got != "system:Be brief.|user:Hi, I am Ada.|assistant:Hello|user:What is my name?|assistant:Hello|user:And now?" {
		t.Errorf("third request messages %s", got)
	}
	send10(t, base+"/a2a", msg10("Last", "", third.ContextID), alice)
	if got := strings.Join(m.messages(t, 3), "|"); got != "system:Be brief.|user:What is my name?|assistant:Hello|user:And now?|assistant:Hello|user:Last" {
		t.Errorf("fourth request messages (history 4) %s", got)
	}
	// Bob sends the same contextId: a context of his own, with nothing
	// of Alice's in it.
	send10(t, base+"/a2a", msg10("Who was here?", "", first.ContextID), bob)
	if got := strings.Join(m.messages(t, 4), "|"); got != "system:Be brief.|user:Who was here?" {
		t.Errorf("another caller's request messages %s", got)
	}

	// The card says what the model takes.
	_, card := get(t, "GET", base+"/.well-known/agent-card.json")
	var c struct {
		DefaultInputModes  []string `json:"defaultInputModes"`
		DefaultOutputModes []string `json:"defaultOutputModes"`
	}
	if err := json.Unmarshal(card, &c); err != nil || strings.Join(c.DefaultInputModes, " ") != "text/plain application/json image/*" ||
		strings.Join(c.DefaultOutputModes, " ") != "text/plain" {
		t.Errorf("card defaultInputModes %v defaultOutputModes %v (%v)", c.DefaultInputModes, c.DefaultOutputModes, err)
	}
}

// TestOpenAIStream: each delta is relayed as an artifact chunk as it
// comes, then the completed status.
func TestOpenAIStream(t *testing.T) {
	m := newModelServer(t)
	load(t, openAIMount, map[string]any{"Base": m.base()})
	s := openStream(t, base+"/a2a", "1.0", "SendStreamingMessage", map[string]any{"message": msg10("hello", "", "")}, withHeader("X-Caller", "alice"))
	seen, _ := readUntil(t, s, "status:TASK_STATE_COMPLETED")
	if got := strings.Join(seen, "|"); got != "task:TASK_STATE_SUBMITTED|status:TASK_STATE_WORKING|artifact:Hel|artifact:lo|artifact:|status:TASK_STATE_COMPLETED" {
		t.Errorf("frames %s", got)
	}
	s.ended(t)
}

// TestOpenAIToolCall: a model that ends its turn calling a tool completes
// the task with the text before the call and a status message saying so,
// blocking and streaming (the call itself is not relayed).
func TestOpenAIToolCall(t *testing.T) {
	m := newModelServer(t)
	load(t, openAIMount, map[string]any{"Base": m.base()})
	alice := withHeader("X-Caller", "alice")
	const why = "The answer was cut off where the model asked to call a tool, which this agent does not run (finish_reason tool_calls)."
	task := send10(t, base+"/a2a", msg10("tool", "", ""), alice)
	if task.Status.State != "TASK_STATE_COMPLETED" || task.text() != "Let me look." || task.statusText() != why {
		t.Errorf("blocking: %s %q %q", task.Status.State, task.text(), task.statusText())
	}
	s := openStream(t, base+"/a2a", "1.0", "SendStreamingMessage", map[string]any{"message": msg10("tool", "", "")}, alice)
	seen, last := readUntil(t, s, "status:TASK_STATE_COMPLETED")
	if got := strings.Join(seen, "|"); got != "task:TASK_STATE_SUBMITTED|status:TASK_STATE_WORKING|artifact:Let me look.|artifact:|status:TASK_STATE_COMPLETED" ||
		!strings.Contains(string(last.Data), why) || strings.Contains(string(last.Data), "search") {
		t.Errorf("streaming: %s, last frame %s", got, last.Data)
	}
	s.ended(t)
}

// TestOpenAIContentAndFailures: an image goes to the model as an image
// part; a PDF is refused with -32005 before any request; a cut-off answer
// completes with a status message saying so; the server's 401 fails the
// task with the generic message (its body, with the key, stays in the
// log); cancelling a running task aborts the model request.
func TestOpenAIContentAndFailures(t *testing.T) {
	m := newModelServer(t)
	load(t, openAIMount, map[string]any{"Base": m.base()})
	alice := withHeader("X-Caller", "alice")

	img := map[string]any{"messageId": "img-1", "role": "ROLE_USER", "parts": []any{
		map[string]any{"text": "What is this?"},
		map[string]any{"raw": "iVBORw==", "mediaType": "image/png", "filename": "x.png"},
	}}
	if task := send10(t, base+"/a2a", img, alice); task.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("image task %s", task.Status.State)
	}
	if got := strings.Join(m.messages(t, 0), "|"); got != `system:Be brief.|user:[{"text":"What is this?","type":"text"},{"image_url":{"url":"data:image/png;base64,iVBORw=="},"type":"image_url"}]` {
		t.Errorf("image request %s", got)
	}

	pdf := map[string]any{"messageId": "pdf-1", "role": "ROLE_USER", "parts": []any{
		map[string]any{"url": "https://files.example/a.pdf", "mediaType": "application/pdf"}}}
	call(t, base+"/a2a", "1.0", "SendMessage", map[string]any{"message": pdf}, alice).fails(t, -32005)
	m.mu.Lock()
	n := len(m.requests)
	m.mu.Unlock()
	if n != 1 {
		t.Errorf("%d model requests after the refused PDF, want 1", n)
	}

	long := send10(t, base+"/a2a", msg10("long", "", ""), alice)
	if long.Status.State != "TASK_STATE_COMPLETED" || long.text() != "cut" || !strings.Contains(long.statusText(), "length limit") {
		t.Errorf("cut-off task %s %q %q", long.Status.State, long.text(), long.statusText())
	}

	denied := send10(t, base+"/a2a", msg10("deny", "", ""), alice)
	if denied.Status.State != "TASK_STATE_FAILED" || strings.Contains(denied.statusText(), "sk-int-key") || strings.Contains(denied.statusText(), "401") {
		t.Errorf("denied task %s %q", denied.Status.State, denied.statusText())
	}

	var res struct {
		Task wireTask `json:"task"`
	}
	call(t, base+"/a2a", "1.0", "SendMessage", map[string]any{"message": msg10("hold", "", ""),
		"configuration": map[string]any{"returnImmediately": true}}, alice).ok(t, &res)
	// Cancel once the model is answering: a cancel before the request is
	// sent aborts it before the server sees it.
	select {
	case <-m.held:
	case <-timeout():
		t.Fatal("the model server never got the request")
	}
	call(t, base+"/a2a", "1.0", "CancelTask", map[string]any{"id": res.Task.ID}, alice).ok(t, nil)
	select {
	case <-m.gone:
	case <-timeout():
		t.Fatal("the model request was not aborted by the cancel")
	}
}

// TestOpenAIRealServer runs against a real OpenAI-compatible server when
// one is named (opt-in; nothing is downloaded): A2A_OPENAI_TEST_URL (the
// API base, e.g. http://127.0.0.1:11434/v1 for Ollama) and
// A2A_OPENAI_TEST_MODEL, with A2A_OPENAI_TEST_KEY if it wants one.
func TestOpenAIRealServer(t *testing.T) {
	url, model := os.Getenv("A2A_OPENAI_TEST_URL"), os.Getenv("A2A_OPENAI_TEST_MODEL")
	if url == "" || model == "" {
		t.Skip("set A2A_OPENAI_TEST_URL and A2A_OPENAI_TEST_MODEL to run against a real model server")
	}
	key := ""
	if k := os.Getenv("A2A_OPENAI_TEST_KEY"); k != "" {
		key = "api_key {env.A2A_OPENAI_TEST_KEY}"
	}
	load(t, `http://:9080 {
	a2a {
		upstream openai {{.URL}} {
			model {{.Model}}
			{{.Key}}
			max_tokens 32
			timeout 2m
		}`+skillBlock+`
	}
}
`, map[string]any{"URL": url, "Model": model, "Key": key})
	task := send10(t, base+"/a2a", msg10("Reply with the single word: ok", "", ""))
	if task.Status.State != "TASK_STATE_COMPLETED" || strings.TrimSpace(task.text()) == "" {
		t.Fatalf("task %s %q %q", task.Status.State, task.text(), task.statusText())
	}
	s := openStream(t, base+"/a2a", "1.0", "SendStreamingMessage", map[string]any{"message": msg10("Count from 1 to 5.", "", "")})
	seen, _ := readUntil(t, s, "status:TASK_STATE_COMPLETED")
	chunks := 0
	for _, d := range seen {
		if strings.HasPrefix(d, "artifact:") && d != "artifact:" {
			chunks++
		}
	}
	if chunks == 0 {
		t.Errorf("no artifact chunk streamed: %q", seen)
	}
}

package interop

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	a2a03 "github.com/a2aproject/a2a-go/a2a"
	a2aclient03 "github.com/a2aproject/a2a-go/a2aclient"
	agentcard03 "github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2a"
)

// openaiPort serves a mount whose upstream is an OpenAI-compatible chat
// completions server (chatModel), loaded by the tests that use it.
const openaiPort = 9191

var openaiURL = fmt.Sprintf("http://127.0.0.1:%d", openaiPort)

// chatModel is an OpenAI-compatible chat completions server: it answers
// every request with the deltas "Hel", "lo, " and the number of user
// messages it was sent, in the API's streaming wire format, and keeps
// each request's messages.
type chatModel struct {
	mu    sync.Mutex
	calls [][]map[string]any
}

func (m *chatModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model    string           `json:"model"`
		Stream   bool             `json:"stream"`
		Messages []map[string]any `json:"messages"`
	}
	if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&body) != nil || body.Model != "tiny" || !body.Stream {
		http.Error(w, "not a streamed chat completion for model tiny", http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.calls = append(m.calls, body.Messages)
	m.mu.Unlock()
	users := 0
	for _, msg := range body.Messages {
		if msg["role"] == "user" {
			users++
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, d := range []string{"Hel", "lo, ", fmt.Sprint(users)} {
		fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"tiny\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", d)
		w.(http.Flusher).Flush()
	}
	fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"tiny\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
}

// loadOpenAI starts the model server and loads TestMain's sites plus the
// openai mount in front of it; TestMain's config comes back when t ends.
func loadOpenAI(t *testing.T) *chatModel {
	t.Helper()
	m := &chatModel{}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	text := baseCaddyfile + fmt.Sprintf(`http://127.0.0.1:%d {
	bind 127.0.0.1
	a2a {
		upstream openai %s/v1 {
			model tiny
			system "Be brief."
		}
		store memory {
			share site-%d
		}
		name "Model agent"
		description "A chat model behind Caddy"
		skill chat {
			name "Chat"
			description "Answers"
			tags general
		}
	}
}
`, openaiPort, srv.URL, openaiPort)
	if err := loadCaddyfile(text); err != nil {
		t.Fatalf("loading the openai mount: %v", err)
	}
	restoreBase(t)
	if err := waitReady(openaiURL + "/.well-known/agent-card.json"); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestOpenAIA2AGo streams from the model through the module with a2a-go
// v2 (1.0) and v0.3: the deltas arrive as chunks of one artifact, the
// task completes, and a follow-up in the same context is sent the
// conversation so far (the model's answer counts the user turns).
func TestOpenAIA2AGo(t *testing.T) {
	m := loadOpenAI(t)
	ctx := testCtx(t)

	c := connectV10(t, ctx, newWire(t), openaiURL)
	var evs []event
	for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: userText("Hi")}) {
		if err != nil {
			t.Fatalf("SendStreamingMessage after %v: %v", evs, err)
		}
		evs = append(evs, v2Event(ev))
	}
	checkStream(t, evs, streamWant{firstStates: []string{"submitted", "working"}, text: "Hello, 1", workingFirst: true, final: "completed"})
	if t.Failed() {
		return
	}
	follow := userText("Again")
	follow.ContextID = evs[0].ContextID
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: follow})
	if err != nil {
		t.Fatal(err)
	}
	if task := asTask(t, res); task.Status.State != a2a.TaskStateCompleted || artifactsText(task) != "Hello, 2" {
		t.Errorf("follow-up: %s %q, want completed %q", task.Status.State, artifactsText(task), "Hello, 2")
	}
	m.mu.Lock()
	last := m.calls[len(m.calls)-1]
	m.mu.Unlock()
	var roles []string
	for _, msg := range last {
		roles = append(roles, fmt.Sprint(msg["role"], ":", msg["content"]))
	}
	if got := strings.Join(roles, "|"); got != "system:Be brief.|user:Hi|assistant:Hello, 1|user:Again" {
		t.Errorf("the follow-up's chat: %s", got)
	}

	w := newWire(t)
	card, err := (&agentcard03.Resolver{Client: w.client()}).Resolve(ctx, openaiURL)
	if err != nil {
		t.Fatal(err)
	}
	c03, err := a2aclient03.NewFromCard(ctx, card, a2aclient03.WithDefaultsDisabled(), a2aclient03.WithJSONRPCTransport(w.client()))
	if err != nil {
		t.Fatal(err)
	}
	evs = nil
	for ev, err := range c03.SendStreamingMessage(ctx, &a2a03.MessageSendParams{Message: text03("Hi")}) {
		if err != nil {
			t.Fatalf("message/stream after %v: %v", evs, err)
		}
		evs = append(evs, v03Event(ev))
	}
	checkStream(t, evs, streamWant{firstStates: []string{"submitted", "working"}, text: "Hello, 1", workingFirst: true, final: "completed", legacy: true})
}

// TestOpenAIJS streams from the model through the module with
// @a2a-js/sdk (js/test/openai.test.js).
func TestOpenAIJS(t *testing.T) {
	node, dir := nodeSuite(t)
	loadOpenAI(t)
	runNode(t, node, dir, "test/openai.test.js", "A2A_OPENAI_URL="+openaiURL)
}

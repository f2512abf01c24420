package replicas

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// agent speaks the agent contract to both replicas. By the input text:
// "echo X" answers "echo: X"; "ask" asks for a name, and the next turn T
// answers "hello T"; "stream N" sends N chunks "cI ", each after the
// test lets it go (next), then ends; "slow" holds the call until the
// module aborts it (aborted gets the task id); "drip" sends one chunk
// once the test lets it go (next), then holds the call as "slow" does.
type agent struct {
	srv     *httptest.Server
	next    chan struct{}
	aborted chan string

	mu       sync.Mutex
	contexts []string // the context id of every call
}

func startAgent(t *testing.T) *agent {
	a := &agent{next: make(chan struct{}, 64), aborted: make(chan string, 8)}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *agent) URL() string { return a.srv.URL + "/agent" }

func (a *agent) Contexts() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.contexts...)
}

func (a *agent) serve(w http.ResponseWriter, r *http.Request) {
	var call struct {
		TaskID    string            `json:"taskId"`
		ContextID string            `json:"contextId"`
		Input     json.RawMessage   `json:"input"`
		History   []json.RawMessage `json:"history"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &call); err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	a.contexts = append(a.contexts, call.ContextID)
	a.mu.Unlock()
	var input string
	_ = json.Unmarshal(call.Input, &input)
	word, rest, _ := strings.Cut(input, " ")
	switch {
	case len(call.History) > 0:
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "hello "+input)
	case word == "echo":
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "echo: "+rest)
	case word == "ask":
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("A2A-Task-State", "input-required")
		io.WriteString(w, "what is your name?")
	case word == "stream":
		n, _ := strconv.Atoi(rest)
		w.Header().Set("Content-Type", "application/x-ndjson")
		rc := http.NewResponseController(w)
		for i := 1; i <= n; i++ {
			select {
			case <-a.next:
			case <-r.Context().Done():
				return
			}
			fmt.Fprintf(w, `{"text":"c%d "}`+"\n", i)
			rc.Flush()
		}
	case word == "drip":
		w.Header().Set("Content-Type", "application/x-ndjson")
		select {
		case <-a.next:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, `{"text":"d "}`+"\n")
		http.NewResponseController(w).Flush()
		fallthrough
	case word == "slow":
		<-r.Context().Done()
		select {
		case a.aborted <- call.TaskID:
		default: // a test that aborts more calls than it counts
		}
	default:
		http.Error(w, "unknown", http.StatusBadRequest)
	}
}

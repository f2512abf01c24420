package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// agentCall is one request the module made to an agent (the agent
// contract's request body, plus the headers).
type agentCall struct {
	TaskID    string            `json:"taskId"`
	ContextID string            `json:"contextId"`
	Input     json.RawMessage   `json:"input"`
	Message   json.RawMessage   `json:"message"`
	History   []json.RawMessage `json:"history"`
	User      string            `json:"user"`
	// Extensions are the activated A2A extensions the module passed on.
	Extensions []string    `json:"extensions"`
	Header     http.Header `json:"-"`
}

// inputText is the call's input when it is a string ("" otherwise).
func (c agentCall) inputText() string {
	var s string
	_ = json.Unmarshal(c.Input, &s)
	return s
}

// agent is an httptest server answering the agent contract with fn and
// recording every call.
type agent struct {
	srv   *httptest.Server
	mu    sync.Mutex
	calls []agentCall
	// seen receives each call as it arrives (buffered; never blocks).
	seen chan agentCall
}

func newAgent(t *testing.T, fn func(w http.ResponseWriter, r *http.Request, c agentCall)) *agent {
	t.Helper()
	return serveAgent(t, httptest.NewServer, fn)
}

// serveAgent is newAgent on a server started by start (httptest.NewServer
// or httptest.NewTLSServer).
func serveAgent(t *testing.T, start func(http.Handler) *httptest.Server, fn func(w http.ResponseWriter, r *http.Request, c agentCall)) *agent {
	t.Helper()
	a := &agent{seen: make(chan agentCall, 64)}
	a.srv = start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var c agentCall
		body, err := io.ReadAll(r.Body)
		if err != nil || json.Unmarshal(body, &c) != nil {
			http.Error(w, "bad request body", http.StatusBadRequest)
			return
		}
		c.Header = r.Header.Clone()
		a.mu.Lock()
		a.calls = append(a.calls, c)
		a.mu.Unlock()
		select {
		case a.seen <- c:
		default:
		}
		fn(w, r, c)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

// URL is where the module reaches the agent.
func (a *agent) URL() string { return a.srv.URL + "/agent" }

// Calls returns the calls so far.
func (a *agent) Calls() []agentCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]agentCall(nil), a.calls...)
}

// next waits for the next call.
func (a *agent) next(t *testing.T) agentCall {
	t.Helper()
	select {
	case c := <-a.seen:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("the agent was not called")
		return agentCall{}
	}
}

// textAgent answers text/plain "Hello, <input>".
func textAgent(t *testing.T) *agent {
	return newAgent(t, func(w http.ResponseWriter, _ *http.Request, c agentCall) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "Hello, %s", c.inputText())
	})
}

// dataAgent answers a JSON object (a data part).
func dataAgent(t *testing.T) *agent {
	return newAgent(t, func(w http.ResponseWriter, _ *http.Request, _ agentCall) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"answer":42,"unit":"none"}`)
	})
}

// streamAgent answers an NDJSON event stream: a progress status, then two
// text chunks, each flushed on its own. If gate is not nil the second
// chunk waits for it.
func streamAgent(t *testing.T, gate chan struct{}) *agent {
	stop := make(chan struct{})
	a := newAgent(t, func(w http.ResponseWriter, r *http.Request, _ agentCall) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		f := w.(http.Flusher)
		io.WriteString(w, `{"status":"working","message":"thinking"}`+"\n")
		io.WriteString(w, `{"text":"chunk one, "}`+"\n")
		f.Flush()
		if gate != nil {
			select {
			case <-gate:
			case <-stop:
				return
			case <-r.Context().Done():
				return
			}
		}
		io.WriteString(w, `{"text":"chunk two"}`+"\n")
		f.Flush()
	})
	// Runs before the server's Close, which waits for held calls.
	t.Cleanup(func() { close(stop) })
	return a
}

// askAgent asks for a city first (input-required), then answers with the
// weather for the city it was given.
func askAgent(t *testing.T) *agent {
	return newAgent(t, func(w http.ResponseWriter, _ *http.Request, c agentCall) {
		w.Header().Set("Content-Type", "text/plain")
		if len(c.History) == 0 {
			w.Header().Set("A2A-Task-State", "input-required")
			io.WriteString(w, "Which city?")
			return
		}
		fmt.Fprintf(w, "Sunny in %s", c.inputText())
	})
}

// slowAgent holds every call until release is closed or the module aborts
// the call; aborted receives the task id of each aborted call.
type slowAgentT struct {
	*agent
	release chan struct{}
	aborted chan string
}

func slowAgent(t *testing.T) *slowAgentT {
	s := &slowAgentT{release: make(chan struct{}), aborted: make(chan string, 16)}
	s.agent = newAgent(t, func(w http.ResponseWriter, r *http.Request, c agentCall) {
		select {
		case <-s.release:
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "finally done")
		case <-r.Context().Done():
			s.aborted <- c.TaskID
		}
	})
	// Unblock handlers before the server's Close waits for them.
	t.Cleanup(func() {
		select {
		case <-s.release:
		default:
			close(s.release)
		}
	})
	return s
}

// secret is text an erroring agent puts in its answer; it must never reach
// an A2A caller.
const secret = "SECRET-UPSTREAM-DETAIL db=postgres://admin:hunter2@db"

// failAgent answers 500 with secret in the body.
func failAgent(t *testing.T) *agent {
	return newAgent(t, func(w http.ResponseWriter, _ *http.Request, _ agentCall) {
		http.Error(w, secret, http.StatusInternalServerError)
	})
}

// deadURL is an agent URL nothing listens on.
func deadURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/agent"
}

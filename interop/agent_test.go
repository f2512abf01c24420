package interop

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// agentRequest is what the a2a handler POSTs to its upstream agent (README.md,
// "The agent upstream contract"). Only the fields the scripted agent reacts to or
// the tests assert on are decoded; the raw body is kept as evidence.
type agentRequest struct {
	TaskID    string          `json:"taskId"`
	ContextID string          `json:"contextId"`
	Input     json.RawMessage `json:"input"`
	Message   struct {
		MessageID string      `json:"messageId"`
		Role      string      `json:"role"`
		Parts     []agentPart `json:"parts"`
	} `json:"message"`
	History []struct {
		Role  string      `json:"role"`
		Parts []agentPart `json:"parts"`
	} `json:"history"`
	User string `json:"user"`
}

// agentPart is a member-presence shaped part of the upstream wire.
type agentPart struct {
	Text *string `json:"text,omitempty"`
}

// agentCall is one request the agent received, with what became of it.
type agentCall struct {
	Req    agentRequest    `json:"request"`
	Raw    json.RawMessage `json:"raw"`
	Accept string          `json:"accept"`
	// Cancelled is set when the request context ended before the agent had
	// answered in full: that is how a cancelled A2A task reaches the agent.
	Cancelled bool `json:"cancelled"`
	Finished  bool `json:"finished"`
}

// inputText returns the request's input as a string; the module joins all-text
// parts into one string, which is all these tests ever send.
func (r *agentRequest) inputText() (string, bool) {
	var s string
	if err := json.Unmarshal(r.Input, &s); err != nil {
		return "", false
	}
	return s, true
}

// historyText flattens the history into "role: text" lines so a test can
// assert what the agent was shown in one comparison.
func (r *agentRequest) historyText() []string {
	var out []string
	for _, m := range r.History {
		var b strings.Builder
		for _, p := range m.Parts {
			if p.Text != nil {
				b.WriteString(*p.Text)
			}
		}
		out = append(out, m.Role+": "+b.String())
	}
	return out
}

// gate lets a test hold a streaming agent run in the middle (after its first
// chunk) so that it can subscribe to a task that is really still running.
type gate struct {
	arrived  chan struct{}
	released chan struct{}
}

// scriptedAgent is the upstream HTTP agent behind Caddy. Its behaviour is
// chosen by the first word of the task's first user turn:
//
//	echo TEXT       plain text/plain answer "echo: TEXT" (completed)
//	ask             turn 1: input-required asking for a name; turn 2: "Hello, NAME!"
//	slow            NDJSON working status, then waits for the request to be cancelled
//	stream N        NDJSON working status, then N text chunks "chunk-i;" (completed)
//	gated NAME      NDJSON working, chunk "part-1;", waits for release, chunk "part-2;"
//	direct TEXT     "direct: TEXT" marked A2A-Reply: message (a Message on a reply auto mount)
//	directstream N [NAME]  stream N, marked A2A-Reply: message
//	steps N NAME    NDJSON working, then chunks "step-i;", each held until released (resume_test.go)
//
// /control/* endpoints expose the same observations to the node tests.
type scriptedAgent struct {
	mu      sync.Mutex
	calls   []*agentCall
	gates   map[string]*gate
	changed chan struct{} // closed and replaced on every change, to wake waiters
}

func newScriptedAgent() *scriptedAgent {
	return &scriptedAgent{gates: map[string]*gate{}, changed: make(chan struct{})}
}

// notifyLocked wakes everyone waiting for a change; a.mu must be held.
func (a *scriptedAgent) notifyLocked() {
	close(a.changed)
	a.changed = make(chan struct{})
}

func (a *scriptedAgent) gate(name string) *gate {
	a.mu.Lock()
	defer a.mu.Unlock()
	g, ok := a.gates[name]
	if !ok {
		g = &gate{arrived: make(chan struct{}), released: make(chan struct{})}
		a.gates[name] = g
	}
	return g
}

// awaitGate waits until a gated run reached its gate.
func (a *scriptedAgent) awaitGate(name string, d time.Duration) bool {
	select {
	case <-a.gate(name).arrived:
		return true
	case <-time.After(d):
		return false
	}
}

// releaseGate lets a gated run go on; releasing twice is harmless.
func (a *scriptedAgent) releaseGate(name string) {
	g := a.gate(name)
	a.mu.Lock()
	defer a.mu.Unlock()
	select {
	case <-g.released:
	default:
		close(g.released)
	}
}

// callsFor returns copies of the calls made for one task, oldest first.
func (a *scriptedAgent) callsFor(taskID string) []agentCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []agentCall
	for _, c := range a.calls {
		if c.Req.TaskID == taskID {
			out = append(out, *c)
		}
	}
	return out
}

// waitFor polls cond (under the lock) until it holds or d runs out.
func (a *scriptedAgent) waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		a.mu.Lock()
		ok := cond()
		ch := a.changed
		a.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}

// waitCalls waits until the agent has received n calls for the task.
func (a *scriptedAgent) waitCalls(taskID string, n int, d time.Duration) []agentCall {
	a.waitFor(d, func() bool {
		k := 0
		for _, c := range a.calls {
			if c.Req.TaskID == taskID {
				k++
			}
		}
		return k >= n
	})
	return a.callsFor(taskID)
}

// waitCancelled waits until a call for the task saw its request context end.
func (a *scriptedAgent) waitCancelled(taskID string, d time.Duration) bool {
	return a.waitFor(d, func() bool {
		for _, c := range a.calls {
			if c.Req.TaskID == taskID && c.Cancelled {
				return true
			}
		}
		return false
	})
}

func (a *scriptedAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/control/") {
		a.serveControl(w, r)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "agent: POST only", http.StatusMethodNotAllowed)
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "agent: read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	call := &agentCall{Raw: raw, Accept: r.Header.Get("Accept")}
	if err := json.Unmarshal(raw, &call.Req); err != nil {
		http.Error(w, "agent: bad request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	a.calls = append(a.calls, call)
	a.notifyLocked()
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		call.Finished = true
		a.notifyLocked()
		a.mu.Unlock()
	}()

	input, ok := call.Req.inputText()
	if !ok {
		http.Error(w, "agent: input is not a string: "+string(call.Req.Input), http.StatusBadRequest)
		return
	}
	// The command is in the task's first user turn; later turns carry answers.
	first := input
	if h := call.Req.historyText(); len(h) > 0 {
		first = strings.TrimPrefix(h[0], "user: ")
	}
	cmd, arg, _ := strings.Cut(first, " ")

	switch cmd {
	case "echo":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "echo: %s", arg)
	case "ask":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if len(call.Req.History) == 0 {
			w.Header().Set("A2A-Task-State", "input-required")
			io.WriteString(w, "What is your name?")
			return
		}
		fmt.Fprintf(w, "Hello, %s!", input)
	case "slow":
		nd := newNDJSON(w)
		nd.send(map[string]any{"status": "working", "message": "slow agent started"})
		select {
		case <-r.Context().Done():
			a.markCancelled(call)
		case <-time.After(30 * time.Second):
			nd.send(map[string]any{"text": "slow agent was never cancelled"})
		}
	case "direct":
		w.Header().Set("A2A-Reply", "message")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "direct: %s", arg)
	case "stream", "directstream":
		// A word after the count only names the run, for a test to find
		// its call among the others.
		count, _, _ := strings.Cut(arg, " ")
		n, err := strconv.Atoi(count)
		if err != nil || n < 1 || n > 50 {
			http.Error(w, "agent: stream wants a count 1..50", http.StatusBadRequest)
			return
		}
		if cmd == "directstream" {
			// The mark is a header, so it comes before the first event:
			// the module decides the turn on that event.
			w.Header().Set("A2A-Reply", "message")
		}
		nd := newNDJSON(w)
		nd.send(map[string]any{"status": "working", "message": "streaming " + count + " chunks"})
		for i := 1; i <= n; i++ {
			time.Sleep(5 * time.Millisecond)
			if r.Context().Err() != nil {
				a.markCancelled(call)
				return
			}
			nd.send(map[string]any{"text": fmt.Sprintf("chunk-%d;", i)})
		}
	case "steps":
		a.steps(w, r, call, arg)
	case "gated":
		g := a.gate(arg)
		nd := newNDJSON(w)
		nd.send(map[string]any{"status": "working", "message": "gated run started"})
		nd.send(map[string]any{"text": "part-1;"})
		if !a.holdAt(r, call, nd, arg, g) {
			return
		}
		nd.send(map[string]any{"text": "part-2;"})
	default:
		http.Error(w, "agent: unknown command "+strconv.Quote(cmd), http.StatusBadRequest)
	}
}

// holdAt holds the run at gate g (named name) until the test releases
// it: it marks the gate arrived, then waits. false: the run ends there,
// the caller gone (the call marked cancelled) or the gate never released
// in 30s (an error event sent).
func (a *scriptedAgent) holdAt(r *http.Request, call *agentCall, nd *ndjson, name string, g *gate) bool {
	a.mu.Lock()
	select {
	case <-g.arrived:
	default:
		close(g.arrived)
	}
	a.mu.Unlock()
	select {
	case <-g.released:
		return true
	case <-r.Context().Done():
		a.markCancelled(call)
	case <-time.After(30 * time.Second):
		nd.send(map[string]any{"error": "gate " + name + " was never released"})
	}
	return false
}

func (a *scriptedAgent) markCancelled(c *agentCall) {
	a.mu.Lock()
	c.Cancelled = true
	a.notifyLocked()
	a.mu.Unlock()
}

// serveControl lets the node tests wait on and release gates and read what the
// agent saw, the same observations the Go tests make in-process.
func (a *scriptedAgent) serveControl(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	wait := 5 * time.Second
	if s := q.Get("timeout"); s != "" {
		if d, err := time.ParseDuration(s); err == nil && d <= 30*time.Second {
			wait = d
		}
	}
	switch strings.TrimPrefix(r.URL.Path, "/control/") {
	case "calls":
		n, _ := strconv.Atoi(q.Get("n"))
		calls := a.waitCalls(q.Get("taskId"), n, wait)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(calls)
	case "call-by-input":
		// A direct answer has no task id to look its call up by.
		c := agentCallWithInput(q.Get("input"))
		if c == nil {
			http.Error(w, "no call with that input", http.StatusNotFound)
			return
		}
		a.mu.Lock()
		cp := *c
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(cp)
	case "await-gate":
		if !a.awaitGate(q.Get("gate"), wait) {
			http.Error(w, "gate not reached", http.StatusGatewayTimeout)
			return
		}
		io.WriteString(w, "reached")
	case "release-gate":
		a.releaseGate(q.Get("gate"))
		io.WriteString(w, "released")
	case "await-cancel":
		if !a.waitCancelled(q.Get("taskId"), wait) {
			http.Error(w, "agent request was not cancelled", http.StatusGatewayTimeout)
			return
		}
		io.WriteString(w, "cancelled")
	default:
		http.NotFound(w, r)
	}
}

// ndjson writes one flushed JSON object per line, the agent's event stream.
type ndjson struct {
	w http.ResponseWriter
	f http.Flusher
}

func newNDJSON(w http.ResponseWriter) *ndjson {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &ndjson{w: w, f: f}
}

func (n *ndjson) send(v any) {
	b, _ := json.Marshal(v)
	n.w.Write(append(b, '\n'))
	if n.f != nil {
		n.f.Flush()
	}
}

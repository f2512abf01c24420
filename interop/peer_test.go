package interop

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// peer is a real A2A agent server started by a test, for the gateway to front.
// The same scripted behaviour runs in every SDK (see peerScript), so one
// expectation holds whichever agent sits behind the gateway.
type peer struct {
	// Name says which SDK serves it: "a2a-go-v2", "a2a-go-v2-hybrid",
	// "a2a-go-v0.3", "a2a-js", "a2a-js-hybrid".
	Name string
	// URL is the base URL; the card is at URL + "/.well-known/agent-card.json".
	URL string
	// RPC is the JSON-RPC endpoint of the agent's newest protocol version.
	RPC string
	// RPC03 is the 0.3 JSON-RPC endpoint, "" when the agent serves no 0.3.
	// It equals RPC on the 0.3-only agent and on the JS hybrid, which tells the
	// versions apart by the A2A-Version header on one URL.
	RPC03 string
	// Version lists the protocol versions served, newest first: "1.0",
	// "0.3" or "1.0 0.3".
	Version string

	calls func() ([]peerCall, error)
	reset func() error
	// t is the test that started the agent; a recorder failure is reported
	// on it (Errorf, safe from its subtests).
	t *testing.T
}

// peerCall is one HTTP request the agent got, reduced to what a gateway test
// asserts about what it forwarded.
type peerCall struct {
	HTTPMethod string `json:"httpMethod"`
	Path       string `json:"path"`
	// Method is the JSON-RPC method, "" for a non-RPC request (the card GET).
	Method string `json:"method"`
	// A2AVersion, XUser, Authorization, Cookie and Accept are the request
	// headers of those names, "" when absent.
	A2AVersion    string `json:"a2aVersion"`
	XUser         string `json:"xUser"`
	Authorization string `json:"authorization"`
	Cookie        string `json:"cookie"`
	Accept        string `json:"accept"`
	// ContextID and TaskID are the message's (sends) or the params' task id
	// (get, cancel, subscribe), as the client put them on the wire.
	ContextID string `json:"contextId"`
	TaskID    string `json:"taskId"`
	// Text is the first text part of the message, "" when none.
	Text string `json:"text"`
}

// Calls returns every request the agent got since start or the last ResetCalls.
func (p *peer) Calls() []peerCall {
	calls, err := p.calls()
	if err != nil {
		p.t.Errorf("reading %s's recorded calls: %v", p.Name, err)
	}
	return calls
}

// Methods returns the JSON-RPC methods of Calls, in order, skipping non-RPC
// requests.
func (p *peer) Methods() []string {
	var out []string
	for _, c := range p.Calls() {
		if c.Method != "" {
			out = append(out, c.Method)
		}
	}
	return out
}

// ResetCalls forgets the recorded calls.
func (p *peer) ResetCalls() {
	if err := p.reset(); err != nil {
		p.t.Errorf("resetting %s's recorded calls: %v", p.Name, err)
	}
}

// localListener listens on a free loopback port, closed when the test ends.
func localListener(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listening on 127.0.0.1:0: %v", err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}

// callLog records the requests of a Go agent.
type callLog struct {
	mu    sync.Mutex
	calls []peerCall
}

func (l *callLog) snapshot() []peerCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]peerCall(nil), l.calls...)
}

func (l *callLog) clear() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = nil
}

// record wraps an agent's handler so every request is logged before the SDK
// sees it; the body is read and put back untouched.
func (l *callLog) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Body != nil {
			body, _ = io.ReadAll(r.Body)
			_ = r.Body.Close()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		c := peerCall{
			HTTPMethod:    r.Method,
			Path:          r.URL.Path,
			A2AVersion:    r.Header.Get("A2A-Version"),
			XUser:         r.Header.Get("X-User"),
			Authorization: r.Header.Get("Authorization"),
			Cookie:        r.Header.Get("Cookie"),
			Accept:        r.Header.Get("Accept"),
		}
		c.Method, c.ContextID, c.TaskID, c.Text = parseRPC(body)
		l.mu.Lock()
		l.calls = append(l.calls, c)
		l.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// parseRPC pulls the recorded fields out of a JSON-RPC request of either
// dialect: 1.0 and 0.3 both carry params.message.{contextId,taskId,parts}
// on sends and params.id on task calls, and both name a text part's string
// "text" (0.3 adds kind:"text").
func parseRPC(body []byte) (method, contextID, taskID, text string) {
	var env struct {
		Method string `json:"method"`
		Params struct {
			ID      string `json:"id"`
			Message *struct {
				ContextID string            `json:"contextId"`
				TaskID    string            `json:"taskId"`
				Parts     []json.RawMessage `json:"parts"`
			} `json:"message"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &env) != nil {
		return "", "", "", ""
	}
	method, taskID = env.Method, env.Params.ID
	if m := env.Params.Message; m != nil {
		contextID, taskID = m.ContextID, m.TaskID
		for _, raw := range m.Parts {
			var p struct {
				Text *string `json:"text"`
			}
			if json.Unmarshal(raw, &p) == nil && p.Text != nil {
				text = *p.Text
				break
			}
		}
	}
	return method, contextID, taskID, text
}

// peerSeen is what the agent saw of the request that produced an event; the
// agents put it in metadata.peerSeen of every artifact and message.
type peerSeen struct {
	A2AVersion string `json:"a2aVersion"`
	XUser      string `json:"xUser"`
	ContextID  string `json:"contextId"`
}

// seenFromMeta reads metadata.peerSeen back from an artifact's or message's
// metadata, whichever SDK decoded it (a map of any). ok is false when absent.
func seenFromMeta(meta map[string]any) (peerSeen, bool) {
	raw, ok := meta["peerSeen"]
	if !ok {
		return peerSeen{}, false
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return peerSeen{}, false
	}
	var s peerSeen
	if json.Unmarshal(b, &s) != nil {
		return peerSeen{}, false
	}
	return s, true
}

// seenMeta is the metadata the Go agents attach.
func seenMeta(s peerSeen) map[string]any {
	return map[string]any{"peerSeen": map[string]any{
		"a2aVersion": s.A2AVersion, "xUser": s.XUser, "contextId": s.ContextID,
	}}
}

// peerCommand splits the first text part into the script's verb and argument:
// "echo X", "msg X", "stream N", "ask", "slow", "data", "fail".
func peerCommand(text string) (verb, arg string) {
	verb, arg, _ = strings.Cut(strings.TrimSpace(text), " ")
	return verb, arg
}

// Script texts, shared by the Go agents and checked against the JS one.
const (
	peerQuestion = "what is your name?"
	peerBoom     = "boom"
)

// serveGoPeer serves h on ln until the test ends and returns the peer with its
// recorder wired in.
func serveGoPeer(t *testing.T, ln net.Listener, log *callLog, h http.Handler, p *peer) *peer {
	t.Helper()
	srv := &http.Server{Handler: log.record(h)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		// Close, not Shutdown: a "slow" stream a test left open must not hold
		// the cleanup.
		_ = srv.Close()
		<-done
	})
	p.t = t
	p.calls = func() ([]peerCall, error) { return log.snapshot(), nil }
	p.reset = func() error { log.clear(); return nil }
	return p
}

// baseURL is the http URL of a listener.
func baseURL(ln net.Listener) string { return "http://" + ln.Addr().String() }

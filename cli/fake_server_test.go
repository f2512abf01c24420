package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeAgent is an A2A 1.0 JSON-RPC server as a hostile or broken one
// may be: its card (%s in it is the server's own URL) and the answer to
// each method are the test's, byte for byte.
type fakeAgent struct {
	*httptest.Server
	card    string
	answers map[string]http.HandlerFunc // by JSON-RPC method

	mu   sync.Mutex
	seen []http.Header // each request's headers, the card's GET included
}

func newFakeAgent(t *testing.T, card string, answers map[string]http.HandlerFunc) *fakeAgent {
	t.Helper()
	if answers == nil {
		answers = map[string]http.HandlerFunc{}
	}
	a := &fakeAgent{card: card, answers: answers}
	a.Server = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.Close)
	return a
}

func (a *fakeAgent) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.seen = append(a.seen, r.Header.Clone())
	a.mu.Unlock()
	if r.URL.Path == "/.well-known/agent-card.json" {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, strings.ReplaceAll(a.card, "%s", a.URL))
		return
	}
	var call struct {
		Method string `json:"method"`
	}
	body, _ := io.ReadAll(r.Body)
	json.Unmarshal(body, &call)
	a.mu.Lock()
	h := a.answers[call.Method]
	a.mu.Unlock()
	if h != nil {
		h(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"jsonrpc":"2.0","id":"x","error":{"code":-32001,"message":"Task not found"}}`)
}

// headers are the headers of every request the server was sent.
func (a *fakeAgent) headers() []http.Header {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.seen
}

// forget clears the requests seen so far.
func (a *fakeAgent) forget() {
	a.mu.Lock()
	a.seen = nil
	a.mu.Unlock()
}

// answer sets the answer to a method, once the server runs (its URL
// known).
func (a *fakeAgent) answer(method string, h http.HandlerFunc) {
	a.mu.Lock()
	a.answers[method] = h
	a.mu.Unlock()
}

// fakeCard is a valid 1.0 card; name, description and skill are spliced
// in as JSON string contents, and %s stands for the server's URL.
func fakeCard(name, description, skill string) string {
	return `{"name":"` + name + `","description":"` + description + `","version":"1",` +
		`"supportedInterfaces":[{"url":"%s/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],` +
		`"capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],` +
		`"skills":[{"id":"s","name":"` + skill + `","description":"d","tags":["t"]}]}`
}

// jsonAnswer answers a JSON-RPC call with this result, byte for byte.
func jsonAnswer(result string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":"x","result":`+result+`}`)
	}
}

// sseAnswer answers a streaming call with these results, one event each.
func sseAnswer(results ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, res := range results {
			io.WriteString(w, `data: {"jsonrpc":"2.0","id":"x","result":`+res+"}\n\n")
		}
	}
}

// run is one command's exit code, stdout and stderr, with set applied
// to its options first.
type run struct {
	code     int
	out, err string
}

func runCommand(t *testing.T, set func(*Options), cmd func(context.Context, *Options) int) run {
	t.Helper()
	var out, errOut bytes.Buffer
	o := &Options{Out: &out, Err: &errOut}
	if set != nil {
		set(o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := cmd(ctx, o)
	return run{code, out.String(), errOut.String()}
}

func (r run) want(t *testing.T, code int, out, errOut string) {
	t.Helper()
	if r.code != code || r.out != out || r.err != errOut {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.out, r.err, code, out, errOut)
	}
}

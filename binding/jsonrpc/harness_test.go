package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/handler/handlertest"
	"github.com/caddy-a2a/caddy-a2a/internal/jsontest"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store/memory"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// waitTimeout bounds every wait of a test; tests poll or block with it and
// never sleep for a fixed time.
const waitTimeout = 5 * time.Second

// ---- fake agent ------------------------------------------------------------

// The fake agent is the behaviour suite's (handlertest.Agent): with a
// Script every run plays it and ends; otherwise each run is handed to the
// test (Next) and waits for its steps (Send; close Steps to end it).
type (
	step      = handlertest.Step
	fakeRun   = handlertest.AgentRun
	fakeAgent = handlertest.Agent
)

func text(s string) step                            { return handlertest.Text(s) }
func status(st protocol.TaskState, msg string) step { return handlertest.Status(st, msg) }

func scriptAgent(steps ...step) *fakeAgent {
	return &fakeAgent{Script: func(*upstream.RunRequest) []step { return steps }}
}

func controlledAgent() *fakeAgent { return &fakeAgent{Runs: make(chan *fakeRun, 16)} }

// ---- harness ---------------------------------------------------------------

type harness struct {
	t      testing.TB
	store  *memory.Store
	runner *handler.Runner
	// opts are the service's options as the test set them; key is the
	// context key the agent's context ids are derived under.
	opts handler.Options
	key  []byte
	ep   *Binding
	srv  *httptest.Server
	// unload ends the endpoint's config (Options.Unload).
	unload    context.Context
	closeDone context.CancelFunc
}

// ownerHeader carries the test caller's identity to the handler.
const ownerHeader = "X-Test-Owner"

func newHarness(t testing.TB, agent upstream.Agent, mods ...func(*handler.Options)) *harness {
	t.Helper()
	return newHarnessWith(t, agent, memory.Options{}, mods...)
}

// newHarnessWith is newHarness over a memory store with so.
func newHarnessWith(t testing.TB, agent upstream.Agent, so memory.Options, mods ...func(*handler.Options)) *harness {
	t.Helper()
	h := &harness{t: t, store: memory.New(so)}
	h.unload, h.closeDone = context.WithCancel(context.Background())
	logger := zaptest.NewLogger(t)
	h.runner = handler.NewRunner(logger)
	o := handler.Options{
		Store:     h.store,
		Agent:     agent,
		Runner:    h.runner,
		Streaming: true,
		Unload:    h.unload,
		Logger:    logger,
	}
	for _, m := range mods {
		m(&o)
	}
	if o.ContextKey == nil && o.ContextKeyFunc == nil {
		o.ContextKey = handler.NewContextKey()
	}
	h.opts, h.key = o, o.ContextKey
	ep, err := bind(handler.New(o))
	if err != nil {
		t.Fatal(err)
	}
	h.ep = ep
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ep.Serve(w, r, body, handler.Caller{Owner: r.Header.Get(ownerHeader)})
	}))
	t.Cleanup(func() {
		h.closeDone()
		h.srv.CloseClientConnections()
		h.srv.Close()
		if err := h.runner.Close(); err != nil {
			t.Error(err)
		}
		h.store.Close()
	})
	return h
}

// bind is the JSON-RPC binding of a service New made.
func bind(svc *handler.Service, err error) (*Binding, error) {
	if err != nil {
		return nil, err
	}
	return New(svc), nil
}

// failedText is the status message of a task whose agent failed.
const failedText = "The agent could not complete the task."

// req is one JSON-RPC call of a test.
type req struct {
	version string // A2A-Version header ("" = none)
	owner   string
	body    string
	header  map[string]string
}

func (h *harness) post(ctx context.Context, r req) *http.Response {
	h.t.Helper()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, h.srv.URL, strings.NewReader(r.body))
	if err != nil {
		h.t.Fatal(err)
	}
	hr.Header.Set("Content-Type", "application/json")
	if r.version != "" {
		hr.Header.Set("A2A-Version", r.version)
	}
	if r.owner != "" {
		hr.Header.Set(ownerHeader, r.owner)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	resp, err := h.srv.Client().Do(hr)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp
}

// rpc makes a non-streaming call and returns the decoded response,
// checking the HTTP envelope every JSON-RPC answer must have.
func (h *harness) rpc(r req) map[string]any {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	resp := h.post(ctx, r)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("status %d, want 200: %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		h.t.Fatalf("Content-Type %q", ct)
	}
	return decode(h.t, body)
}

func decode(t testing.TB, b []byte) map[string]any {
	t.Helper()
	return jsontest.Decode(t, b)
}

// ---- JSON navigation -------------------------------------------------------

// at walks a decoded JSON value along path (object keys and array
// indexes); it fails the test when the path does not exist.
func at(t testing.TB, v any, path ...any) any {
	t.Helper()
	return jsontest.At(t, v, path...)
}

func str(t testing.TB, v any, path ...any) string {
	t.Helper()
	return jsontest.Str(t, v, path...)
}

func has(v any, path ...any) bool { return jsontest.Has(v, path...) }

func num(t testing.TB, v any, path ...any) int64 {
	t.Helper()
	n, ok := at(t, v, path...).(json.Number)
	if !ok {
		t.Fatalf("path %v is not a number: %v", path, at(t, v, path...))
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// ---- SSE -------------------------------------------------------------------

type sseFrame struct {
	id      string
	data    string
	comment string
}

type sseReader struct {
	resp *http.Response
	br   *bufio.Reader
}

func newSSEReader(t testing.TB, resp *http.Response) *sseReader {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("stream Content-Type %q", ct)
	}
	return &sseReader{resp: resp, br: bufio.NewReader(resp.Body)}
}

// next reads one frame (an event or a comment); io.EOF at the end.
func (s *sseReader) next() (sseFrame, error) {
	var f sseFrame
	seen := false
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			if seen && err == io.EOF {
				return f, io.ErrUnexpectedEOF
			}
			return f, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if seen {
				return f, nil
			}
		case strings.HasPrefix(line, ":"):
			f.comment = strings.TrimSpace(line[1:])
			seen = true
		case strings.HasPrefix(line, "id: "):
			f.id = line[4:]
			seen = true
		case strings.HasPrefix(line, "data: "):
			f.data += line[6:]
			seen = true
		}
	}
}

// event reads the next event frame, skipping heartbeat comments.
func (s *sseReader) event(t testing.TB) (sseFrame, map[string]any) {
	t.Helper()
	for {
		f, err := s.next()
		if err != nil {
			t.Fatalf("reading stream: %v", err)
		}
		if f.data == "" {
			continue
		}
		return f, decode(t, []byte(f.data))
	}
}

// rest reads every remaining event frame until the server ends the stream.
func (s *sseReader) rest(t testing.TB) ([]sseFrame, []map[string]any) {
	t.Helper()
	var fs []sseFrame
	var ms []map[string]any
	for {
		f, err := s.next()
		if err == io.EOF {
			return fs, ms
		}
		if err != nil {
			t.Fatalf("reading stream: %v", err)
		}
		if f.data == "" {
			continue
		}
		fs = append(fs, f)
		ms = append(ms, decode(t, []byte(f.data)))
	}
}

// ---- request bodies --------------------------------------------------------

func sendV10(method, id, extraMsg, config string) string {
	msg := `{"messageId":"` + id + `","role":"ROLE_USER","parts":[{"text":"hello"}]` + extraMsg + `}`
	cfg := ""
	if config != "" {
		cfg = `,"configuration":` + config
	}
	return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{"message":` + msg + cfg + `}}`
}

func sendV03(method, id, extraMsg, config string) string {
	msg := `{"kind":"message","messageId":"` + id + `","role":"user","parts":[{"kind":"text","text":"hello"}]` + extraMsg + `}`
	cfg := ""
	if config != "" {
		cfg = `,"configuration":` + config
	}
	return `{"jsonrpc":"2.0","id":"r-1","method":"` + method + `","params":{"message":` + msg + cfg + `}}`
}

// rpcCall is a JSON-RPC request of method with params.
func rpcCall(method, params string) string {
	return `{"jsonrpc":"2.0","id":3,"method":"` + method + `","params":` + params + `}`
}

// waitFor polls cond until it holds or the test times out.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// runnerIdle reports whether no run is going.
func runnerIdle(r *handler.Runner) bool { return r.Running() == 0 }

// midSeq numbers the messageIds of mid.
var midSeq atomic.Uint64

// mid is a new messageId: a client makes one per message, and a send
// under a used one is a retry (exactly-once sends).
func mid() string { return "m-" + strconv.FormatUint(midSeq.Add(1), 10) + "x" }

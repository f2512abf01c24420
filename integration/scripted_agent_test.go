package integration

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// scriptedAgent is a bare A2A 1.0 agent for the gateway tests that need
// one peerAgent cannot play: its card names whatever interface URL the
// test sets, and every JSON-RPC call goes to rpc, which answers a
// completed task unless the test sets another. Every request is recorded
// as "METHOD path Authorization".
type scriptedAgent struct {
	srv     *httptest.Server
	codec   protocol.Codec
	streams bool

	mu    sync.Mutex
	iface string
	etag  int
	got   []string
	rpc   func(w http.ResponseWriter, r *http.Request, req *protocol.Request)
}

func startScripted(t *testing.T, streams bool) *scriptedAgent {
	t.Helper()
	s := &scriptedAgent{codec: protocol.NewCodec(protocol.V10, protocol.Limits{}), streams: streams}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	s.iface = s.srv.URL + "/rpc"
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the agent's base URL.
func (s *scriptedAgent) URL() string { return s.srv.URL }

// pointAt makes the card name url as the agent's interface.
func (s *scriptedAgent) pointAt(url string) {
	s.mu.Lock()
	s.iface = url
	s.etag++
	s.mu.Unlock()
}

// setRPC replaces what the agent answers to JSON-RPC calls.
func (s *scriptedAgent) setRPC(rpc func(w http.ResponseWriter, r *http.Request, req *protocol.Request)) {
	s.mu.Lock()
	s.rpc = rpc
	s.mu.Unlock()
}

// requests are the requests the agent got so far.
func (s *scriptedAgent) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

// count is how many requests the agent got for path.
func (s *scriptedAgent) count(method, path string) int {
	n := 0
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.got {
		if strings.HasPrefix(g, method+" "+path+" ") {
			n++
		}
	}
	return n
}

// waitCardGets waits until the card was fetched n more times than before.
func (s *scriptedAgent) waitCardGets(t *testing.T, before, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.count("GET", "/.well-known/agent-card.json") < before+n {
		if time.Now().After(deadline) {
			t.Fatalf("the card was fetched %d times, want %d", s.count("GET", "/.well-known/agent-card.json"), before+n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *scriptedAgent) handle(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.got = append(s.got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
	iface, etag, rpc := s.iface, s.etag, s.rpc
	s.mu.Unlock()
	if r.URL.Path == "/.well-known/agent-card.json" {
		card := &protocol.AgentCard{Name: "Scripted", Description: "A scripted agent.", Version: "1", Streaming: s.streams,
			DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
			Skills:     []protocol.Skill{{ID: "s", Name: "S", Description: "S.", Tags: []string{"t"}}},
			Interfaces: []protocol.Interface{{URL: iface, Binding: "JSONRPC", Version: protocol.V10}}}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("ETag", `"`+strconv.Itoa(etag)+`"`)
		w.Write(protocol.RenderCard(card, protocol.CardV10))
		return
	}
	body, _ := io.ReadAll(r.Body)
	req, perr := protocol.DecodeRequestLimit(body, 0)
	if perr != nil {
		http.Error(w, "not JSON-RPC", http.StatusBadRequest)
		return
	}
	if rpc != nil {
		rpc(w, r, req)
		return
	}
	done := &protocol.Task{ID: "st-1", ContextID: "sc-1", Status: protocol.TaskStatus{State: protocol.StateCompleted, Timestamp: time.Now().UTC()},
		Artifacts: []protocol.Artifact{{ID: "a", Parts: []protocol.Part{textPart("done at " + r.Host)}}}}
	w.Header().Set("Content-Type", "application/json")
	w.Write(protocol.AppendResponseEnd(s.codec.AppendSendResult(protocol.AppendResultHead(nil, req.ID), &protocol.Event{Task: done})))
}

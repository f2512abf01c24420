package a2aagent

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// rpcServer is an A2A 1.0 agent that does not stream: every JSON-RPC
// call gets a completed task, and each request's path and Authorization
// are recorded. Its card (at DefaultCardPath) names iface as its
// interface, which a test may point at another server.
type rpcServer struct {
	srv *httptest.Server

	mu    sync.Mutex
	iface string
	etag  string
	got   []string
}

func newRPCServer(t *testing.T) *rpcServer {
	s := &rpcServer{}
	codec := protocol.NewCodec(protocol.V10, protocol.Limits{})
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.got = append(s.got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		iface, etag := s.iface, s.etag
		s.mu.Unlock()
		if r.URL.Path == DefaultCardPath {
			card := &protocol.AgentCard{Name: "Agent", Description: "An agent.", Version: "1",
				DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
				Skills:     []protocol.Skill{{ID: "s", Name: "S", Description: "S.", Tags: []string{"t"}}},
				Interfaces: []protocol.Interface{{URL: iface, Binding: "JSONRPC", Version: protocol.V10}}}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("ETag", etag)
			w.Write(protocol.RenderCard(card, protocol.CardV10))
			return
		}
		body, _ := io.ReadAll(r.Body)
		req, perr := protocol.DecodeRequestLimit(body, 0)
		if perr != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		done := task("t-"+strings.TrimPrefix(s.srv.URL, "http://"), protocol.StateCompleted, "a")
		w.Header().Set("Content-Type", "application/json")
		w.Write(protocol.AppendResponseEnd(codec.AppendSendResult(protocol.AppendResultHead(nil, req.ID), &protocol.Event{Task: done})))
	}))
	s.iface, s.etag = s.srv.URL+"/rpc", `"1"`
	t.Cleanup(s.srv.Close)
	return s
}

// pointAt makes the card name url as its interface, under a new ETag.
func (s *rpcServer) pointAt(url string) {
	s.mu.Lock()
	s.iface, s.etag = url, s.etag+"+"
	s.mu.Unlock()
}

// requests are the requests the server got, as "METHOD path Authorization".
func (s *rpcServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

// operatorToken is what header_up adds to every call in these tests.
var operatorToken = http.Header{"Authorization": {"Bearer operator-token"}}

// newOriginAgent fronts base as the root configures the a2a kind: the
// same header_up on the card fetches and on the runs.
func newOriginAgent(t *testing.T, base string, allow []string, log *zap.Logger) (*Agent, *Cards) {
	t.Helper()
	cards, err := NewCards(CardsConfig{BaseURL: base, Headers: operatorToken, AllowOrigins: allow, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Config{Cards: cards, HTTPConfig: upstream.HTTPConfig{Timeout: 5 * time.Second, Headers: operatorToken}})
	if err != nil {
		t.Fatal(err)
	}
	return a, cards
}

// A first card whose interface is on another origin is refused: there is
// no card, no run or cancel goes anywhere (the collector gets nothing,
// header_up's token least of all), and a warning names the origin.
func TestCardOnAnotherOriginRefused(t *testing.T) {
	collector := newRPCServer(t)
	agent := newRPCServer(t)
	agent.pointAt(collector.srv.URL + "/rpc")
	core, logs := observer.New(zapcore.WarnLevel)
	a, cards := newOriginAgent(t, agent.srv.URL, nil, zap.New(core))

	if _, err := collect(t, a, userReq("hi", "")); err == nil || !strings.Contains(err.Error(), "is on another origin ("+collector.srv.URL+")") {
		t.Fatalf("the run: %v", err)
	}
	if err := a.Cancel(context.Background(), &upstream.CancelRequest{TaskID: "mod-task", Upstream: `{"t":"at","c":"mod-ctx"}`}); err == nil {
		t.Fatal("a cancel went on without a card")
	}
	if cards.Current() != nil {
		t.Fatalf("card %+v", cards.Current())
	}
	if got := collector.requests(); len(got) != 0 {
		t.Fatalf("the other origin got %q", got)
	}
	if got := strings.Join(agent.requests(), ", "); got != "GET "+DefaultCardPath+" Bearer operator-token, GET "+DefaultCardPath+" Bearer operator-token" {
		t.Fatalf("the agent got %s", got)
	}
	entries := logs.All()
	if len(entries) != 1 {
		t.Fatalf("%d warnings, want 1 (the second fetch is the same fault): %+v", len(entries), entries)
	}
	fields := entries[0].ContextMap()
	if entries[0].Message != "a2a: the agent's card puts its interface on another origin; the card is not used" ||
		fields["origin"] != collector.srv.URL || fields["interface"] != collector.srv.URL+"/rpc" ||
		fields["card_url"] != agent.srv.URL+DefaultCardPath {
		t.Fatalf("warning %q %v", entries[0].Message, fields)
	}
}

// A refresh to a card on another origin keeps the card before: runs go on
// to the agent, never to the other origin, and subscribers see no change.
func TestCardRefreshToAnotherOriginKeepsTheCard(t *testing.T) {
	collector := newRPCServer(t)
	agent := newRPCServer(t)
	a, cards := newOriginAgent(t, agent.srv.URL, nil, nil)
	var seen []string
	cards.Subscribe(func(c *Card) { seen = append(seen, c.Interface.URL) })
	if _, err := cards.fetch(); err != nil {
		t.Fatal(err)
	}
	if evs, err := collect(t, a, userReq("one", "")); err != nil || !strings.HasSuffix(describe(evs), "status:completed") {
		t.Fatalf("first run: %s, %v", describe(evs), err)
	}

	agent.pointAt(collector.srv.URL + "/rpc")
	if _, err := cards.fetch(); err == nil || !strings.Contains(err.Error(), "another origin") {
		t.Fatalf("the refresh: %v", err)
	}
	if got := cards.Current().Interface.URL; got != agent.srv.URL+"/rpc" {
		t.Fatalf("card after the refresh: %s", got)
	}
	if evs, err := collect(t, a, userReq("two", "")); err != nil || !strings.HasSuffix(describe(evs), "status:completed") {
		t.Fatalf("run after the refresh: %s, %v", describe(evs), err)
	}
	if got := collector.requests(); len(got) != 0 {
		t.Fatalf("the other origin got %q", got)
	}
	rpc := 0
	for _, r := range agent.requests() {
		if r == "POST /rpc Bearer operator-token" {
			rpc++
		}
	}
	if rpc != 2 || strings.Join(seen, ",") != agent.srv.URL+"/rpc" {
		t.Fatalf("the agent got %d runs, subscribers saw %v", rpc, seen)
	}
}

// An origin the config allows is used: header_up goes with the run there,
// as the operator asked. The config may write it in any case, with a
// trailing slash or the default port.
func TestCardOnAnAllowedOrigin(t *testing.T) {
	collector := newRPCServer(t)
	agent := newRPCServer(t)
	agent.pointAt(collector.srv.URL + "/rpc")
	a, _ := newOriginAgent(t, agent.srv.URL, []string{"https://other.example", strings.ToUpper(collector.srv.URL) + "/"}, nil)
	if evs, err := collect(t, a, userReq("hi", "")); err != nil || !strings.HasSuffix(describe(evs), "status:completed") {
		t.Fatalf("run: %s, %v", describe(evs), err)
	}
	if got := strings.Join(collector.requests(), ", "); got != "POST /rpc Bearer operator-token" {
		t.Fatalf("the allowed origin got %s", got)
	}
}

// Origins compare scheme, host and port, the default port written out;
// the config's are origins, nothing more.
func TestParseOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"http://a.example":          "http://a.example:80",
		"http://a.example:80/":      "http://a.example:80",
		"HTTPS://A.Example":         "https://a.example:443",
		"https://a.example:8443":    "https://a.example:8443",
		"http://[::1]:9000":         "http://[::1]:9000",
		"http://127.0.0.1":          "http://127.0.0.1:80",
		"ftp://a.example":           "",
		"a.example":                 "",
		"http://a.example/rpc":      "",
		"http://a.example?x=1":      "",
		"http://a.example#f":        "",
		"http://u:p@a.example":      "",
		"http://":                   "",
		"http://a.example/?":        "",
		"https://a.example:8443/x/": "",
	} {
		got, err := ParseOrigin(in)
		if want == "" {
			if err == nil || !strings.Contains(err.Error(), "is not an origin") {
				t.Errorf("%q: %q, %v; want refused", in, got, err)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := NewCards(CardsConfig{BaseURL: "http://a.example", AllowOrigins: []string{"http://b.example/rpc"}}); err == nil ||
		!strings.Contains(err.Error(), `allow_origin: "http://b.example/rpc" is not an origin`) {
		t.Fatalf("NewCards: %v", err)
	}
}

package httpbind

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/internal/jsontest"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

func testCard() *protocol.AgentCard {
	return &protocol.AgentCard{
		Name:               "Echo",
		Description:        "Echoes",
		Version:            "1.2.3",
		Streaming:          true,
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             []protocol.Skill{{ID: "echo", Name: "Echo", Description: "echo", Tags: []string{"x"}}},
	}
}

func serveCard(cs *CardServer, method, url string, hdr map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, "/.well-known/agent-card.json", nil)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	cs.ServeCard(w, r, CardURLs{RPC: url})
	return w
}

func TestCardVariants(t *testing.T) {
	cs := NewCardServer(testCard(), nil, 5*time.Minute)
	const rpc = "https://agent.example/a2a"
	for _, tc := range []struct {
		name    string
		version string
		hybrid  bool
	}{
		{"no header", "", true},
		{"0.3", "0.3", true},
		{"unknown", "7.1", true},
		{"1.0", "1.0", false},
		{"1.0.1", "1.0.1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tc.version != "" {
				hdr["A2A-Version"] = tc.version
			}
			w := serveCard(cs, http.MethodGet, rpc, hdr)
			if w.Code != http.StatusOK {
				t.Fatalf("status %d", w.Code)
			}
			h := w.Header()
			if h.Get("Content-Type") != "application/json" || h.Get("Vary") != "A2A-Version" ||
				h.Get("Cache-Control") != "public, max-age=300" {
				t.Fatalf("headers %v", h)
			}
			etag := h.Get("ETag")
			if len(etag) < 3 || etag[0] != '"' || etag[len(etag)-1] != '"' {
				t.Fatalf("ETag %q is not a strong entity tag", etag)
			}
			body := w.Body.Bytes()
			if h.Get("Content-Length") != strconv.Itoa(len(body)) {
				t.Fatalf("Content-Length %q for %d bytes", h.Get("Content-Length"), len(body))
			}
			// The bytes are exactly what the protocol renders for this URL.
			card := testCard()
			card.Interfaces = []protocol.Interface{
				{URL: rpc, Binding: "JSONRPC", Version: protocol.V10},
				{URL: rpc, Binding: "JSONRPC", Version: protocol.V03},
			}
			variant := protocol.CardV10
			if tc.hybrid {
				variant = protocol.CardHybrid
			}
			if want := protocol.RenderCard(card, variant); string(body) != string(want) {
				t.Fatalf("body\n%s\nwant\n%s", body, want)
			}
			m := jsontest.Decode(t, body)
			if jsontest.Str(t, m, "supportedInterfaces", 0, "protocolVersion") != "1.0" ||
				jsontest.Str(t, m, "supportedInterfaces", 1, "protocolVersion") != "0.3" {
				t.Fatalf("interfaces %v", m["supportedInterfaces"])
			}
			if jsontest.Has(m, "url") != tc.hybrid || jsontest.Has(m, "protocolVersion") != tc.hybrid {
				t.Fatalf("0.3 members present=%v, want %v", jsontest.Has(m, "url"), tc.hybrid)
			}
			if tc.hybrid && jsontest.Str(t, m, "url") != rpc {
				t.Fatalf("url %v", m["url"])
			}
		})
	}
}

func TestCardETags(t *testing.T) {
	cs := NewCardServer(testCard(), []protocol.Version{protocol.V03, protocol.V10}, time.Minute)
	const rpc = "https://agent.example/a2a"
	hyb := serveCard(cs, http.MethodGet, rpc, nil).Header().Get("ETag")
	v10 := serveCard(cs, http.MethodGet, rpc, map[string]string{"A2A-Version": "1.0"}).Header().Get("ETag")
	other := serveCard(cs, http.MethodGet, "https://other.example/a2a", nil).Header().Get("ETag")
	if hyb == v10 || hyb == other {
		t.Fatalf("ETags must differ per variant and URL: %s %s %s", hyb, v10, other)
	}
	if again := serveCard(cs, http.MethodGet, rpc, nil).Header().Get("ETag"); again != hyb {
		t.Fatalf("ETag not stable: %s then %s", hyb, again)
	}
	for _, tc := range []struct {
		name string
		inm  string
		hdr  map[string]string
		want int
	}{
		{"match", hyb, nil, 304},
		{"weak match", "W/" + hyb, nil, 304},
		{"in a list", `"zzz", W/"yyy" ,` + hyb, nil, 304},
		{"star", "*", nil, 304},
		{"other variant's tag", v10, nil, 200},
		{"1.0 tag on 1.0", v10, map[string]string{"A2A-Version": "1.0"}, 304},
		{"no match", `"nope"`, nil, 200},
		{"garbage", `nope, also`, nil, 200},
		{"unterminated", `"abc`, nil, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{"If-None-Match": tc.inm}
			for k, v := range tc.hdr {
				hdr[k] = v
			}
			w := serveCard(cs, http.MethodGet, rpc, hdr)
			if w.Code != tc.want {
				t.Fatalf("status %d, want %d", w.Code, tc.want)
			}
			if tc.want == 304 {
				h := w.Header()
				if w.Body.Len() != 0 || h.Get("ETag") == "" || h.Get("Vary") != "A2A-Version" ||
					h.Get("Cache-Control") != "public, max-age=60" || h.Get("Content-Type") != "" {
					t.Fatalf("304 headers %v body %q", h, w.Body.String())
				}
			}
		})
	}
}

// lastModified polls the card until it carries Last-Modified, which it
// does from the second after it began to be served, and returns it.
func lastModified(t *testing.T, cs *CardServer, rpc string) (string, time.Time) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		lm := serveCard(cs, http.MethodGet, rpc, nil).Header().Get("Last-Modified")
		if lm != "" {
			mod, err := http.ParseTime(lm)
			if err != nil || !strings.HasSuffix(lm, " GMT") {
				t.Fatalf("Last-Modified %q: %v", lm, err)
			}
			return lm, mod
		}
		if time.Now().After(deadline) {
			t.Fatal("no Last-Modified within 3s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCardLastModified: the card says when it began to be served, and
// If-Modified-Since answers 304 as If-None-Match does, unless the request
// also has an If-None-Match, which then decides alone (RFC 9110 §13.2.2).
func TestCardLastModified(t *testing.T) {
	before := time.Now().UTC().Truncate(time.Second)
	cs := NewCardServer(testCard(), nil, time.Minute)
	const rpc = "https://agent.example/a2a"
	lm, mod := lastModified(t, cs, rpc)
	if !mod.After(before) || mod.After(time.Now()) {
		t.Fatalf("Last-Modified %q, want the second after the server was made, not in the future", lm)
	}
	etag := serveCard(cs, http.MethodGet, rpc, nil).Header().Get("ETag")
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"same date", map[string]string{"If-Modified-Since": lm}, 304},
		{"a later date, now", map[string]string{"If-Modified-Since": time.Now().UTC().Format(http.TimeFormat)}, 304},
		{"a date in the future", map[string]string{"If-Modified-Since": time.Now().Add(time.Hour).Format(http.TimeFormat)}, 200},
		{"earlier date", map[string]string{"If-Modified-Since": mod.Add(-time.Second).Format(http.TimeFormat)}, 200},
		{"not a date", map[string]string{"If-Modified-Since": "yesterday"}, 200},
		{"1.0 variant", map[string]string{"If-Modified-Since": lm, "A2A-Version": "1.0"}, 304},
		{"If-None-Match decides", map[string]string{"If-Modified-Since": lm, "If-None-Match": `"other"`}, 200},
		{"both match", map[string]string{"If-Modified-Since": lm, "If-None-Match": etag}, 304},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := serveCard(cs, http.MethodGet, rpc, tc.hdr)
			if w.Code != tc.want {
				t.Fatalf("status %d, want %d", w.Code, tc.want)
			}
			if got := w.Header().Get("Last-Modified"); got != lm {
				t.Fatalf("Last-Modified %q, want %q", got, lm)
			}
			if tc.want == 304 && w.Body.Len() != 0 {
				t.Fatalf("304 with a body %q", w.Body.String())
			}
		})
	}
	if w := serveCard(cs, http.MethodHead, rpc, map[string]string{"If-Modified-Since": lm}); w.Code != 304 {
		t.Fatalf("HEAD with If-Modified-Since: %d", w.Code)
	}

	// A card that changes (a gateway's new card, a reload) in the second
	// it is served gets a later date: the old date never answers 304 for
	// it, and until its own date has come it carries none.
	changed := testCard()
	changed.Version = "9.9.9"
	cs.SetCard(*changed)
	w := serveCard(cs, http.MethodGet, rpc, map[string]string{"If-Modified-Since": lm})
	if w.Code != http.StatusOK || w.Header().Get("Last-Modified") != "" || !strings.Contains(w.Body.String(), "9.9.9") {
		t.Fatalf("the changed card with the old date: %d, Last-Modified %q", w.Code, w.Header().Get("Last-Modified"))
	}
	if lm2, mod2 := lastModified(t, cs, rpc); !mod2.After(mod) {
		t.Fatalf("the changed card's Last-Modified %q is not after %q", lm2, lm)
	}
}

func TestCardMethods(t *testing.T) {
	cs := NewCardServer(testCard(), nil, time.Minute)
	get := serveCard(cs, http.MethodGet, "https://a/", nil)
	head := serveCard(cs, http.MethodHead, "https://a/", nil)
	if head.Code != 200 || head.Body.Len() != 0 || head.Header().Get("Content-Length") != strconv.Itoa(get.Body.Len()) ||
		head.Header().Get("ETag") != get.Header().Get("ETag") {
		t.Fatalf("HEAD: %d %v body %d", head.Code, head.Header(), head.Body.Len())
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodOptions} {
		w := serveCard(cs, m, "https://a/", nil)
		if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD" {
			t.Fatalf("%s: %d Allow %q", m, w.Code, w.Header().Get("Allow"))
		}
	}
}

func TestCardVersionsServed(t *testing.T) {
	cs := NewCardServer(testCard(), []protocol.Version{protocol.V10}, time.Minute)
	m := jsontest.Decode(t, serveCard(cs, http.MethodGet, "https://a/", nil).Body.Bytes())
	if jsontest.Has(m, "supportedInterfaces", 1) || jsontest.Str(t, m, "supportedInterfaces", 0, "protocolVersion") != "1.0" || jsontest.Has(m, "url") {
		t.Fatalf("1.0-only card %v", m)
	}
}

func TestCardCacheBounded(t *testing.T) {
	cs := NewCardServer(testCard(), nil, time.Minute)
	for i := range maxCachedCardURLs + 10 {
		w := serveCard(cs, http.MethodGet, "https://h"+strconv.Itoa(i)+"/a2a", nil)
		if w.Code != 200 || jsontest.Str(t, jsontest.Decode(t, w.Body.Bytes()), "url") != "https://h"+strconv.Itoa(i)+"/a2a" {
			t.Fatalf("card %d wrong", i)
		}
	}
	if n := len(cs.s.set.Load().cache); n != maxCachedCardURLs {
		t.Fatalf("cache holds %d URLs, cap %d", n, maxCachedCardURLs)
	}
}

// nopWriter is a ResponseWriter that allocates nothing per request.
type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) WriteHeader(int)             {}
func (w *nopWriter) Write(b []byte) (int, error) { return len(b), nil }

func TestCardHitAllocs(t *testing.T) {
	requireCardHitAllocsFree(t, NewCardServer(testCard(), nil, time.Minute))
}

// requireCardHitAllocsFree serves cs's 1.0 card once, then fails t if a
// cached answer allocates.
func requireCardHitAllocsFree(t *testing.T, cs *CardServer) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "/.well-known/agent-card.json", nil)
	r.Header.Set("A2A-Version", "1.0")
	w := &nopWriter{h: http.Header{}}
	cs.ServeCard(w, r, CardURLs{RPC: "https://a/"})
	if n := testing.AllocsPerRun(100, func() { cs.ServeCard(w, r, CardURLs{RPC: "https://a/"}) }); n != 0 {
		t.Fatalf("%v allocs per cached card answer", n)
	}
}

func BenchmarkCardHit(b *testing.B) {
	cs := NewCardServer(testCard(), nil, time.Minute)
	r := httptest.NewRequest(http.MethodGet, "/.well-known/agent-card.json", nil)
	w := &nopWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		cs.ServeCard(w, r, CardURLs{RPC: "https://a/"})
	}
}

// A card server without a card (a gateway whose agent has not answered
// yet) answers 503 with Retry-After and no cache; SetCard serves the card,
// and a changed card gets a new ETag.
func TestCardPendingAndSet(t *testing.T) {
	cs := NewCardServer(nil, nil, time.Minute)
	rec := serveCard(cs, http.MethodGet, "https://a.example/a2a", nil)
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "5" || rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("pending card: %d %v", rec.Code, rec.Header())
	}
	cs.SetCard(*testCard())
	rec = serveCard(cs, http.MethodGet, "https://a.example/a2a", nil)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"name":"Echo"`) {
		t.Fatalf("set card: %d %s", rec.Code, rec.Body)
	}
	etag := rec.Header().Get("Etag")
	changed := *testCard()
	changed.Name = "Echo 2"
	cs.SetCard(changed)
	rec = serveCard(cs, http.MethodGet, "https://a.example/a2a", map[string]string{"If-None-Match": etag})
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"name":"Echo 2"`) || rec.Header().Get("Etag") == etag {
		t.Fatalf("changed card: %d %s %v", rec.Code, rec.Body, rec.Header())
	}
}

// TestCardRESTInterface: an HTTP+JSON URL and a gRPC address add an
// interface each after each version's JSON-RPC one.
func TestCardRESTInterface(t *testing.T) {
	cs := NewCardServer(testCard(), nil, 5*time.Minute)
	r := httptest.NewRequest(http.MethodGet, "/.well-known/agent-card.json", nil)
	w := httptest.NewRecorder()
	cs.ServeCard(w, r, CardURLs{RPC: "https://a.example/a2a", REST: "https://a.example/a2a/rest", GRPC: "a.example:443"})
	body := w.Body.String()
	const want = `"supportedInterfaces":[{"url":"https://a.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"},` +
		`{"url":"https://a.example/a2a/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"},` +
		`{"url":"a.example:443","protocolBinding":"GRPC","protocolVersion":"1.0"},` +
		`{"url":"https://a.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"0.3"},` +
		`{"url":"https://a.example/a2a/rest","protocolBinding":"HTTP+JSON","protocolVersion":"0.3"},` +
		`{"url":"a.example:443","protocolBinding":"GRPC","protocolVersion":"0.3"}]`
	if !strings.Contains(body, want) {
		t.Fatalf("card:\n%s\nwant %s", body, want)
	}
	// The 0.3 members: JSON-RPC preferred, every 0.3 interface listed.
	if !strings.Contains(body, `"url":"https://a.example/a2a","preferredTransport":"JSONRPC","additionalInterfaces":[{"url":"https://a.example/a2a","transport":"JSONRPC"},{"url":"https://a.example/a2a/rest","transport":"HTTP+JSON"},{"url":"a.example:443","transport":"GRPC"}]`) {
		t.Fatalf("the 0.3 members:\n%s", body)
	}
	// Another pair of URLs is another document, cached apart.
	w2 := httptest.NewRecorder()
	cs.ServeCard(w2, r, CardURLs{RPC: "https://a.example/a2a"})
	if strings.Contains(w2.Body.String(), "HTTP+JSON") {
		t.Fatal("the card without an HTTP+JSON URL lists one")
	}
}

// A signed card is signed when it is rendered, not per request: its cache
// hit allocates nothing either, and the sign function ran once per
// variant (hybrid and 1.0) for the one URL set.
func TestSignedCardHitAllocs(t *testing.T) {
	cs := NewCardServer(testCard(), nil, time.Minute)
	signed := 0
	cs.SignWith(func(doc []byte, _ CardURLs) ([]byte, error) {
		signed++
		out := append([]byte{}, doc[:len(doc)-1]...)
		return append(out, `,"signatures":[{"protected":"e30","signature":"c2ln"}]}`...), nil
	})
	requireCardHitAllocsFree(t, cs)
	if signed != 2 {
		t.Fatalf("signed %d renderings, want 2 (hybrid and 1.0, once each)", signed)
	}
	rec := serveCard(cs, http.MethodGet, "https://a/", map[string]string{"A2A-Version": "1.0"})
	if !strings.HasSuffix(strings.TrimSpace(rec.Body.String()), `"signatures":[{"protected":"e30","signature":"c2ln"}]}`) {
		t.Fatalf("signed card body %s", rec.Body)
	}
}

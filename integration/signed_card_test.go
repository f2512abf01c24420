package integration

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/signing"
)

// The signed card and its URLs (Decision 21): with sign_card, every URL
// a signature vouches for comes from the config, never from the request
// that fetched the card.

// signedURL is the url the signed-card tests configure: another host and
// port than the ones the test reaches Caddy on.
const signedURL = "https://agent.example.com:8443/a2a"

// signCardNoURL is the refusal of a sign_card without url, word for word.
const signCardNoURL = "sign_card: url is required: without it the card's URLs come from each request's Host header, a caller's choice, and the card would sign them; set url to the agent's public JSON-RPC URL"

// attackerHost is the Host (and forwarded host) the tests' requests name.
const attackerHost = "attacker.example:4444"

// fromAttacker makes a request name attackerHost in every header a card's
// URLs could be taken from without url: Host, and X-Forwarded-Host and
// -Proto from a peer that trusted_proxies covers.
func fromAttacker(r *http.Request) {
	r.Host = attackerHost
	r.Header.Set("X-Forwarded-Host", attackerHost)
	r.Header.Set("X-Forwarded-Proto", "http")
}

// cardURLs collects every string of a card document that names a place: a
// member named url, jku or *Url, at any depth, and the jku of each
// signature's protected header, which it verifies against keys.
func cardURLs(t *testing.T, what string, doc []byte, keys []jose.JSONWebKey) []string {
	t.Helper()
	if err := signing.VerifyCard(doc, keys...); err != nil {
		t.Fatalf("%s does not verify: %v\n%s", what, err, doc)
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	var urls []string
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				walk(k, x)
			}
		case []any:
			for _, x := range v {
				walk(key, x)
			}
		case string:
			switch {
			case key == "protected":
				hdr, err := base64.RawURLEncoding.DecodeString(v)
				if err != nil {
					t.Fatalf("%s: protected header %q: %v", what, v, err)
				}
				var h struct {
					JKU string `json:"jku"`
				}
				if err := json.Unmarshal(hdr, &h); err != nil {
					t.Fatalf("%s: protected header %s: %v", what, hdr, err)
				}
				urls = append(urls, "jku "+h.JKU)
			case key == "url" || strings.HasSuffix(key, "Url"):
				urls = append(urls, key+" "+v)
			}
		}
	}
	walk("", v)
	slices.Sort(urls)
	if strings.Contains(string(doc), "attacker") {
		t.Errorf("%s names the request's host: %s", what, doc)
	}
	return urls
}

// The URLs of the signed cards of a mount serving both versions over
// JSON-RPC, HTTP+JSON and gRPC at signedURL: the 1.0 document lists each
// interface in each version; the hybrid and 0.3 documents add 0.3's url
// and additionalInterfaces (whose members are named url too).
var (
	signed10URLs = []string{
		"jku https://agent.example.com:8443/.well-known/jwks.json",
		"url agent.example.com:8443", "url agent.example.com:8443",
		"url https://agent.example.com:8443/a2a", "url https://agent.example.com:8443/a2a",
		"url https://agent.example.com:8443/a2a/rest", "url https://agent.example.com:8443/a2a/rest",
	}
	signedHybridURLs = []string{
		"jku https://agent.example.com:8443/.well-known/jwks.json",
		"url agent.example.com:8443", "url agent.example.com:8443", "url agent.example.com:8443",
		"url https://agent.example.com:8443/a2a", "url https://agent.example.com:8443/a2a",
		"url https://agent.example.com:8443/a2a", "url https://agent.example.com:8443/a2a",
		"url https://agent.example.com:8443/a2a/rest", "url https://agent.example.com:8443/a2a/rest",
		"url https://agent.example.com:8443/a2a/rest",
	}
)

// TestSignedCardURLsFromConfig: with sign_card and url, a request naming
// another Host and port (and, from a trusted proxy, other forwarded ones)
// changes no URL of any signed card: the public card in each rendering,
// the extended card over JSON-RPC (both versions), HTTP+JSON and gRPC.
// Every interface URL and the jku are the configured url's, and each
// card verifies against the served JWKS. Without url, sign_card is refused
// at load, in a Caddyfile and a JSON config alike, naming url.
func TestSignedCardURLsFromConfig(t *testing.T) {
	a := textAgent(t)
	loadGlobal(t, "servers {\n\t\tprotocols h1 h2 h2c\n\t\ttrusted_proxies static 127.0.0.1/8\n\t}", minimal(
		"url "+signedURL, "grpc on", "rest_path /a2a/rest", "owner {http.request.header.X-Caller}",
		"security_scheme key apikey header X-Caller", "security key"+securedExtendedCard,
		"sign_card {{.Key}}"), map[string]any{"Agent": a.URL(), "Key": cardKey(t)})

	_, body := get(t, "GET", base+"/.well-known/jwks.json", fromAttacker)
	var jwks jose.JSONWebKeySet
	if err := json.Unmarshal(body, &jwks); err != nil || len(jwks.Keys) != 1 {
		t.Fatalf("JWKS %s: %v", body, err)
	}
	want := func(what string, doc []byte, urls []string) {
		t.Helper()
		if got := cardURLs(t, what, doc, jwks.Keys); !slices.Equal(got, urls) {
			t.Errorf("%s URLs:\n  got  %q\n  want %q", what, got, urls)
		}
	}

	for _, tt := range []struct {
		version string
		urls    []string
	}{
		{"1.0", signed10URLs},
		{"", signedHybridURLs},
		{"0.3", signedHybridURLs},
	} {
		resp, doc := get(t, "GET", base+"/.well-known/agent-card.json", fromAttacker, withHeader("A2A-Version", tt.version))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("card %q: %d %s", tt.version, resp.StatusCode, doc)
		}
		want("card "+tt.version, doc, tt.urls)
		// The same for every client: a shared cache may keep it.
		if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=300" {
			t.Errorf("card %q Cache-Control %q", tt.version, cc)
		}
	}

	dave := withHeader("X-Caller", "dave")
	var ext json.RawMessage
	call(t, base+"/a2a", "1.0", "GetExtendedAgentCard", map[string]any{}, dave, fromAttacker).ok(t, &ext)
	want("JSON-RPC 1.0 extended card", ext, signed10URLs)
	call(t, base+"/a2a", "0.3", "agent/getAuthenticatedExtendedCard", nil, dave, fromAttacker).ok(t, &ext)
	want("JSON-RPC 0.3 extended card", ext, signedHybridURLs)
	r := restDo(t, "GET", restURL+"/extendedAgentCard", "", dave, fromAttacker)
	r.ok(t, nil)
	want("HTTP+JSON extended card", r.Body, signed10URLs)

	conn, err := grpc.NewClient(strings.TrimPrefix(base, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithAuthority(attackerHost))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	pc, err := a2apb.NewA2AServiceClient(conn).GetExtendedAgentCard(grpcCtx(t, "x-caller", "dave"), &a2apb.GetExtendedAgentCardRequest{})
	if err != nil {
		t.Fatal(err)
	}
	pcJSON, err := protojson.Marshal(pc)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(pcJSON), "attacker") {
		t.Errorf("gRPC extended card names the request's authority: %s", pcJSON)
	}
	var grpcURLs []string
	for _, i := range pc.GetSupportedInterfaces() {
		grpcURLs = append(grpcURLs, "url "+i.GetUrl())
	}
	slices.Sort(grpcURLs)
	if !slices.Equal(grpcURLs, signed10URLs[1:]) || len(pc.GetSignatures()) != 1 {
		t.Errorf("gRPC extended card interfaces %q (want %q), %d signatures", grpcURLs, signed10URLs[1:], len(pc.GetSignatures()))
	}

	// Without url the card's URLs would be the request's: refused.
	noURL := strings.ReplaceAll(minimal("sign_card /etc/caddy/card.pem"), "{{.Agent}}", a.URL())
	if e := loadError(t, noURL); !strings.Contains(e, signCardNoURL+", at Caddyfile:") {
		t.Errorf("Caddyfile without url:\n  got  %s\n  want %s", e, signCardNoURL)
	}
	jsonCfg := `{"admin":{"listen":"localhost:9099"},"apps":{"http":{"servers":{"s":{"listen":[":9080"],"routes":[{"handle":[{
		"handler":"a2a","upstream":{"url":"` + a.URL() + `"},"name":"n","description":"d",
		"skills":[{"id":"s","name":"s","description":"d","tags":["t"]}],
		"sign_card":{"key":"` + cardKey(t) + `","jku":"https://agent.example.com/.well-known/jwks.json"}}]}]}}}}}`
	if e := loadErrorAs(t, "application/json", jsonCfg); !strings.Contains(e, signCardNoURL) {
		t.Errorf("JSON config without url:\n  got  %s\n  want %s", e, signCardNoURL)
	}
}

// TestSignedGatewayCardURLsFromConfig: a gateway's signed card lists the
// mount's interfaces at url, never the agent's own URLs nor the request's
// host; without url a gateway's sign_card is refused like any other.
func TestSignedGatewayCardURLsFromConfig(t *testing.T) {
	p := startPeer(t, protocol.V10, false)
	key := cardKey(t)
	loadGateway(t, p, "url "+signedURL+"\n\t\trest_path /a2a/rest\n\t\tdocumentation_url https://docs.example.com/agent\n\t\tsign_card "+key)
	var doc []byte
	for range 200 {
		var resp *http.Response
		if resp, doc = get(t, "GET", base+"/.well-known/agent-card.json", fromAttacker, withHeader("A2A-Version", "1.0")); resp.StatusCode == http.StatusOK {
			break
		}
		waitBriefly()
	}
	_, body := get(t, "GET", base+"/.well-known/jwks.json")
	var jwks jose.JSONWebKeySet
	if err := json.Unmarshal(body, &jwks); err != nil || len(jwks.Keys) != 1 {
		t.Fatalf("JWKS %s: %v", body, err)
	}
	got := cardURLs(t, "gateway card", doc, jwks.Keys)
	// The agent's provider (https://peers.example) is left out; the
	// config's documentation_url is kept.
	wantURLs := []string{
		"documentationUrl https://docs.example.com/agent",
		"jku https://agent.example.com:8443/.well-known/jwks.json",
		"url https://agent.example.com:8443/a2a", "url https://agent.example.com:8443/a2a",
		"url https://agent.example.com:8443/a2a/rest", "url https://agent.example.com:8443/a2a/rest",
	}
	if !slices.Equal(got, wantURLs) {
		t.Errorf("gateway card URLs:\n  got  %q\n  want %q\n%s", got, wantURLs, doc)
	}
	if strings.Contains(string(doc), strings.TrimPrefix(p.URL(), "http://")) || strings.Contains(string(doc), "provider") {
		t.Errorf("the gateway's signed card names the agent's address or provider: %s", doc)
	}

	noURL := strings.NewReplacer("{{.Peer}}", p.URL(), "{{.Extra}}", "sign_card "+key).Replace(gatewayMount)
	if e := loadError(t, noURL); !strings.Contains(e, signCardNoURL+", at Caddyfile:") {
		t.Errorf("gateway without url:\n  got  %s\n  want %s", e, signCardNoURL)
	}
}

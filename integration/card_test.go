package integration

import (
	"encoding/json"
	"net/http"
	"testing"
)

// cardDoc is the part of a card document the tests look at.
type cardDoc struct {
	Name                string `json:"name"`
	Description         string `json:"description"`
	ProtocolVersion     string `json:"protocolVersion"`
	URL                 string `json:"url"`
	PreferredTransport  string `json:"preferredTransport"`
	SupportedInterfaces []struct {
		URL             string `json:"url"`
		ProtocolBinding string `json:"protocolBinding"`
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"supportedInterfaces"`
	Capabilities struct {
		Streaming         *bool `json:"streaming"`
		PushNotifications *bool `json:"pushNotifications"`
	} `json:"capabilities"`
	Skills []struct {
		ID   string   `json:"id"`
		Tags []string `json:"tags"`
	} `json:"skills"`
}

func fetchCard(t *testing.T, url string, opts ...reqOpt) (*http.Response, cardDoc) {
	t.Helper()
	resp, body := get(t, "GET", url, opts...)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	var c cardDoc
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatalf("card: %v\n%s", err, body)
	}
	return resp, c
}

func TestCard(t *testing.T) {
	a := textAgent(t)
	load(t, minimal("card_max_age 2m"), map[string]any{"Agent": a.URL()})
	cardURL := base + "/.well-known/agent-card.json"

	// Without a version header: the hybrid card, 1.0 interface first, plus
	// the 0.3 fields pointing at the same JSON-RPC URL.
	resp, hybrid := fetchCard(t, cardURL)
	if hybrid.Name != "Test agent" || len(hybrid.Skills) != 1 || hybrid.Skills[0].ID != "echo" {
		t.Errorf("card content: %+v", hybrid)
	}
	if hybrid.URL != base+"/a2a" || hybrid.PreferredTransport != "JSONRPC" || hybrid.ProtocolVersion == "" {
		t.Errorf("hybrid 0.3 fields: url=%q transport=%q protocolVersion=%q", hybrid.URL, hybrid.PreferredTransport, hybrid.ProtocolVersion)
	}
	if len(hybrid.SupportedInterfaces) != 2 ||
		hybrid.SupportedInterfaces[0].ProtocolVersion != "1.0" || hybrid.SupportedInterfaces[1].ProtocolVersion != "0.3" {
		t.Fatalf("supportedInterfaces: %+v", hybrid.SupportedInterfaces)
	}
	for _, in := range hybrid.SupportedInterfaces {
		if in.URL != base+"/a2a" || in.ProtocolBinding != "JSONRPC" {
			t.Errorf("interface %+v", in)
		}
	}
	if c := hybrid.Capabilities; c.Streaming == nil || !*c.Streaming || (c.PushNotifications != nil && *c.PushNotifications) {
		t.Errorf("capabilities: streaming=%v push=%v, want streaming only", c.Streaming, c.PushNotifications)
	}
	// No url is configured: the card's URLs come from the request's Host,
	// so no shared cache may keep it for other clients.
	if got := resp.Header.Get("Cache-Control"); got != "private, max-age=120" {
		t.Errorf("Cache-Control = %q", got)
	}
	if got := resp.Header.Get("Vary"); got != "A2A-Version" {
		t.Errorf("Vary = %q", got)
	}
	hybridTag := resp.Header.Get("ETag")
	if len(hybridTag) < 3 || hybridTag[0] != '"' {
		t.Fatalf("ETag = %q, want a strong tag", hybridTag)
	}

	// A2A-Version 0.3 gets the hybrid document too (0.3 clients read its
	// 0.3 fields); patch versions are ignored.
	resp03, _ := fetchCard(t, cardURL, withHeader("A2A-Version", "0.3"))
	if resp03.Header.Get("ETag") != hybridTag {
		t.Errorf("0.3 card ETag %q differs from the hybrid's %q", resp03.Header.Get("ETag"), hybridTag)
	}

	// A2A-Version 1.0 (any 1.x patch): the pure 1.0 card, without the 0.3
	// fields, under its own ETag.
	resp10, v10 := fetchCard(t, cardURL, withHeader("A2A-Version", "1.0.2"))
	if v10.URL != "" || v10.ProtocolVersion != "" || v10.PreferredTransport != "" {
		t.Errorf("1.0 card carries 0.3 fields: %+v", v10)
	}
	if len(v10.SupportedInterfaces) != 2 {
		t.Errorf("1.0 supportedInterfaces: %+v", v10.SupportedInterfaces)
	}
	tag10 := resp10.Header.Get("ETag")
	if tag10 == "" || tag10 == hybridTag {
		t.Errorf("1.0 ETag %q must differ from hybrid %q", tag10, hybridTag)
	}

	// Conditional requests per variant.
	if resp, body := get(t, "GET", cardURL, withHeader("If-None-Match", hybridTag)); resp.StatusCode != 304 || len(body) != 0 {
		t.Errorf("If-None-Match hybrid: %d %q", resp.StatusCode, body)
	}
	if resp, _ := get(t, "GET", cardURL, withHeader("If-None-Match", hybridTag), withHeader("A2A-Version", "1.0")); resp.StatusCode != 200 {
		t.Errorf("hybrid ETag revalidated the 1.0 variant: %d", resp.StatusCode)
	}
	if resp, _ := get(t, "GET", cardURL, withHeader("If-None-Match", `"x", `+tag10), withHeader("A2A-Version", "1.0")); resp.StatusCode != 304 {
		t.Errorf("If-None-Match list with the 1.0 tag: %d", resp.StatusCode)
	}

	// HEAD: the same headers, no body.
	head, body := get(t, "HEAD", cardURL)
	if head.StatusCode != 200 || len(body) != 0 || head.Header.Get("ETag") != hybridTag ||
		head.Header.Get("Content-Type") != "application/json" {
		t.Errorf("HEAD: %d etag=%q ct=%q body=%q", head.StatusCode, head.Header.Get("ETag"), head.Header.Get("Content-Type"), body)
	}

	// Other methods: 405 with Allow, rendered by Caddy.
	resp = rawPost(t, cardURL, "application/json", nil)
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD, OPTIONS" {
		t.Errorf("POST card: %d Allow=%q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

// TestCardURL checks where the card says the JSON-RPC endpoint is: from
// config, from the request, from a trusted proxy's forwarded headers only,
// and under a handle_path prefix.
func TestCardURL(t *testing.T) {
	a := textAgent(t)
	load(t, `
http://:9080 {
	handle_path /agent/* {
		a2a {
			upstream {{.Agent}}
			rpc_path /`+skillBlock+`
		}
	}
	a2a {
		upstream {{.Agent}}
		rpc_path /rpc`+skillBlock+`
	}
}
http://:9081 {
	a2a {
		upstream {{.Agent}}
		url https://agents.example.com/a2a`+skillBlock+`
	}
}
`, map[string]any{"Agent": a.URL()})

	tests := []struct {
		name string
		url  string
		opts []reqOpt
		want string
	}{
		{name: "from the request", url: base + "/.well-known/agent-card.json", want: base + "/rpc"},
		{name: "Host header", url: base + "/.well-known/agent-card.json", opts: []reqOpt{func(r *http.Request) { r.Host = "agents.test:9080" }}, want: "http://agents.test:9080/rpc"},
		{
			name: "forwarded headers of an untrusted peer ignored", url: base + "/.well-known/agent-card.json",
			opts: []reqOpt{withHeader("X-Forwarded-Proto", "https"), withHeader("X-Forwarded-Host", "evil.example")},
			want: base + "/rpc",
		},
		{name: "handle_path prefix", url: base + "/agent/.well-known/agent-card.json", want: base + "/agent/"},
		{name: "configured url", url: base2 + "/.well-known/agent-card.json", want: "https://agents.example.com/a2a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c := fetchCard(t, tt.url, tt.opts...)
			if c.URL != tt.want || len(c.SupportedInterfaces) == 0 || c.SupportedInterfaces[0].URL != tt.want {
				t.Errorf("card url = %q (interfaces %+v), want %q", c.URL, c.SupportedInterfaces, tt.want)
			}
		})
	}

	// The prefixed mount answers JSON-RPC on the URL its card names.
	task := send10(t, base+"/agent/", msg10("prefix", "", ""))
	if task.Status.State != "TASK_STATE_COMPLETED" {
		t.Errorf("send via prefixed mount: %+v", task)
	}
}

// TestCardURLTrustedProxy: with trusted_proxies covering the client, the
// forwarded scheme and host are used.
func TestCardURLTrustedProxy(t *testing.T) {
	a := textAgent(t)
	loadGlobal(t, `servers {
		trusted_proxies static 127.0.0.1/8
	}`, minimal(), map[string]any{"Agent": a.URL()})
	_, c := fetchCard(t, base+"/.well-known/agent-card.json",
		withHeader("X-Forwarded-Proto", "https"), withHeader("X-Forwarded-Host", "public.example"))
	if c.URL != "https://public.example/a2a" {
		t.Errorf("card url = %q, want https://public.example/a2a", c.URL)
	}
}

// TestCardCacheFollowsURL: a card whose URLs follow the client's Host
// (no url set) is private: a shared cache keyed on its own origin must not
// hand `Host: evil.example`'s card to everyone. With url set the card is
// the same for every client and public.
func TestCardCacheFollowsURL(t *testing.T) {
	a := textAgent(t)
	for _, c := range []struct {
		extra, cache, rpc string
	}{
		{"", "private, max-age=300", "http://evil.example/a2a"},
		{"url https://agent.example.com/a2a", "public, max-age=300", "https://agent.example.com/a2a"},
	} {
		load(t, minimal(c.extra), map[string]any{"Agent": a.URL()})
		resp, card := fetchCard(t, base+"/.well-known/agent-card.json", func(r *http.Request) { r.Host = "evil.example" })
		if got := resp.Header.Get("Cache-Control"); got != c.cache {
			t.Errorf("%q: Cache-Control %q, want %q", c.extra, got, c.cache)
		}
		if card.URL != c.rpc {
			t.Errorf("%q: card url %q, want %q", c.extra, card.URL, c.rpc)
		}
	}
}

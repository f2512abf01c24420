package integration

import (
	"fmt"
	"testing"

	"github.com/caddyserver/caddy/v2/caddytest"
)

// TestGlobalPlaceholders: the upstream URL, url and header_up values
// resolve global placeholders once at provision ({env.*}); the agent
// receives the headers on every call, and nothing a caller sends is
// expanded.
func TestGlobalPlaceholders(t *testing.T) {
	a := textAgent(t)
	t.Setenv("A2A_TEST_AGENT_TOKEN", "tok-123")
	t.Setenv("A2A_TEST_AGENT_URL", a.URL())
	t.Setenv("A2A_TEST_PUBLIC_URL", "https://public.example/a2a")
	load(t, `
http://:9080 {
	a2a {
		upstream {env.A2A_TEST_AGENT_URL} {
			header_up Authorization "Bearer {env.A2A_TEST_AGENT_TOKEN}"
			header_up X-Static plain
		}
		url {env.A2A_TEST_PUBLIC_URL}`+skillBlock+`
	}
}
`, nil)
	if _, card := fetchCard(t, base+"/.well-known/agent-card.json"); card.URL != "https://public.example/a2a" {
		t.Errorf("card url %q", card.URL)
	}
	// A caller cannot smuggle a placeholder into anything the agent sees.
	send10(t, base+"/a2a", msg10("{env.A2A_TEST_AGENT_TOKEN}", "", ""), withHeader("X-Static", "{env.HOME}"))
	c := a.next(t)
	if got := c.Header.Get("Authorization"); got != "Bearer tok-123" {
		t.Errorf("Authorization = %q", got)
	}
	if got := c.Header.Values("X-Static"); len(got) != 1 || got[0] != "plain" {
		t.Errorf("X-Static = %q", got)
	}
	if c.inputText() != "{env.A2A_TEST_AGENT_TOKEN}" {
		t.Errorf("input was expanded: %q", c.inputText())
	}
}

// TestJSONConfig: the module configured in Caddy's native JSON, with the
// field names the Caddyfile adapts to, including an explicit transport.
func TestJSONConfig(t *testing.T) {
	a := textAgent(t)
	cfg := fmt.Sprintf(`{
	"admin": {"listen": "localhost:%d", "config": {"persist": false}},
	"apps": {"http": {"servers": {"srv0": {
		"listen": [":9080"],
		"automatic_https": {"disable": true},
		"routes": [{"handle": [{
			"handler": "a2a",
			"upstream": {
				"url": %q,
				"timeout": "10s",
				"header_up": {"X-From": ["json"]},
				"transport": {"protocol": "http", "dial_timeout": "1s"}
			},
			"spec_version": ["1.0"],
			"rpc_path": "/rpc",
			"name": "JSON agent",
			"description": "Configured in JSON.",
			"skills": [{"id": "s", "name": "S", "description": "S.", "tags": ["t"]}],
			"store": {"type": "memory", "max_tasks": 10, "ttl": "1m"},
			"card_max_age": "30s"
		}]}]
	}}}}
}`, adminPort, a.URL())
	tc := caddytest.NewTester(t).WithDefaultOverrides(caddytest.Config{AdminPort: adminPort})
	tc.InitServer(cfg, "json")
	if t.Failed() {
		t.FailNow()
	}
	settle(t, cfg)
	resp, card := fetchCard(t, base+"/.well-known/agent-card.json")
	if card.Name != "JSON agent" || len(card.SupportedInterfaces) != 1 || card.SupportedInterfaces[0].URL != base+"/rpc" {
		t.Errorf("card: %+v", card)
	}
	if got := resp.Header.Get("Cache-Control"); got != "private, max-age=30" {
		t.Errorf("Cache-Control = %q", got)
	}
	task := send10(t, base+"/rpc", msg10("json", "", ""))
	if task.text() != "Hello, json" {
		t.Errorf("task text %q", task.text())
	}
	if c := a.next(t); c.Header.Get("X-From") != "json" || c.Header.Get("Accept-Encoding") != "" {
		t.Errorf("agent headers: X-From %q Accept-Encoding %q", c.Header.Get("X-From"), c.Header.Get("Accept-Encoding"))
	}
}

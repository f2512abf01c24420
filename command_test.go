package caddya2a

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

func TestParseSkillFlag(t *testing.T) {
	for in, want := range map[string]Skill{
		"search":                     {ID: "search", Name: "search", Description: "search", Tags: []string{"search"}},
		"search:Web search":          {ID: "search", Name: "Web search", Description: "Web search", Tags: []string{"search"}},
		"search:Search:Finds: pages": {ID: "search", Name: "Search", Description: "Finds: pages", Tags: []string{"search"}},
		" s ::Only a description":    {ID: "s", Name: "s", Description: "Only a description", Tags: []string{"s"}},
	} {
		got, err := parseSkillFlag(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("parseSkillFlag(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	if _, err := parseSkillFlag(":name"); err == nil {
		t.Error("a skill without an id was taken")
	}
}

// serveParts is what a test reads back of serveConfig's config.
type serveParts struct {
	listen    []string
	autoHTTPS string
	host      string
	handler   map[string]any
}

func readServeConfig(t *testing.T, cfg *caddy.Config) serveParts {
	t.Helper()
	var app struct {
		Servers map[string]struct {
			Listen    []string        `json:"listen"`
			AutoHTTPS json.RawMessage `json:"automatic_https"`
			Routes    []struct {
				Match  []map[string][]string `json:"match"`
				Handle []map[string]any      `json:"handle"`
			} `json:"routes"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(cfg.AppsRaw["http"], &app); err != nil {
		t.Fatal(err)
	}
	s := app.Servers["a2a"]
	p := serveParts{listen: s.Listen, autoHTTPS: string(s.AutoHTTPS), handler: s.Routes[0].Handle[0]}
	if len(s.Routes[0].Match) > 0 {
		p.host = strings.Join(s.Routes[0].Match[0]["host"], ",")
	}
	return p
}

func TestServeConfig(t *testing.T) {
	for _, c := range []struct {
		from, listen, autoHTTPS, host, card string
	}{
		{":8080", ":8080", `{"disable":true}`, "", "http://localhost:8080/.well-known/agent-card.json"},
		{"127.0.0.1:9000", ":9000", "", "127.0.0.1", "https://127.0.0.1:9000/.well-known/agent-card.json"},
		{"example.com", ":443", "", "example.com", "https://example.com/.well-known/agent-card.json"},
		{"http://example.com", ":80", `{"disable":true}`, "example.com", "http://example.com/.well-known/agent-card.json"},
		{"example.com:80", ":80", `{"disable":true}`, "example.com", "http://example.com/.well-known/agent-card.json"},
	} {
		cfg, urls, err := serveConfig(serveFlags{from: c.from, to: "http://agent.internal:9000/run", kind: "http"})
		if err != nil {
			t.Fatalf("--from %s: %v", c.from, err)
		}
		p := readServeConfig(t, cfg)
		if !reflect.DeepEqual(p.listen, []string{c.listen}) || p.autoHTTPS != c.autoHTTPS || p.host != c.host ||
			urls.card != c.card || urls.rpc != strings.TrimSuffix(c.card, "/.well-known/agent-card.json")+"/a2a" {
			t.Errorf("--from %s: listen %v, automatic_https %s, host %q, urls %+v", c.from, p.listen, p.autoHTTPS, p.host, urls)
		}
		if !cfg.Admin.Disabled {
			t.Errorf("--from %s: the admin endpoint is on", c.from)
		}
	}

	// The card it fills in (decision: name from the upstream's host, the
	// fixed description, one skill chat tagged general), and a config
	// Caddy provisions.
	cfg, _, err := serveConfig(serveFlags{from: ":8080", to: "http://agent.internal:9000/run", kind: "http"})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := json.Marshal(readServeConfig(t, cfg).handler)
	want := `{"description":"An agent served by caddy-a2a","handler":"a2a","name":"agent.internal",` +
		`"skills":[{"description":"Talk with the agent","id":"chat","name":"Chat","tags":["general"]}],` +
		`"upstream":{"kind":"http","url":"http://agent.internal:9000/run"}}`
	if string(h) != want {
		t.Errorf("handler\n%s\nwant\n%s", h, want)
	}
	if err := caddy.Validate(cfg); err != nil {
		t.Fatalf("the config does not provision: %v", err)
	}

	cfg, urls, _ := serveConfig(serveFlags{from: ":8080", to: "http://a/", kind: "http", inspector: true})
	if in := readServeConfig(t, cfg).handler["inspector"]; in == nil || urls.inspector != "http://localhost:8080/a2a/inspector" {
		t.Errorf("--inspector: %v, %q", in, urls.inspector)
	}

	// Flags win; a gateway's card fields default to its agent's card.
	cfg, _, _ = serveConfig(serveFlags{from: ":8080", to: "https://peer.example/", kind: "a2a", name: "Peer",
		skills: []string{"plan:Planner:Plans trips: by train"}})
	h, _ = json.Marshal(readServeConfig(t, cfg).handler)
	want = `{"handler":"a2a","name":"Peer","skills":[{"description":"Plans trips: by train","id":"plan","name":"Planner","tags":["plan"]}],` +
		`"upstream":{"kind":"a2a","url":"https://peer.example/"}}`
	if string(h) != want {
		t.Errorf("gateway handler\n%s\nwant\n%s", h, want)
	}
	t.Setenv("OPENAI_API_KEY", "sk-test")
	cfg, _, _ = serveConfig(serveFlags{from: ":8080", to: "http://127.0.0.1:11434/v1", kind: "openai", model: "llama3"})
	up, _ := json.Marshal(readServeConfig(t, cfg).handler["upstream"])
	if string(up) != `{"api_key":"{env.OPENAI_API_KEY}","kind":"openai","model":"llama3","url":"http://127.0.0.1:11434/v1"}` {
		t.Errorf("openai upstream %s", up)
	}

	for _, c := range []struct {
		f    serveFlags
		want string
	}{
		{serveFlags{from: ":8080", kind: "http"}, "--to is required"},
		{serveFlags{from: ":8080", to: "agent:9000", kind: "http"}, `--to "agent:9000": want the agent's http:// or https:// URL`},
		{serveFlags{from: ":8080", to: "http://a/", kind: "grpc"}, `--kind "grpc": want http, a2a or openai`},
		{serveFlags{from: ":8080", to: "http://a/", kind: "http", model: "m"}, "--model is for --kind openai"},
		{serveFlags{from: "example.com/a2a", to: "http://a/", kind: "http"}, `--from "example.com/a2a": paths are not allowed`},
		{serveFlags{from: ":8080", to: "http://a/", kind: "http", skills: []string{":x"}}, `--skill ":x": the id (before the first colon) is required`},
	} {
		if _, _, err := serveConfig(c.f); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %s", c.f, err, c.want)
		}
	}
}

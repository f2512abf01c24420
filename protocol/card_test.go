package protocol

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestHybridWithoutV03IsV10(t *testing.T) {
	c := fixtureCard()
	c.Interfaces = c.Interfaces[:1] // the 1.0 interface only
	h, v := RenderCard(&c, CardHybrid), RenderCard(&c, CardV10)
	if !bytes.Equal(h, v) {
		t.Fatalf("hybrid without 0.3 interface differs from 1.0:\n%s\n%s", h, v)
	}
	if bytes.Contains(h, []byte(`"protocolVersion":"0.3.0"`)) || bytes.Contains(h, []byte(`"url":"https://agent.example.com/a2a","preferredTransport"`)) {
		t.Fatalf("0.3 members leaked: %s", h)
	}
}

func TestCardV03FallsBackToAllInterfaces(t *testing.T) {
	c := fixtureCard()
	c.Interfaces = c.Interfaces[:1]
	var doc map[string]any
	if err := json.Unmarshal(RenderCard(&c, CardV03), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["url"] != "https://agent.example.com/a2a" || doc["preferredTransport"] != "JSONRPC" || doc["additionalInterfaces"] != nil {
		t.Fatalf("unexpected 0.3 fields %v", doc)
	}
	if _, ok := doc["supportedInterfaces"]; ok {
		t.Fatal("pure 0.3 card has supportedInterfaces")
	}
}

func TestRenderCardDeterministic(t *testing.T) {
	c := fixtureCard()
	for _, v := range []CardVariant{CardHybrid, CardV03, CardV10} {
		a := RenderCard(&c, v)
		for i := 0; i < 20; i++ {
			if !bytes.Equal(a, RenderCard(&c, v)) {
				t.Fatalf("variant %d renders differently", v)
			}
		}
		if got := appendCard([]byte("x"), &c, v); !bytes.Equal(got[1:], a) {
			t.Fatalf("appendCard differs")
		}
	}
}

func TestCardInterfaceDefaultsToJSONRPC(t *testing.T) {
	c := fixtureCard()
	c.Interfaces = []Interface{{URL: "https://a/x", Version: V10}}
	if out := RenderCard(&c, CardV10); !bytes.Contains(out, []byte(`{"url":"https://a/x","protocolBinding":"JSONRPC","protocolVersion":"1.0"}`)) {
		t.Fatalf("%s", out)
	}
}

func TestValidateCard(t *testing.T) {
	if err := ValidateCard(ptr(fixtureCard())); err != nil {
		t.Fatalf("fixture card invalid: %v", err)
	}
	if err := ValidateCard(nil); err == nil {
		t.Fatal("nil card accepted")
	}
	tests := []struct {
		name   string
		mutate func(c *AgentCard)
		want   string // substring of the error
	}{
		{"no name", func(c *AgentCard) { c.Name = " " }, "card: name: is required"},
		{"no description", func(c *AgentCard) { c.Description = "" }, "card: description: is required"},
		{"no version", func(c *AgentCard) { c.Version = "" }, "card: version: is required"},
		{"no skills", func(c *AgentCard) { c.Skills = nil }, "card: skills: at least one skill"},
		{"skill no id", func(c *AgentCard) { c.Skills[1].ID = "" }, "skills[1].id: is required"},
		{"skill dup id", func(c *AgentCard) { c.Skills[1].ID = "echo" }, `skills[1].id: "echo" is used`},
		{"skill no name", func(c *AgentCard) { c.Skills[0].Name = "" }, "skills[0].name: is required"},
		{"skill no description", func(c *AgentCard) { c.Skills[0].Description = "" }, "skills[0].description: is required"},
		{"skill no tags", func(c *AgentCard) { c.Skills[0].Tags = nil }, "skills[0].tags: at least one tag"},
		{"skill empty tag", func(c *AgentCard) { c.Skills[0].Tags = []string{"a", ""} }, "skills[0].tags[1]: is required"},
		{"skill bad mode", func(c *AgentCard) { c.Skills[0].OutputModes = []string{"text"} }, `skills[0].outputModes[0]: "text" is not a media type`},
		{"bad input mode", func(c *AgentCard) { c.DefaultInputModes = []string{"text/plain", "plain text"} }, "defaultInputModes[1]"},
		{"bad output mode", func(c *AgentCard) { c.DefaultOutputModes = []string{"/json"} }, "defaultOutputModes[0]"},
		{"provider no org", func(c *AgentCard) { c.Provider.Organization = "" }, "provider.organization: is required"},
		{"provider relative url", func(c *AgentCard) { c.Provider.URL = "/about" }, "provider.url"},
		{"provider no url", func(c *AgentCard) { c.Provider.URL = "" }, "provider.url: is required"},
		{"doc ftp", func(c *AgentCard) { c.DocumentationURL = "ftp://example.com/docs" }, "documentationUrl"},
		{"icon userinfo", func(c *AgentCard) { c.IconURL = "https://u:p@example.com/i.png" }, "iconUrl"},
		{"icon no host", func(c *AgentCard) { c.IconURL = "https:///i.png" }, "iconUrl"},
		{"interface relative", func(c *AgentCard) { c.Interfaces[1].URL = "a2a" }, "interfaces[1].url"},
		{"interface bad version", func(c *AgentCard) { c.Interfaces[0].Version = 0 }, "interfaces[0].version"},
		{"interface bad binding", func(c *AgentCard) { c.Interfaces[0].Binding = "SOAP" }, "interfaces[0].binding"},
		{"extension no uri", func(c *AgentCard) { c.Extensions[1].URI = "" }, "extensions[1].uri"},
		{"extension params array", func(c *AgentCard) { c.Extensions[0].Params = json.RawMessage(`[1]`) }, "extensions[0].params"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fixtureCard()
			c.Skills = append([]Skill(nil), c.Skills...)
			c.Interfaces = append([]Interface(nil), c.Interfaces...)
			c.Extensions = append([]Extension(nil), c.Extensions...)
			p := *c.Provider
			c.Provider = &p
			tt.mutate(&c)
			err := ValidateCard(&c)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
	// Reports every problem, not just the first.
	c := fixtureCard()
	c.Name, c.Version = "", ""
	if err := ValidateCard(&c); err == nil || !strings.Contains(err.Error(), "name") || !strings.Contains(err.Error(), "version") {
		t.Fatalf("got %v", err)
	}
	// What is allowed: no interfaces, no modes, custom URI binding, media
	// types with parameters and wildcards, provider absent.
	c = fixtureCard()
	c.Interfaces = []Interface{{URL: "http://127.0.0.1:8080/a2a", Binding: "https://bindings.example.com/ws", Version: V03}}
	c.DefaultInputModes = []string{"text/plain; charset=utf-8", "image/*"}
	c.DefaultOutputModes = nil
	c.Provider = nil
	c.DocumentationURL, c.IconURL = "", ""
	if err := ValidateCard(&c); err != nil {
		t.Fatalf("valid card rejected: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

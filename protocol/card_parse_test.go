package protocol

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func readCard(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "cards", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParseCardPublished reads cards shaped as the SDKs publish them.
func TestParseCardPublished(t *testing.T) {
	echoSkill := Skill{ID: "echo", Name: "Echo", Description: "Echoes the input", Tags: []string{"echo"}, Examples: []string{"hi"}}
	tests := []struct {
		file string
		want AgentCard
	}{
		{"a2a-go-v0.3.json", AgentCard{
			Name: "Echo", Description: "An agent that echoes", Version: "0.3.15",
			// The preferred interface is also listed in additionalInterfaces,
			// as 0.3 asks: it is kept once.
			Interfaces: []Interface{
				{URL: "http://127.0.0.1:9001/invoke", Binding: "JSONRPC", Version: V03},
				{URL: "127.0.0.1:9002", Binding: "GRPC", Version: V03},
			},
			Streaming: true, ExtendedCard: true,
			DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
			Skills: []Skill{echoSkill},
		}},
		{"a2a-go-v2.json", AgentCard{
			Name: "Echo", Description: "An agent that echoes", Version: "2.4.0",
			Provider:         &Provider{Organization: "Example", URL: "https://example.com"},
			DocumentationURL: "https://docs.example.com/echo",
			Interfaces: []Interface{
				{URL: "http://127.0.0.1:9001/invoke", Binding: "JSONRPC", Version: V10},
				{URL: "127.0.0.1:9002", Binding: "GRPC", Version: V10},
				{URL: "http://127.0.0.1:9001/v0", Binding: "JSONRPC", Version: V03},
			},
			Streaming: true, PushNotifications: true,
			Extensions: []Extension{{URI: "https://a2a.example.com/ext/timestamp/v1", Description: "Timestamps every message",
				Required: true, Params: json.RawMessage(`{"precision":"ms"}`)}},
			DefaultInputModes: []string{"text/plain", "application/json"}, DefaultOutputModes: []string{"text/plain"},
			Skills: []Skill{{ID: "echo", Name: "Echo", Description: "Echoes the input", Tags: []string{"echo", "test"},
				Examples: []string{"hi", "hello"}, InputModes: []string{"text/plain"}, OutputModes: []string{"text/plain"}}},
		}},
		{"a2a-js-1.x.json", AgentCard{
			Name: "Reverser", Description: "Reverses text", Version: "1.3.0",
			Provider: &Provider{Organization: "Example Org", URL: "https://example.org"},
			IconURL:  "https://example.org/icon.png",
			Interfaces: []Interface{
				{URL: "http://localhost:41241/a2a/jsonrpc", Binding: "JSONRPC", Version: V10, Tenant: "acme"},
				{URL: "http://localhost:41241/a2a/rest", Binding: "HTTP+JSON", Version: V10},
			},
			Streaming:          true,
			Extensions:         []Extension{{URI: "urn:example:ext"}},
			DefaultInputModes:  []string{"text/plain"},
			DefaultOutputModes: []string{"text/plain", "application/json"},
			Skills: []Skill{{ID: "reverse", Name: "Reverse", Description: "Reverses the text you send", Tags: []string{"text"},
				Examples: []string{"reverse hello"}, InputModes: []string{"text/plain"}, OutputModes: []string{"text/plain"}}},
		}},
	}
	for _, tt := range tests {
		got, err := ParseCard(readCard(t, tt.file))
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if !reflect.DeepEqual(*got, tt.want) {
			t.Errorf("%s:\n got %s\nwant %s", tt.file, dump(*got), dump(tt.want))
		}
	}
}

// TestParseCardRendered reads back what RenderCard writes, in every
// variant: the 1.0 and hybrid documents give the card itself; the 0.3 one
// its 0.3 interfaces.
func TestParseCardRendered(t *testing.T) {
	card := fixtureCard()
	card.Interfaces[0].Tenant = "t-1"
	for _, v := range []CardVariant{CardHybrid, CardV10, CardV03} {
		want := card
		if v == CardV03 {
			want.Interfaces = card.Interfaces[1:]
		}
		got, err := ParseCard(RenderCard(&card, v))
		if err != nil {
			t.Fatalf("variant %d: %v", v, err)
		}
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("variant %d:\n got %s\nwant %s", v, dump(*got), dump(want))
		}
	}
}

// TestParseCardBad: a card the module cannot use is -32006 naming each
// field that is wrong, by the card's own member names.
func TestParseCardBad(t *testing.T) {
	v2 := string(readCard(t, "a2a-go-v2.json"))
	v03 := string(readCard(t, "a2a-go-v0.3.json"))
	tests := []struct {
		name, card, field string
	}{
		{"not json", `{"name":`, "card"},
		{"array", `[]`, "card"},
		{"null", `null`, "card"},
		{"too deep", strings.Repeat(`{"a":`, DefaultMaxDepth+1) + `1` + strings.Repeat(`}`, DefaultMaxDepth+1), "card"},
		{"name type", strings.Replace(v2, `"name":"Echo"`, `"name":7`, 1), "name"},
		{"tags type", strings.Replace(v2, `"tags":["echo","test"]`, `"tags":"echo"`, 1), "skills.tags"},
		{"no name", strings.Replace(v2, `"name":"Echo",`, ``, 1), "name"},
		{"no version", strings.Replace(v2, `"version":"2.4.0"`, `"version":""`, 1), "version"},
		{"no skills", strings.Replace(v03, `"skills"`, `"skillz"`, 1), "skills"},
		{"skill no tags", strings.Replace(v2, `"tags":["echo","test"]`, `"tags":[]`, 1), "skills[0].tags"},
		{"bad mode", strings.Replace(v2, `"defaultOutputModes":["text/plain"]`, `"defaultOutputModes":["text"]`, 1), "defaultOutputModes[0]"},
		{"extension params", strings.Replace(v2, `{"precision":"ms"}`, `[1]`, 1), "extensions[0].params"},
		{"interface relative", strings.Replace(v2, `"url":"http://127.0.0.1:9001/invoke"`, `"url":"/invoke"`, 1), "supportedInterfaces[0].url"},
		{"interface user info", strings.Replace(v2, `"url":"http://127.0.0.1:9001/v0"`, `"url":"http://u:p@127.0.0.1:9001/v0"`, 1), "supportedInterfaces[2].url"},
		{"interface binding", strings.Replace(v2, `"protocolBinding":"GRPC"`, `"protocolBinding":"SOAP"`, 1), "supportedInterfaces[1].protocolBinding"},
		{"grpc no url", strings.Replace(v2, `"url":"127.0.0.1:9002"`, `"url":""`, 1), "supportedInterfaces[1].url"},
		{"interface no version", strings.Replace(v2, `,"protocolVersion":"0.3"`, ``, 1), "supportedInterfaces[2].protocolVersion"},
		{"tenant too long", strings.Replace(v2, `"protocolBinding":"GRPC"`, `"protocolBinding":"GRPC","tenant":"`+strings.Repeat("t", 257)+`"`, 1), "supportedInterfaces[1].tenant"},
		{"only unknown versions", `{"name":"n","description":"d","version":"1","supportedInterfaces":[{"url":"http://a/x","protocolBinding":"JSONRPC","protocolVersion":"2.0"}],"skills":[{"id":"s","name":"s","description":"d","tags":["t"]}]}`, "supportedInterfaces"},
		{"0.3 no url", strings.Replace(v03, `"url": "http://127.0.0.1:9001/invoke",`, ``, 1), "url"},
		{"0.3 relative url", strings.Replace(v03, `"url": "http://127.0.0.1:9001/invoke",`, `"url": "invoke",`, 1), "url"},
		{"0.3 old version", strings.Replace(v03, `"0.3.0"`, `"0.2.5"`, 1), "protocolVersion"},
		{"0.3 transport", strings.Replace(v03, `"preferredTransport": "JSONRPC"`, `"preferredTransport": "SOAP"`, 1), "preferredTransport"},
		{"0.3 additional url", strings.Replace(v03, `"127.0.0.1:9002"`, `""`, 1), "additionalInterfaces[1].url"},
	}
	for _, tt := range tests {
		got, err := ParseCard([]byte(tt.card))
		if got != nil {
			t.Errorf("%s: card with error", tt.name)
		}
		e := wantAgentError(t, tt.name, err, tt.field)
		if !strings.HasPrefix(e.Message, "Invalid agent card: ") {
			t.Errorf("%s: message %q", tt.name, e.Message)
		}
	}
	// Every problem is reported, not just the first.
	_, err := ParseCard([]byte(strings.Replace(strings.Replace(v2, `"name":"Echo",`, ``, 1), `"version":"2.4.0"`, `"version":""`, 1)))
	if e := wantAgentError(t, "several", err, "name"); len(e.Violations) != 2 || e.Violations[1].Field != "version" {
		t.Errorf("violations %+v", e.Violations)
	}
}

package caddya2a_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
)

// validate loads a JSON config the way `caddy validate` does: every
// module provisioned and validated, nothing started.
func validate(cfgJSON []byte) error {
	var cfg caddy.Config
	if err := json.Unmarshal(cfgJSON, &cfg); err != nil {
		return err
	}
	return caddy.Validate(&cfg)
}

// handlerConfig is a whole JSON config serving the a2a handler of the
// members handler.
func handlerConfig(handler string) []byte {
	return []byte(`{"apps":{"http":{"servers":{"srv0":{"listen":[":8080"],"routes":[{"handle":[{"handler":"a2a",` +
		strings.TrimPrefix(strings.TrimSpace(handler), "{") + `]}]}}}}}`)
}

// TestBothConfigPaths: the same bad value, written in a Caddyfile and in
// a JSON config, fails `caddy validate` with the same error. Each
// testdata/config_paths/*.txt holds a Caddyfile, a line of dashes, the
// JSON members of the same a2a handler, another line of dashes and a
// fragment of the error. The Caddyfile adapts (its parser only parses);
// both configs then fail the handler's checks, and what the a2a handler
// says (Caddy's error after "http.handlers.a2a", without the routes
// leading to it, which differ) is the same text.
func TestBothConfigPaths(t *testing.T) {
	files, err := filepath.Glob("testdata/config_paths/*.txt")
	if err != nil || len(files) < 20 {
		t.Fatalf("%d both-paths goldens: %v", len(files), err)
	}
	adapter := caddyconfig.GetAdapter("caddyfile")
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			parts := strings.Split(string(data), "\n----------\n")
			if len(parts) != 3 {
				t.Fatalf("want a Caddyfile, the JSON handler and the error, separated by ----------; got %d parts", len(parts))
			}
			caddyfile, handler, want := strings.TrimSpace(parts[0])+"\n", parts[1], strings.TrimSpace(parts[2])

			adapted, _, err := adapter.Adapt([]byte(caddyfile), nil)
			if err != nil {
				t.Fatalf("the Caddyfile does not adapt (a syntax error belongs in the adapt goldens): %v", err)
			}
			fromCaddyfile := validate(adapted)
			fromJSON := validate(handlerConfig(handler))
			for path, err := range map[string]error{"Caddyfile": fromCaddyfile, "JSON": fromJSON} {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("%s config: error %v, want one containing %q", path, err, want)
				}
			}
			if fromCaddyfile == nil || fromJSON == nil {
				return
			}
			if a, b := a2aSays(fromCaddyfile), a2aSays(fromJSON); a != b {
				t.Errorf("the two paths differ:\n  Caddyfile: %s\n  JSON:      %s", a, b)
			}
		})
	}
}

// a2aSays is what the a2a handler contributes to a config error: the text
// after Caddy names its module.
func a2aSays(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, "http.handlers.a2a"); i >= 0 {
		return s[i:]
	}
	return s
}

// TestREADMEJSONExample: the README's JSON handler with both modules
// written out loads (`caddy validate`), and the same handler without
// "kind" and "type" loads as well.
func TestREADMEJSONExample(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "## JSON config: `store` and `upstream` modules")
	_, block, ok2 := strings.Cut(section, "```json\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("no JSON example in the README's module section")
	}
	var h map[string]any
	if err := json.Unmarshal([]byte(block), &h); err != nil {
		t.Fatalf("the README's example: %v", err)
	}
	delete(h, "handler")
	for _, unnamed := range []bool{false, true} {
		if unnamed {
			delete(h["upstream"].(map[string]any), "kind")
			delete(h["store"].(map[string]any), "type")
		}
		members, _ := json.Marshal(h)
		if err := validate(handlerConfig(string(members))); err != nil {
			t.Errorf("unnamed modules %v: %v", unnamed, err)
		}
	}
}

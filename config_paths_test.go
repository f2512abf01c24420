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
// a JSON config, gets the same message, the Caddyfile's with the file and
// line of its block. Each testdata/config_paths/*.txt holds a Caddyfile, a
// line of dashes, the JSON members of the same a2a handler, another line
// of dashes, a fragment of the message, and a last line of dashes and the
// place the Caddyfile's error names (Caddyfile:<line>). The Caddyfile
// fails to adapt, its parser running the checks of Validate on what it
// read, with the message and ", at <place>"; the JSON config fails
// `caddy validate` (Provision and Validate) with the same message at the
// end of Caddy's chain of module names.
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
			if len(parts) != 4 {
				t.Fatalf("want a Caddyfile, the JSON handler, the error and its place, separated by ----------; got %d parts", len(parts))
			}
			caddyfile, handler := strings.TrimSpace(parts[0])+"\n", parts[1]
			want, place := strings.TrimSpace(parts[2]), strings.TrimSpace(parts[3])

			_, _, fromCaddyfile := adapter.Adapt([]byte(caddyfile), nil)
			fromJSON := validate(handlerConfig(handler))
			for path, err := range map[string]error{"Caddyfile": fromCaddyfile, "JSON": fromJSON} {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("%s config: error %v, want one containing %q", path, err, want)
				}
			}
			if fromCaddyfile == nil || fromJSON == nil {
				return
			}
			msg, ok := strings.CutSuffix(fromCaddyfile.Error(), ", at "+place)
			if !ok {
				t.Errorf("the Caddyfile's error does not end with \", at %s\": %v", place, fromCaddyfile)
			}
			msg = strings.TrimPrefix(msg, "parsing caddyfile tokens for 'a2a': ")
			if json := fromJSON.Error(); !strings.HasSuffix(json, ": "+msg) {
				t.Errorf("the two paths differ:\n  Caddyfile: %s\n  JSON:      %s", msg, a2aSays(fromJSON))
			}
			if strings.Contains(fromJSON.Error(), "Caddyfile:") {
				t.Errorf("the JSON config's error names a Caddyfile line: %v", fromJSON)
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

// TestREADMEJSONExample: docs/json-config.md's JSON handler with both modules
// written out loads (`caddy validate`), and the same handler without
// "kind" and "type" loads as well.
func TestREADMEJSONExample(t *testing.T) {
	b, err := os.ReadFile("docs/json-config.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "# JSON config: `store` and `upstream` modules")
	_, block, ok2 := strings.Cut(section, "```json\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("no JSON example in docs/json-config.md")
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

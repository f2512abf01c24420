package caddya2a_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddytest"

	caddya2a "github.com/caddy-a2a/caddy-a2a"
)

var update = flag.Bool("update", false, "rewrite the JSON half of the adapt goldens")

// TestCaddyfileAdapt adapts every testdata/caddyfile_adapt/*.caddyfiletest
// (a Caddyfile, a line of dashes, then the expected JSON or the expected
// error text) the way Caddy's own adapt tests do. An expected error is
// the parser's, with the line it names, or, for a value the parser lets
// through, that of `caddy validate` on the adapted config (the values the
// JSON config's checks judge: see TestBothConfigPaths).
func TestCaddyfileAdapt(t *testing.T) {
	files, err := filepath.Glob("testdata/caddyfile_adapt/*.caddyfiletest")
	if err != nil || len(files) == 0 {
		t.Fatalf("no adapt tests: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			caddyfile, expected, ok := strings.Cut(string(data), "----------")
			if !ok {
				t.Fatal("no ---------- separator")
			}
			caddyfile = strings.TrimSpace(caddyfile) + "\n"
			expected = strings.TrimSpace(expected)

			adapter := caddyconfig.GetAdapter("caddyfile")
			out, _, adaptErr := adapter.Adapt([]byte(caddyfile), nil)

			if strings.HasPrefix(expected, "{") {
				if adaptErr != nil {
					t.Fatalf("adapt: %v", adaptErr)
				}
				if *update {
					var pretty bytes.Buffer
					if err := json.Indent(&pretty, out, "", "\t"); err != nil {
						t.Fatal(err)
					}
					golden := caddyfile + "----------\n" + pretty.String() + "\n"
					if err := os.WriteFile(file, []byte(golden), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				if !caddytest.CompareAdapt(t, file, caddyfile, "caddyfile", expected) {
					t.Errorf("adapted JSON differs from %s (rerun with -update to inspect)", file)
				}
				return
			}

			if adaptErr == nil {
				adaptErr = validate(out)
			}
			if adaptErr == nil {
				t.Fatalf("expected an error containing %q, adapt and validate succeeded", expected)
			}
			if !strings.Contains(adaptErr.Error(), expected) {
				t.Errorf("error\n  %s\ndoes not contain\n  %s", adaptErr, expected)
			}
		})
	}
}

// TestSubdirectiveListsMatchParser: every subdirective a typo is compared
// with is one the parser reads (it may fail for its arguments, never as
// unknown), so no suggestion names a subdirective that does not exist.
func TestSubdirectiveListsMatchParser(t *testing.T) {
	adapter := caddyconfig.GetAdapter("caddyfile")
	for block, keys := range map[string][]string{
		"%s":                                   caddya2a.A2AKeysForTest,
		"skill s {\n%s\n}":                     caddya2a.SkillKeysForTest,
		"extension urn:x {\n%s\n}":             caddya2a.ExtensionKeysForTest,
		"cors {\n%s\n}":                        caddya2a.CORSKeysForTest,
		"store memory {\n%s\n}":                caddya2a.StoreKeysForTest,
		"store file {\n%s\n}":                  caddya2a.FileStoreKeysForTest,
		"store postgres pg {\n%s\n}":           caddya2a.PostgresKeysForTest,
		"upstream http://127.0.0.1:9 {\n%s\n}": caddya2a.UpstreamKeysForTest,
		"extended_card {\n%s\n}":               caddya2a.ExtendedCardKeysForTest,
		"sign_card k.pem {\n%s\n}":             caddya2a.SignCardKeysForTest,
	} {
		for _, k := range keys {
			cfg := ":8080 {\n\ta2a {\n" + strings.ReplaceAll(fmt.Sprintf(block, k), "\n", "\n\t\t") + "\n\t}\n}\n"
			_, _, err := adapter.Adapt([]byte(cfg), nil)
			if err != nil && strings.Contains(err.Error(), "unknown ") {
				t.Errorf("%q in %q: %v", k, block, err)
			}
		}
	}
}

package caddya2a_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// The examples use mholt/caddy-ratelimit, a plugin cmd/caddy is built with
// but this package is not: a stand-in directive that takes its block lets
// them adapt here, so the test proves what it is about (formatting keeps
// every block whole); the examples package loads them with cmd/caddy.
func init() {
	httpcaddyfile.RegisterHandlerDirective("rate_limit", func(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
		for h.Next() {
			for nesting := h.Nesting(); h.NextBlock(nesting); {
			}
		}
		return new(caddyhttp.StaticResponse), nil
	})
}

// fencedCaddyfile finds the ```caddyfile blocks of a Markdown page.
var fencedCaddyfile = regexp.MustCompile("(?s)```caddyfile\n(.*?)```")

// TestCaddyfilesAreFormatted: every Caddyfile the project shows a user
// (Caddyfile.example, the examples of the README and of every page under
// docs/, the adapt
// goldens) is exactly what `caddy fmt` prints, and still adapts as before
// once formatted. Caddy warns about an unformatted Caddyfile at every
// start, and a user who then runs `caddy fmt --overwrite` must not get a
// file that no longer loads.
func TestCaddyfilesAreFormatted(t *testing.T) {
	type doc struct {
		name, src string
		// wantErr: the goldens that expect an error fail to adapt or
		// to validate instead.
		wantErr bool
	}
	var docs []doc
	example, err := os.ReadFile("Caddyfile.example")
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, doc{name: "Caddyfile.example", src: string(example)})
	docPages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range append([]string{"README.md"}, docPages...) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range fencedCaddyfile.FindAllSubmatch(b, -1) {
			docs = append(docs, doc{name: page + " block " + string(rune('1'+i)), src: string(m[1])})
		}
	}
	goldens, _ := filepath.Glob("testdata/caddyfile_adapt/*.caddyfiletest")
	for _, file := range goldens {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		src, expected, _ := strings.Cut(string(b), "----------")
		docs = append(docs, doc{name: file, src: strings.TrimSpace(src) + "\n", wantErr: !strings.HasPrefix(strings.TrimSpace(expected), "{")})
	}
	if len(docs) < 10 {
		t.Fatalf("found only %d Caddyfiles", len(docs))
	}
	adapter := caddyconfig.GetAdapter("caddyfile")
	for _, d := range docs {
		formatted := caddyfile.Format([]byte(d.src))
		if !bytes.Equal(formatted, []byte(d.src)) {
			t.Errorf("%s is not what caddy fmt prints:\n%s", d.name, formatted)
			continue
		}
		out, _, err := adapter.Adapt(formatted, nil)
		if err == nil && d.wantErr {
			err = validate(out)
		}
		// A page's fragment ("# … as above") leaves out settings shown
		// before it: the parser's check of what is missing is expected.
		if err != nil && !d.wantErr && strings.Contains(d.src, "# …") && strings.Contains(err.Error(), " is required") {
			err = nil
		}
		if (err != nil) != d.wantErr {
			t.Errorf("%s adapts with error %v", d.name, err)
		}
	}
}

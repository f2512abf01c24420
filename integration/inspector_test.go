package integration

import (
	"strings"
	"testing"
)

// TestInspectorThroughCaddy: the page is off unless configured; with
// inspector, it is served with its security headers at its path, under a
// handle_path prefix the URLs it names keep the prefix, and its problems
// list is the card check's.
func TestInspectorThroughCaddy(t *testing.T) {
	a := textAgent(t)
	load(t, minimal(), map[string]any{"Agent": a.URL()})
	if resp, body := get(t, "GET", base+"/a2a/inspector"); resp.Header.Get("Content-Security-Policy") != "" || strings.Contains(string(body), "inspector") {
		t.Fatalf("the page is served without inspector: %d %q", resp.StatusCode, body)
	}

	load(t, `http://:9080 {
	handle_path /agents/one/* {
		a2a {
			upstream {{.Agent}}`+skillBlock+`
			inspector
		}
	}
}
`, map[string]any{"Agent": a.URL()})
	resp, body := get(t, "GET", base+"/agents/one/a2a/inspector")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" ||
		resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Cache-Control") != "no-store" ||
		!strings.HasPrefix(resp.Header.Get("Content-Security-Policy"), "default-src 'none'; script-src 'self';") {
		t.Fatalf("page: %d %v", resp.StatusCode, resp.Header)
	}
	for _, want := range []string{`content="/agents/one/.well-known/agent-card.json"`, `content="/agents/one/a2a"`,
		`<script src="/agents/one/a2a/inspector/inspector.js" defer></script>`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if resp, js := get(t, "GET", base+"/agents/one/a2a/inspector/inspector.js"); resp.StatusCode != 200 || !strings.Contains(string(js), "SendStreamingMessage") {
		t.Errorf("script: %d", resp.StatusCode)
	}
	if resp, p := get(t, "GET", base+"/agents/one/a2a/inspector/problems"); resp.StatusCode != 200 || string(p) != `{"hybrid":[],"v10":[]}` {
		t.Errorf("problems: %d %s", resp.StatusCode, p)
	}
	if resp, _ := get(t, "POST", base+"/agents/one/a2a/inspector"); resp.StatusCode != 405 {
		t.Errorf("POST on the page: %d", resp.StatusCode)
	}
	// The RPC endpoint beside it is untouched.
	if task := send10(t, base+"/agents/one/a2a", msg10("hi", "", "")); task.text() != "Hello, hi" {
		t.Errorf("the endpoint answers %q", task.text())
	}
}

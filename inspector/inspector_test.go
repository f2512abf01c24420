package inspector

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

func newTest(t *testing.T, cards func(*http.Request) ([]byte, []byte, error)) *Inspector {
	t.Helper()
	in, err := New(Config{Path: "/a2a/inspector", CardPath: "/.well-known/agent-card.json", RPCPath: "/a2a",
		Prefix: func(r *http.Request) string { return r.Header.Get("X-Test-Prefix") }, Cards: cards})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func get(in *Inspector, method, path string, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	in.ServeHTTP(w, r)
	return w
}

func TestOwns(t *testing.T) {
	in := newTest(t, nil)
	for path, want := range map[string]bool{
		"/a2a/inspector": true, "/a2a/inspector/inspector.js": true, "/a2a/inspector/inspector.css": true,
		"/a2a/inspector/problems": true, "/a2a/inspector/": false, "/a2a/inspector/x": false, "/a2a": false,
		"/a2a/inspectorx": false,
	} {
		if got := in.Owns(path); got != want {
			t.Errorf("Owns(%q) = %v", path, got)
		}
	}
}

// TestAnswers: every answer carries the security headers; the page names
// the URLs the script uses (with a stripped prefix put back), and refers
// to no other origin.
func TestAnswers(t *testing.T) {
	in := newTest(t, func(*http.Request) ([]byte, []byte, error) {
		return []byte(`{"name":"x"}`), []byte(`{"name":"x"}`), nil
	})
	for _, c := range []struct{ path, ctype string }{
		{"/a2a/inspector", "text/html; charset=utf-8"},
		{"/a2a/inspector/inspector.js", "text/javascript; charset=utf-8"},
		{"/a2a/inspector/inspector.css", "text/css; charset=utf-8"},
		{"/a2a/inspector/problems", "application/json"},
	} {
		w := get(in, "GET", c.path)
		if w.Code != 200 || w.Header().Get("Content-Type") != c.ctype || w.Header().Get("Content-Length") != strconv.Itoa(w.Body.Len()) {
			t.Errorf("%s: %d %q length %s of %d", c.path, w.Code, w.Header().Get("Content-Type"), w.Header().Get("Content-Length"), w.Body.Len())
		}
		for k, v := range securityHeaders {
			if got := w.Header().Get(k); got != v {
				t.Errorf("%s: %s %q, want %q", c.path, k, got, v)
			}
		}
		if h := get(in, "HEAD", c.path); h.Code != 200 || h.Body.Len() != 0 || h.Header().Get("Content-Length") != w.Header().Get("Content-Length") {
			t.Errorf("HEAD %s: %d, %d bytes, length %s", c.path, h.Code, h.Body.Len(), h.Header().Get("Content-Length"))
		}
	}
	if w := get(in, "POST", "/a2a/inspector"); w.Code != 405 || w.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d, Allow %q", w.Code, w.Header().Get("Allow"))
	}

	page := get(in, "GET", "/a2a/inspector", "X-Test-Prefix", "/agents/one").Body.String()
	for _, want := range []string{
		`<meta name="a2a-card" content="/agents/one/.well-known/agent-card.json">`,
		`<meta name="a2a-rpc" content="/agents/one/a2a">`,
		`<meta name="a2a-problems" content="/agents/one/a2a/inspector/problems">`,
		`<link rel="stylesheet" href="/agents/one/a2a/inspector/inspector.css">`,
		`<script src="/agents/one/a2a/inspector/inspector.js" defer></script>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	// No inline script, nothing from another origin.
	if strings.Count(page, "<script") != 1 || strings.Contains(page, "http://") || strings.Contains(page, "https://") || strings.Contains(page, "//cdn") {
		t.Errorf("the page refers to scripts or origins it must not:\n%s", page)
	}
	if js := get(in, "GET", "/a2a/inspector/inspector.js").Body.String(); strings.Contains(js, "innerHTML") || strings.Contains(js, "eval(") {
		t.Error("the script writes HTML or evaluates strings")
	}
}

func TestProblems(t *testing.T) {
	in := newTest(t, func(*http.Request) ([]byte, []byte, error) {
		return []byte(`{"name":"n","description":"d","version":"1","protocolVersion":"0.3.0","url":"http://h/a2a","capabilities":{},` +
				`"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]}`),
			[]byte(`{"name":"n"}`), nil
	})
	w := get(in, "GET", "/a2a/inspector/problems")
	want := `{"hybrid":[],"v10":["card: has neither supportedInterfaces (1.0) nor url and protocolVersion (0.3)",` +
		`"description: is required","version: is required","capabilities: is required","defaultInputModes: is required",` +
		`"defaultOutputModes: is required","skills: is required","url: is required (or supportedInterfaces)"]}`
	if w.Code != 200 || w.Body.String() != want {
		t.Errorf("problems %d:\n%s\nwant\n%s", w.Code, w.Body.String(), want)
	}
	down := newTest(t, func(*http.Request) ([]byte, []byte, error) {
		return nil, nil, errors.New("the agent's card is not known yet")
	})
	if w := get(down, "GET", "/a2a/inspector/problems"); w.Code != 503 || !strings.Contains(w.Body.String(), "not known yet") {
		t.Errorf("without a card: %d %s", w.Code, w.Body.String())
	}
}

// TestProblemsSecuredCard: a gated mount's cards, with the security
// members as the module renders them (1.0's requirements in strict
// ProtoJSON, which a2a-go alone cannot read), have no problems.
func TestProblemsSecuredCard(t *testing.T) {
	const common = `"name":"n","description":"d","version":"1","capabilities":{},` +
		`"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"s","name":"S","description":"d","tags":["t"]}],` +
		`"supportedInterfaces":[{"url":"http://h/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"},{"url":"http://h/a2a","protocolBinding":"JSONRPC","protocolVersion":"0.3"}],`
	in := newTest(t, func(*http.Request) ([]byte, []byte, error) {
		return []byte(`{` + common + `"protocolVersion":"0.3.0","url":"http://h/a2a","preferredTransport":"JSONRPC",` +
				`"securitySchemes":{"users":{"type":"http","scheme":"Basic","httpAuthSecurityScheme":{"scheme":"Basic"}}},` +
				`"securityRequirements":[{"schemes":{"users":{}}}],"security":[{"users":[]}]}`),
			[]byte(`{` + common + `"securitySchemes":{"users":{"httpAuthSecurityScheme":{"scheme":"Basic"}}},"securityRequirements":[{"schemes":{"users":{}}}]}`), nil
	})
	if w := get(in, "GET", "/a2a/inspector/problems"); w.Code != 200 || w.Body.String() != `{"hybrid":[],"v10":[]}` {
		t.Errorf("problems %d:\n%s", w.Code, w.Body.String())
	}
}

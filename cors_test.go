package caddya2a

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestCheckOrigin(t *testing.T) {
	for origin, want := range map[string]string{
		"https://app.example.com":       "",
		"http://localhost:5173":         "",
		"http://127.0.0.1:8080":         "",
		"http://[::1]:8080":             "",
		"https://xn--bcher-kva.example": "",
		"chrome-extension://abcdefgh":   "",
		"https://app.example.com/":      "no path",
		"https://app.example.com/x":     "no path",
		"https://app.example.com?":      "no path",
		"https://app.example.com#":      "no path",
		"https://App.Example.com":       "browsers send it as https://app.example.com",
		"HTTPS://app.example.com":       "browsers send it as https://app.example.com",
		"https://app.example.com:443":   "browsers send it as https://app.example.com (lower case, no default port)",
		"http://app.example.com:80":     "browsers send it as http://app.example.com",
		"http://[0:0::1]:8080":          "browsers send it as http://[::1]:8080",
		"https://app.example.com:":      "empty port",
		"https://app.example.com:99999": "bad port",
		"https://*.example.com":         "without credentials or wildcards",
		"https://u:p@app.example.com":   "without credentials or wildcards",
		"https://{env.APP}":             "want scheme://host[:port]",
		"app.example.com":               "want scheme://host[:port]",
		"//app.example.com":             "want scheme://host[:port]",
		"mailto:x@example.com":          "want scheme://host[:port]",
		"https://bücher.example":        "xn-- form",
		"null":                          `origin "null"`,
	} {
		err := checkOrigin(origin)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v, want accepted", origin, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want an error containing %q", origin, err, want)
		}
	}
}

// TestCORSCheck: the default and the checks of JSON and Caddyfile
// configs.
func TestCORSCheck(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cors    CORS
		wantErr string
		maxAge  time.Duration
	}{
		{name: "defaults", cors: CORS{Origins: []string{"https://a.example"}}, maxAge: 10 * time.Minute},
		{name: "max_age kept", cors: CORS{Origins: []string{"https://a.example"}, MaxAge: caddy.Duration(time.Hour)}, maxAge: time.Hour},
		{name: "credentials with origins", cors: CORS{Origins: []string{"https://a.example", "https://b.example"}, Credentials: true}, maxAge: 10 * time.Minute},
		{name: "any origin", cors: CORS{Origins: []string{"*"}}, maxAge: 10 * time.Minute},
		{name: "credentials with any origin", cors: CORS{Origins: []string{"*"}, Credentials: true},
			wantErr: "cors: credentials on cannot be used with origins *"},
		{name: "any among others", cors: CORS{Origins: []string{"https://a.example", "*"}}, wantErr: "must stand alone"},
		{name: "no origins", cors: CORS{}, wantErr: "cors: origins is required"},
		{name: "twice", cors: CORS{Origins: []string{"https://a.example", "https://a.example"}}, wantErr: "listed twice"},
		{name: "bad origin", cors: CORS{Origins: []string{"https://a.example/"}}, wantErr: "no path"},
		{name: "negative max_age", cors: CORS{Origins: []string{"https://a.example"}, MaxAge: -1}, wantErr: "max_age must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cors
			c.fill()
			err := c.check()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if time.Duration(c.MaxAge) != tc.maxAge {
				t.Errorf("max_age %v, want %v", time.Duration(c.MaxAge), tc.maxAge)
			}
		})
	}
}

// TestValidateRefusesCredentialsWithAnyOrigin: `caddy validate` of a
// JSON config (the Caddyfile's own refusal is a golden file) fails on
// credentials with *, naming it.
func TestValidateRefusesCredentialsWithAnyOrigin(t *testing.T) {
	cfg := func(cors string) *caddy.Config {
		raw := `{"admin":{"disabled":true},"apps":{"http":{"servers":{"s":{"listen":["127.0.0.1:0"],"routes":[{"handle":[{
			"handler":"a2a","upstream":{"url":"http://127.0.0.1:9"},"name":"N","description":"D",
			"skills":[{"id":"s","name":"S","description":"D","tags":["t"]}],
			"cors":` + cors + `}]}]}}}}}`
		var c caddy.Config
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			t.Fatal(err)
		}
		return &c
	}
	err := caddy.Validate(cfg(`{"origins":["*"],"credentials":true}`))
	if err == nil || !strings.Contains(err.Error(), "cors: credentials on cannot be used with origins *") {
		t.Errorf("validate: %v, want the credentials refusal", err)
	}
	if err := caddy.Validate(cfg(`{"origins":["https://app.example"],"credentials":true}`)); err != nil {
		t.Errorf("validate of listed origins with credentials: %v", err)
	}
}

// Origins of the table tests.
const (
	self   = "http://agent.test"
	listed = "https://app.example"
	other  = "https://evil.example"
)

// preflight is an OPTIONS request from origin asking for POST with
// headers.
func preflight(origin, headers string) *http.Request {
	r := httptest.NewRequest(http.MethodOptions, self+"/a2a", nil)
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	r.Header.Set("Access-Control-Request-Method", "POST")
	if headers != "" {
		r.Header.Set("Access-Control-Request-Headers", headers)
	}
	return r
}

// corsHeaders are the headers the browser rules may write, compared
// exactly ("" = absent).
var corsHeaders = []string{
	"Access-Control-Allow-Origin", "Access-Control-Allow-Credentials", "Access-Control-Allow-Methods",
	"Access-Control-Allow-Headers", "Access-Control-Max-Age", "Access-Control-Expose-Headers", "Vary", "Allow",
}

func checkHeaders(t *testing.T, got http.Header, want map[string]string) {
	t.Helper()
	for _, k := range corsHeaders {
		if g := strings.Join(got.Values(k), ", "); g != want[k] {
			t.Errorf("%s = %q, want %q", k, g, want[k])
		}
	}
}

func mustPolicy(t *testing.T, c *CORS) *browserPolicy {
	t.Helper()
	if c != nil {
		c.fill()
		if err := c.check(); err != nil {
			t.Fatal(err)
		}
	}
	p, err := newBrowserPolicy(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRPCPreflight: every header of the OPTIONS answers on the RPC path.
func TestRPCPreflight(t *testing.T) {
	const (
		allowHeaders = "Content-Type, Authorization, A2A-Version, A2A-Extensions, X-A2A-Extensions, Last-Event-ID"
		allow        = "POST, OPTIONS"
	)
	origins := &CORS{Origins: []string{listed, "http://localhost:5173"}}
	withCreds := &CORS{Origins: []string{listed}, Credentials: true, MaxAge: caddy.Duration(90 * time.Second)}
	anyOrigin := &CORS{Origins: []string{"*"}}
	for _, tc := range []struct {
		name string
		cors *CORS
		req  *http.Request
		want map[string]string
	}{
		{name: "listed origin", cors: origins, req: preflight(listed, "content-type,a2a-version"), want: map[string]string{
			"Access-Control-Allow-Origin":  listed,
			"Access-Control-Allow-Methods": "POST",
			"Access-Control-Allow-Headers": allowHeaders,
			"Access-Control-Max-Age":       "600",
			"Vary":                         "Origin",
			"Allow":                        allow,
		}},
		// A requested header A2A does not use is not echoed: the fixed
		// list is the answer, and the browser refuses the call.
		{name: "listed origin, other header", cors: origins, req: preflight(listed, "x-custom"), want: map[string]string{
			"Access-Control-Allow-Origin":  listed,
			"Access-Control-Allow-Methods": "POST",
			"Access-Control-Allow-Headers": allowHeaders,
			"Access-Control-Max-Age":       "600",
			"Vary":                         "Origin",
			"Allow":                        allow,
		}},
		{name: "credentials", cors: withCreds, req: preflight(listed, "content-type"), want: map[string]string{
			"Access-Control-Allow-Origin":      listed,
			"Access-Control-Allow-Credentials": "true",
			"Access-Control-Allow-Methods":     "POST",
			"Access-Control-Allow-Headers":     allowHeaders,
			"Access-Control-Max-Age":           "90",
			"Vary":                             "Origin",
			"Allow":                            allow,
		}},
		{name: "any origin", cors: anyOrigin, req: preflight(other, "content-type"), want: map[string]string{
			"Access-Control-Allow-Origin":  "*",
			"Access-Control-Allow-Methods": "POST",
			"Access-Control-Allow-Headers": allowHeaders,
			"Access-Control-Max-Age":       "600",
			"Allow":                        allow,
		}},
		{name: "unlisted origin", cors: origins, req: preflight(other, "content-type"), want: map[string]string{
			"Vary": "Origin", "Allow": allow,
		}},
		{name: "listed origin's case differs", cors: origins, req: preflight("https://APP.example", "content-type"), want: map[string]string{
			"Vary": "Origin", "Allow": allow,
		}},
		{name: "no cors block", cors: nil, req: preflight(listed, "content-type"), want: map[string]string{
			"Allow": allow,
		}},
		{name: "OPTIONS that is no preflight", cors: origins, req: func() *http.Request {
			r := httptest.NewRequest(http.MethodOptions, self+"/a2a", nil)
			r.Header.Set("Origin", listed)
			return r
		}(), want: map[string]string{"Vary": "Origin", "Allow": allow}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustPolicy(t, tc.cors)
			w := httptest.NewRecorder()
			if !p.gateRPC(w, tc.req, zap.NewNop()) {
				t.Fatal("an OPTIONS was not answered")
			}
			if w.Code != http.StatusNoContent || w.Body.Len() != 0 {
				t.Errorf("answer %d %q, want 204 and no body", w.Code, w.Body)
			}
			checkHeaders(t, w.Header(), tc.want)
		})
	}
}

// TestRPCCrossOrigin: which state-changing requests the cross-origin
// protection refuses, and the CORS headers of those it lets through.
func TestRPCCrossOrigin(t *testing.T) {
	const expose = "A2A-Version, A2A-Extensions, X-A2A-Extensions, Retry-After"
	origins := &CORS{Origins: []string{listed}}
	creds := &CORS{Origins: []string{listed}, Credentials: true}
	anyOrigin := &CORS{Origins: []string{"*"}}
	type hdr = map[string]string
	for _, tc := range []struct {
		name    string
		cors    *CORS
		method  string
		headers hdr
		refused bool
		// simple: refused as a request the browser did not preflight
		// (simpleRequestRefusal, want's headers kept).
		simple bool
		want   hdr
	}{
		{name: "no browser headers (curl, SDKs)", headers: hdr{}},
		{name: "no browser headers, cors", cors: origins, headers: hdr{}, want: hdr{"Vary": "Origin"}},
		{name: "same-origin", headers: hdr{"Sec-Fetch-Site": "same-origin", "Origin": self}},
		{name: "user-initiated (none)", headers: hdr{"Sec-Fetch-Site": "none"}},
		{name: "cross-site", headers: hdr{"Sec-Fetch-Site": "cross-site", "Origin": other}, refused: true},
		{name: "same-site", headers: hdr{"Sec-Fetch-Site": "same-site", "Origin": "http://www.agent.test"}, refused: true},
		{name: "cross-site without Origin", headers: hdr{"Sec-Fetch-Site": "cross-site"}, refused: true},
		{name: "cross-site, unlisted", cors: origins, headers: hdr{"Sec-Fetch-Site": "cross-site", "Origin": other},
			refused: true, want: hdr{"Vary": "Origin"}},
		{name: "cross-site, listed", cors: origins, headers: hdr{"Sec-Fetch-Site": "cross-site", "Origin": listed},
			want: hdr{"Access-Control-Allow-Origin": listed, "Access-Control-Expose-Headers": expose, "Vary": "Origin"}},
		{name: "same-site, listed", cors: &CORS{Origins: []string{"http://www.agent.test"}},
			headers: hdr{"Sec-Fetch-Site": "same-site", "Origin": "http://www.agent.test"},
			want:    hdr{"Access-Control-Allow-Origin": "http://www.agent.test", "Access-Control-Expose-Headers": expose, "Vary": "Origin"}},
		{name: "cross-site, listed, credentials", cors: creds, headers: hdr{"Sec-Fetch-Site": "cross-site", "Origin": listed},
			want: hdr{"Access-Control-Allow-Origin": listed, "Access-Control-Allow-Credentials": "true",
				"Access-Control-Expose-Headers": expose, "Vary": "Origin"}},
		{name: "cross-site, any origin", cors: anyOrigin, headers: hdr{"Sec-Fetch-Site": "cross-site", "Origin": other},
			want: hdr{"Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": expose}},
		{name: "any origin, no browser headers", cors: anyOrigin, headers: hdr{},
			want: hdr{"Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": expose}},
		// Without Sec-Fetch-Site (older browsers; Chromium sends it only
		// to https and localhost URLs) Origin is compared with Host: the
		// host and port, not the scheme.
		{name: "old browser, Origin is Host", headers: hdr{"Origin": self}},
		{name: "old browser, Origin is Host on another scheme", headers: hdr{"Origin": "https://agent.test"}},
		{name: "old browser, other port", headers: hdr{"Origin": "http://agent.test:8080"}, refused: true},
		{name: "old browser, other host", headers: hdr{"Origin": other}, refused: true},
		// X-Forwarded-Host is not consulted: behind a proxy that rewrites
		// Host, list the public origin.
		{name: "old browser behind a Host-rewriting proxy", headers: hdr{"Origin": "https://public.example",
			"X-Forwarded-Host": "public.example"}, refused: true},
		{name: "old browser behind a proxy, origin listed", cors: &CORS{Origins: []string{"https://public.example"}},
			headers: hdr{"Origin": "https://public.example", "X-Forwarded-Host": "public.example"},
			want:    hdr{"Access-Control-Allow-Origin": "https://public.example", "Access-Control-Expose-Headers": expose, "Vary": "Origin"}},
		// An allowed origin's request must be one the browser preflights:
		// a JSON Content-Type, or a method other than POST.
		{name: "cross-site, listed, text/plain", cors: origins, headers: hdr{"Sec-Fetch-Site": "cross-site", "Origin": listed, "Content-Type": "text/plain"},
			refused: true, simple: true, want: hdr{"Access-Control-Allow-Origin": listed, "Access-Control-Expose-Headers": expose, "Vary": "Origin"}},
		{name: "cross-site, listed, no Content-Type", cors: creds, headers: hdr{"Sec-Fetch-Site": "cross-site", "Origin": listed, "Content-Type": ""},
			refused: true, simple: true, want: hdr{"Access-Control-Allow-Origin": listed, "Access-Control-Allow-Credentials": "true", "Access-Control-Expose-Headers": expose, "Vary": "Origin"}},
		{name: "cross-site, any origin, no Content-Type", cors: anyOrigin, headers: hdr{"Sec-Fetch-Site": "cross-site", "Origin": other, "Content-Type": ""},
			refused: true, simple: true, want: hdr{"Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": expose}},
		{name: "cross-site, any origin, form", cors: anyOrigin, headers: hdr{"Sec-Fetch-Site": "cross-site", "Origin": other,
			"Content-Type": "Application/X-WWW-Form-Urlencoded ; charset=utf-8"}, refused: true, simple: true, want: hdr{"Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": expose}},
		{name: "cross-site, any origin, multipart", cors: anyOrigin, headers: hdr{"Sec-Fetch-Site": "cross-site", "Origin": other,
			"Content-Type": "multipart/form-data; boundary=x"}, refused: true, simple: true, want: hdr{"Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": expose}},
		{name: "old browser, any origin, text/plain", cors: anyOrigin, headers: hdr{"Origin": other, "Content-Type": "text/plain"},
			refused: true, simple: true, want: hdr{"Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": expose}},
		{name: "cross-site without Origin, any origin, no Content-Type", cors: anyOrigin, headers: hdr{"Sec-Fetch-Site": "cross-site", "Content-Type": ""},
			refused: true, simple: true, want: hdr{"Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": expose}},
		{name: "cross-site, any origin, a2a+json", cors: anyOrigin, headers: hdr{"Sec-Fetch-Site": "cross-site", "Origin": other, "Content-Type": "application/a2a+json"},
			want: hdr{"Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": expose}},
		{name: "DELETE cross-site, listed, no Content-Type", cors: origins, method: http.MethodDelete,
			headers: hdr{"Sec-Fetch-Site": "cross-site", "Origin": listed, "Content-Type": ""},
			want:    hdr{"Access-Control-Allow-Origin": listed, "Access-Control-Expose-Headers": expose, "Vary": "Origin"}},
		{name: "no browser headers, any origin, no Content-Type", cors: anyOrigin, headers: hdr{"Content-Type": ""},
			want: hdr{"Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": expose}},
		{name: "same-origin, any origin, no Content-Type", cors: anyOrigin, headers: hdr{"Sec-Fetch-Site": "same-origin", "Origin": self, "Content-Type": ""},
			want: hdr{"Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": expose}},
		{name: "PUT cross-site", method: http.MethodPut, headers: hdr{"Sec-Fetch-Site": "cross-site", "Origin": other}, refused: true},
		// Safe methods pass (and get 405 from the envelope).
		{name: "GET cross-site", method: http.MethodGet, headers: hdr{"Sec-Fetch-Site": "cross-site", "Origin": other}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustPolicy(t, tc.cors)
			method := tc.method
			if method == "" {
				method = http.MethodPost
			}
			r := httptest.NewRequest(method, self+"/a2a", strings.NewReader(`{}`))
			r.Header.Set("Content-Type", "application/json")
			for k, v := range tc.headers {
				if v == "" {
					r.Header.Del(k)
					continue
				}
				r.Header.Set(k, v)
			}
			core, logs := observer.New(zapcore.InfoLevel)
			w := httptest.NewRecorder()
			answered := p.gateRPC(w, r, zap.New(core))
			if answered != tc.refused {
				t.Fatalf("answered = %v, want %v (%d %q)", answered, tc.refused, w.Code, w.Body)
			}
			want := tc.want
			if tc.refused {
				msg := crossOriginRefusal
				if tc.simple {
					msg = simpleRequestRefusal
				}
				if w.Code != http.StatusForbidden || w.Body.String() != msg+"\n" {
					t.Errorf("refusal %d %q, want 403 and one line", w.Code, w.Body)
				}
				if !tc.simple {
					want = map[string]string{"Vary": tc.want["Vary"]}
				}
				entries := logs.All()
				if len(entries) != 1 || entries[0].Message != "a2a: cross-origin request refused (403)" ||
					entries[0].ContextMap()["origin"] != tc.headers["Origin"] ||
					entries[0].ContextMap()["sec_fetch_site"] != tc.headers["Sec-Fetch-Site"] {
					t.Errorf("log: %+v, want one refusal naming origin and Sec-Fetch-Site", entries)
				}
			} else if logs.Len() != 0 {
				t.Errorf("a request let through was logged: %+v", logs.All())
			}
			checkHeaders(t, w.Header(), want)
		})
	}
}

// TestVaryKeepsEarlierValues: an earlier handler's Vary stays, and a
// shared slice is never appended into.
func TestVaryKeepsEarlierValues(t *testing.T) {
	shared := make([]string, 1, 4)
	shared[0] = "Accept-Encoding"
	h := http.Header{"Vary": shared}
	addVaryOrigin(h)
	if got := h.Values("Vary"); len(got) != 2 || got[0] != "Accept-Encoding" || got[1] != "Origin" {
		t.Errorf("Vary = %q", got)
	}
	if shared[:2][1] != "" {
		t.Error("appended into the earlier handler's array")
	}
}

// TestCardAnyOrigin: the public card answers every origin without
// credentials, its preflight too, with or without a cors block.
func TestCardAnyOrigin(t *testing.T) {
	for _, cors := range []*CORS{nil, {Origins: []string{listed}, Credentials: true}} {
		h := &Handler{CardPath: DefaultCardPath, RPCPath: DefaultRPCPath, CORS: cors}
		h.browser = mustPolicy(t, cors)
		r := preflight(other, "a2a-version")
		r.URL.Path = DefaultCardPath
		w := httptest.NewRecorder()
		if err := h.ServeHTTP(w, r, nil); err != nil {
			t.Fatal(err)
		}
		if w.Code != http.StatusNoContent {
			t.Errorf("card preflight: %d", w.Code)
		}
		checkHeaders(t, w.Header(), map[string]string{
			"Access-Control-Allow-Origin":  "*",
			"Access-Control-Allow-Methods": "GET, HEAD",
			"Access-Control-Allow-Headers": "Content-Type, Authorization, A2A-Version, A2A-Extensions, X-A2A-Extensions, Last-Event-ID",
			"Access-Control-Max-Age":       "600",
			"Allow":                        "GET, HEAD, OPTIONS",
		})

		// A method the card does not serve still says who may read the
		// refusal (the card's own answers are the integration tests').
		r = httptest.NewRequest(http.MethodPost, self+DefaultCardPath, nil)
		r.Header.Set("Origin", other)
		w = httptest.NewRecorder()
		err := h.ServeHTTP(w, r, nil)
		var he caddyhttp.HandlerError
		if !errors.As(err, &he) || he.StatusCode != http.StatusMethodNotAllowed {
			t.Fatalf("POST on the card: %v", err)
		}
		checkHeaders(t, w.Header(), map[string]string{"Access-Control-Allow-Origin": "*", "Allow": "GET, HEAD, OPTIONS"})
	}
}

// TestErrorsCarryCORSHeaders: the HTTP errors (405 and 413 rendered by
// Caddy, 415 written by the module) keep the headers set before them, so a listed origin's page can
// read their status.
func TestErrorsCarryCORSHeaders(t *testing.T) {
	h := &Handler{CardPath: DefaultCardPath, RPCPath: DefaultRPCPath, MaxRequestBody: 16, logger: zap.NewNop()}
	h.browser = mustPolicy(t, &CORS{Origins: []string{listed}, Credentials: true})
	for _, tc := range []struct {
		method, ct, body string
		status           int
	}{
		{method: "GET", status: 405},
		{method: "POST", ct: "application/xml", body: "{}", status: 415},
		// Not preflighted: the origin is allowed, the request is not.
		{method: "POST", ct: "text/plain", body: "{}", status: 403},
		{method: "POST", body: "{}", status: 403},
		{method: "POST", ct: "application/json", body: strings.Repeat("x", 17), status: 413},
	} {
		r := httptest.NewRequest(tc.method, self+"/a2a", strings.NewReader(tc.body))
		r.Header.Set("Origin", listed)
		r.Header.Set("Sec-Fetch-Site", "cross-site")
		if tc.ct != "" {
			r.Header.Set("Content-Type", tc.ct)
		}
		w := httptest.NewRecorder()
		r = caddyhttp.PrepareRequest(r, caddy.NewReplacer(), w, nil)
		err := h.ServeHTTP(w, r, nil)
		// Caddy renders the 405 and 413; the module writes the 403 and the
		// 415 itself.
		var he caddyhttp.HandlerError
		if tc.status == 415 || tc.status == 403 {
			if err != nil || w.Code != tc.status {
				t.Fatalf("%s %q: %v, status %d, want %d", tc.method, tc.ct, err, w.Code, tc.status)
			}
		} else if !errors.As(err, &he) || he.StatusCode != tc.status {
			t.Fatalf("%s %q: %v, want %d", tc.method, tc.ct, err, tc.status)
		}
		for k, v := range map[string]string{"Access-Control-Allow-Origin": listed, "Access-Control-Allow-Credentials": "true", "Vary": "Origin"} {
			if got := w.Header().Get(k); got != v {
				t.Errorf("%s %q → %d: %s = %q, want %q", tc.method, tc.ct, tc.status, k, got, v)
			}
		}
	}
}

// TestAnonymousWarning: one warning per config load (a Provision) when a
// request's owner is empty, naming how to gate the endpoint; none for an
// identified caller.
func TestAnonymousWarning(t *testing.T) {
	provision := func() (*Handler, *observer.ObservedLogs) {
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		t.Cleanup(cancel)
		h := &Handler{
			UpstreamRaw: json.RawMessage(`{"url":"http://127.0.0.1:9"}`),
			CardFields: CardFields{Name: "N", Description: "D",
				Skills: []Skill{{ID: "s", Name: "S", Description: "D", Tags: []string{"t"}}}},
			Owner:    "{http.request.header.X-User}",
			StoreRaw: json.RawMessage(`{"share":"anonymous-warning"}`),
		}
		if err := h.Provision(ctx); err != nil {
			t.Fatal(err)
		}
		if err := h.Validate(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Cleanup() })
		core, logs := observer.New(zapcore.WarnLevel)
		h.logger = zap.New(core)
		return h, logs
	}
	list := func(h *Handler, user string) {
		t.Helper()
		r := httptest.NewRequest("POST", self+"/a2a", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("A2A-Version", "1.0")
		if user != "" {
			r.Header.Set("X-User", user)
		}
		w := httptest.NewRecorder()
		r = caddyhttp.PrepareRequest(r, caddy.NewReplacer(), w, nil)
		if err := h.ServeHTTP(w, r, nil); err != nil || w.Code != 200 {
			t.Fatalf("ListTasks: %v %d %s", err, w.Code, w.Body)
		}
	}

	h, logs := provision()
	list(h, "alice")
	if logs.Len() != 0 {
		t.Fatalf("an identified caller warned: %+v", logs.All())
	}
	list(h, "")
	list(h, "")
	list(h, "bob")
	entries := logs.All()
	if len(entries) != 1 {
		t.Fatalf("%d warnings, want 1: %+v", len(entries), entries)
	}
	// It names the empty ListTasks, which nothing else explains.
	if want := "a2a: the A2A endpoint is served to anonymous callers (the owner placeholder is empty on a request), " +
		"whose ListTasks is always empty; to gate it, put basic_auth or forward_auth in front of rpc_path (and rest_path): " +
		`see docs/gating.md, "Public card, gated RPC"`; entries[0].Message != want {
		t.Errorf("warning %q, want %q", entries[0].Message, want)
	}
	if f := entries[0].ContextMap(); f["rpc_path"] != "/a2a" || f["owner"] != "{http.request.header.X-User}" {
		t.Errorf("warning fields %v", f)
	}

	// The next config load warns again, once.
	h.Cleanup()
	h2, logs2 := provision()
	list(h2, "")
	list(h2, "")
	if logs2.Len() != 1 {
		t.Errorf("next load: %d warnings, want 1", logs2.Len())
	}
}

// BenchmarkGateRPC is what the browser rules add to every JSON-RPC POST
// of a client that is not a browser (the hot path), with and without a
// cors block: a few header lookups, no allocation.
func BenchmarkGateRPC(b *testing.B) {
	for _, tc := range []struct {
		name string
		cors *CORS
	}{{"no cors", nil}, {"cors", &CORS{Origins: []string{listed}, MaxAge: caddy.Duration(time.Minute)}}} {
		b.Run(tc.name, func(b *testing.B) {
			p, err := newBrowserPolicy(tc.cors)
			if err != nil {
				b.Fatal(err)
			}
			r := httptest.NewRequest("POST", self+"/a2a", nil)
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("A2A-Version", "1.0")
			w := httptest.NewRecorder()
			log := zap.NewNop()
			b.ReportAllocs()
			for b.Loop() {
				delete(w.Header(), "Vary")
				if p.gateRPC(w, r, log) {
					b.Fatal("refused")
				}
			}
		})
	}
}

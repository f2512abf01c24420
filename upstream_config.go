package caddya2a

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"

	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// Upstream configures the agent behind the endpoint (the agent contract of
// DESIGN.md: POST <url>, plain or NDJSON/SSE answer).
type Upstream struct {
	// URL is the absolute http(s) URL the agent is called at. Global
	// placeholders such as {env.AGENT_URL} are resolved once at provision.
	URL string `json:"url,omitempty"`

	// Timeout bounds a whole run (the upstream call and reading its
	// answer). Default: 5m.
	Timeout caddy.Duration `json:"timeout,omitempty"`

	// HeaderUp are request headers added to every upstream call. Values
	// may use global placeholders ({env.*}, {file.*}, {system.*}),
	// resolved once at provision: nothing a caller sends ever reaches the
	// replacer.
	HeaderUp http.Header `json:"header_up,omitempty"`

	// TransportRaw is Caddy's reverse_proxy HTTP transport
	// (http.reverse_proxy.transport.http): TLS to the upstream, h2c, dial
	// timeouts, keep-alive, proxy. Default: that transport with its own
	// defaults.
	TransportRaw json.RawMessage `json:"transport,omitempty" caddy:"namespace=http.reverse_proxy.transport inline_key=protocol"`

	// target is URL with its placeholders resolved.
	target string
}

// reservedHeaders belong to the agent contract or to the connection; a
// header_up that set them would break the call.
var reservedHeaders = map[string]bool{
	"Content-Type":      true,
	"Content-Length":    true,
	"Accept":            true,
	"Connection":        true,
	"Transfer-Encoding": true,
	"Te":                true,
	"Trailer":           true,
	"Upgrade":           true,
	"Keep-Alive":        true,
}

// checkHeaderUp refuses a header name the contract owns or that is not a
// valid token.
func checkHeaderUp(name string) error {
	if name == "" || strings.IndexFunc(name, func(r rune) bool { return !isTokenChar(r) }) >= 0 {
		return fmt.Errorf("invalid header name %q", name)
	}
	if reservedHeaders[http.CanonicalHeaderKey(name)] {
		return fmt.Errorf("header %s is set by the agent contract and cannot be overridden", http.CanonicalHeaderKey(name))
	}
	return nil
}

// isTokenChar reports whether r may appear in an HTTP header name (RFC 9110
// token).
func isTokenChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}

func (u *Upstream) applyDefaults() error {
	if err := defaulted(&u.Timeout, caddy.Duration(DefaultTimeout), "upstream timeout must be positive"); err != nil {
		return err
	}
	for name := range u.HeaderUp {
		if err := checkHeaderUp(name); err != nil {
			return fmt.Errorf("header_up: %w", err)
		}
	}
	return nil
}

// provision resolves the global placeholders, loads the transport and
// returns the agent.
func (u *Upstream) provision(ctx caddy.Context, globals *caddy.Replacer) (upstream.Agent, error) {
	target, err := resolveGlobal(globals, u.URL)
	if err != nil {
		return nil, err
	}
	if err := checkUpstreamURL(target); err != nil {
		return nil, err
	}
	u.target = target
	headers := make(http.Header, len(u.HeaderUp))
	for name, values := range u.HeaderUp {
		for _, v := range values {
			rv, err := resolveGlobal(globals, v)
			if err != nil {
				return nil, fmt.Errorf("header_up %s: %w", name, err)
			}
			if strings.ContainsAny(rv, "\r\n\x00") {
				return nil, fmt.Errorf("header_up %s: value contains a line break or NUL", name)
			}
			headers.Add(name, rv)
		}
	}

	var mod any
	if u.TransportRaw != nil {
		if err := checkTransport(u.TransportRaw, globals); err != nil {
			return nil, err
		}
		if u.TransportRaw, err = withoutCompression(u.TransportRaw); err != nil {
			return nil, fmt.Errorf("transport: %w", err)
		}
		mod, err = ctx.LoadModule(u, "TransportRaw")
	} else {
		mod, err = ctx.LoadModuleByID("http.reverse_proxy.transport.http", json.RawMessage(`{"compression":false}`))
	}
	if err != nil {
		return nil, fmt.Errorf("loading transport: %w", err)
	}
	// Only the HTTP transport is known to work outside reverse_proxy: the
	// others (fastcgi, …) need the proxy's request context.
	ht, ok := mod.(*reverseproxy.HTTPTransport)
	if !ok {
		return nil, fmt.Errorf("transport %T is not supported; use transport http", mod)
	}
	if ht.TLSEnabled() && strings.HasPrefix(target, "http://") {
		return nil, fmt.Errorf("upstream %s is http:// but the transport enables TLS; use https://", target)
	}

	a, err := upstream.NewHTTPAgent(upstream.HTTPConfig{
		URL:     target,
		Client:  &http.Client{Transport: ht, CheckRedirect: noRedirects},
		Timeout: time.Duration(u.Timeout),
		Headers: headers,
		// The transport's own placeholders see the globals only: the
		// ones it resolves per connection were checked above.
		RequestContext: transportContext(caddy.NewReplacer()),
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// withoutCompression turns the transport's transparent gzip off unless the
// config says otherwise: a compressed NDJSON or SSE answer is held back by
// the agent's compressor until a block fills, which defeats streaming.
func withoutCompression(raw json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if _, set := m["compression"]; set {
		return raw, nil
	}
	m["compression"] = json.RawMessage("false")
	return json.Marshal(m)
}

// noRedirects hands a 3xx back as the answer: following it would turn the
// POST into a GET without the body, and the agent contract has no
// redirects, so the run fails plainly instead of oddly.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// resolveGlobal expands the placeholders known without a request (env,
// file, system, time); an unknown one is an error because it would
// otherwise be sent literally.
func resolveGlobal(repl *caddy.Replacer, s string) (string, error) {
	out, err := repl.ReplaceOrErr(s, false, true)
	if err != nil {
		return "", fmt.Errorf("%w (only global placeholders such as {env.NAME} are resolved here)", err)
	}
	return out, nil
}

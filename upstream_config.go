package caddya2a

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
	"golang.org/x/net/http/httpguts"

	"github.com/caddy-a2a/caddy-a2a/upstream"
	httpagent "github.com/caddy-a2a/caddy-a2a/upstream/http"
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

	// MaxResponseHeaderSize bounds the response headers of the agent's
	// answer, in bytes: the status line and header fields, with those of
	// any 1xx answers before it. An answer over it fails the run. It is
	// the transport's own max_response_header_size (net/http's
	// MaxResponseHeaderBytes, whose default is 10MiB for every run), given
	// here with a small default; set it here or in the transport, not in
	// both. Caddy's HTTP/3 transport (versions 3) does not apply it, so it
	// is refused there. At least 1KiB. Default: 64KiB.
	MaxResponseHeaderSize int64 `json:"max_response_header_size,omitempty"`

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
	// The module reads only what it asked for: an encoding asked for here
	// would come back undecoded (the transport decodes only what it asked
	// for itself) and fail every run.
	"Accept-Encoding": true,
}

// checkHeaderUp refuses a header name the contract owns or that is not a
// valid token.
func checkHeaderUp(name string) error {
	if !httpguts.ValidHeaderFieldName(name) {
		return fmt.Errorf("invalid header name %q", name)
	}
	if reservedHeaders[http.CanonicalHeaderKey(name)] {
		return fmt.Errorf("header %s is set by the agent contract and cannot be overridden", http.CanonicalHeaderKey(name))
	}
	return nil
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
	if u.MaxResponseHeaderSize != 0 {
		if err := checkMaxResponseHeader(u.MaxResponseHeaderSize); err != nil {
			return fmt.Errorf("max_response_header: %w", err)
		}
	}
	return nil
}

// Bounds of max_response_header. Below the minimum no agent's answer
// fits (a status line and a Content-Type alone take a hundred bytes, and
// a proxy on the way adds more): a value that small is a typo for KiB.
const (
	DefaultMaxResponseHeader = httpagent.DefaultMaxResponseHeaderBytes
	minMaxResponseHeader     = 1 << 10
)

// checkMaxResponseHeader refuses a response header cap no answer fits
// under, or one past the sizes any limit takes.
func checkMaxResponseHeader(n int64) error {
	if n < minMaxResponseHeader || n > maxLimitSize {
		return fmt.Errorf("want a size from 1KiB to 1GiB, got %d bytes", n)
	}
	return nil
}

// provision resolves the global placeholders, loads the transport and
// returns the agent, holding its output to limits (nil: the defaults).
func (u *Upstream) provision(ctx caddy.Context, globals *caddy.Replacer, limits *Limits) (upstream.Agent, error) {
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
		if u.TransportRaw, err = u.transportDefaults(u.TransportRaw); err != nil {
			return nil, err
		}
		mod, err = ctx.LoadModule(u, "TransportRaw")
	} else {
		var raw json.RawMessage
		if raw, err = u.transportDefaults(json.RawMessage(`{}`)); err != nil {
			return nil, err
		}
		mod, err = ctx.LoadModuleByID("http.reverse_proxy.transport.http", raw)
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

	a, err := httpagent.New(httpagent.Config{
		URL:     target,
		Client:  &http.Client{Transport: ht, CheckRedirect: noRedirects},
		Timeout: time.Duration(u.Timeout),
		Headers: headers,
		// What the agent answers is held to the limits of what callers
		// send: it reaches them, and its parts live beside theirs.
		Limits:       limits.protocolLimits(),
		MaxJSONDepth: limits.jsonDepth(),
		// The transport's own placeholders see the globals only: the
		// ones it resolves per connection were checked above.
		RequestContext: transportContext(caddy.NewReplacer()),
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// transportDefaults gives the transport config the module's defaults
// where it sets nothing else:
//
//   - compression off: a compressed NDJSON or SSE answer is held back by
//     the agent's compressor until a block fills, which defeats
//     streaming;
//   - max_response_header_size: the upstream's MaxResponseHeaderSize
//     (default 64KiB), not net/http's 10MiB. The transport's own setting
//     is the same knob: set in one place it counts; set in both, the
//     config is refused, as neither could be said to win.
func (u *Upstream) transportDefaults(raw json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("transport: %w", err)
	}
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	if _, set := m["compression"]; !set {
		m["compression"] = json.RawMessage("false")
	}
	var versions []string
	if v, ok := m["versions"]; ok {
		if err := json.Unmarshal(v, &versions); err != nil {
			return nil, fmt.Errorf("transport versions: %w", err)
		}
	}
	h3 := len(versions) == 1 && versions[0] == "3"
	if v, set := m["max_response_header_size"]; set {
		if u.MaxResponseHeaderSize != 0 {
			return nil, errors.New("max_response_header is set both in the upstream block and in its transport; set it once")
		}
		var n int64
		if err := json.Unmarshal(v, &n); err != nil {
			return nil, fmt.Errorf("transport max_response_header: %w", err)
		}
		if err := checkMaxResponseHeader(n); err != nil {
			return nil, fmt.Errorf("transport max_response_header: %w", err)
		}
		if h3 {
			return nil, errMaxResponseHeaderH3
		}
		return json.Marshal(m)
	}
	switch {
	case h3 && u.MaxResponseHeaderSize != 0:
		return nil, errMaxResponseHeaderH3
	case h3:
		// Nothing to set: Caddy's HTTP/3 transport keeps quic-go's own
		// cap (10MB), as the README says.
	default:
		n := u.MaxResponseHeaderSize
		if n == 0 {
			n = DefaultMaxResponseHeader
		}
		m["max_response_header_size"] = json.RawMessage(strconv.FormatInt(n, 10))
	}
	return json.Marshal(m)
}

// errMaxResponseHeaderH3: Caddy's HTTP/3 transport (v2.11.9) builds its
// quic-go transport without passing the header cap on, so a cap set with
// versions 3 would silently not hold.
var errMaxResponseHeaderH3 = errors.New("max_response_header: not applied by Caddy's HTTP/3 transport (transport versions 3), " +
	"whose answers keep quic-go's own header cap; remove it or use HTTP/1.1 or HTTP/2")

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

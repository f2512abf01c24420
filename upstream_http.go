package caddya2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
	"go.uber.org/zap"
	"golang.org/x/net/http/httpguts"

	"github.com/caddy-a2a/caddy-a2a/upstream"
	"github.com/caddy-a2a/caddy-a2a/upstream/httpagent"
)

// init registers a2a.upstreams.http.
func init() {
	caddy.RegisterModule(HTTPUpstream{})
}

// Bounds of max_response_header. Below the minimum no agent's answer
// fits (a status line and a Content-Type alone take a hundred bytes, and
// a proxy on the way adds more): a value that small is a typo for KiB.
const (
	DefaultMaxResponseHeader = httpagent.DefaultMaxResponseHeaderBytes
	minMaxResponseHeader     = 1 << 10
)

// DefaultTimeout is the http kind's, which applies it.
const DefaultTimeout = httpagent.DefaultTimeout

// HTTPUpstream is the upstream module a2a.upstreams.http: the agent
// contract docs/contract.md describes (POST <url>, plain or NDJSON/SSE answer),
// over Caddy's reverse_proxy HTTP transport.
type HTTPUpstream struct {
	// URL is the absolute http(s) URL the agent is called at. Global
	// placeholders such as {env.AGENT_URL} are resolved once at provision.
	// Required.
	URL string `json:"url,omitempty"`

	// Timeout bounds a whole run (the upstream call and reading its
	// answer). Default: 5m.
	Timeout caddy.Duration `json:"timeout,omitempty"`

	// HeaderUp are request headers added to every upstream call. Values
	// may use global placeholders ({env.*}, {file.*}, {system.*}),
	// resolved once at provision, and request placeholders ({http.*},
	// such as {http.auth.user.id}), resolved with the request that starts
	// a run (a run outlives its request, so once, then). A caller's own
	// headers reach the agent only through such a placeholder.
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
	// is refused there. From 1KiB to 1GiB. Default: 64KiB.
	MaxResponseHeaderSize int64 `json:"max_response_header_size,omitempty"`

	// target is URL and headers HeaderUp with their placeholders
	// resolved; perRequest are the header_up values with request
	// placeholders, resolved per request (RequestHeaders).
	target     string
	headers    http.Header
	perRequest http.Header
	// tc is the transport as configured (Caddy empties TransportRaw once
	// it is loaded) and transport the loaded one (nil when tc is not one
	// Validate accepts).
	tc        transportConfig
	transport *reverseproxy.HTTPTransport
}

// CaddyModule returns the Caddy module information.
func (HTTPUpstream) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "a2a.upstreams.http",
		New: func() caddy.Module { return new(HTTPUpstream) },
	}
}

// Provision resolves the global placeholders of the URL and headers and
// loads the transport with the module's defaults.
func (u *HTTPUpstream) Provision(ctx caddy.Context) error {
	globals := caddy.NewReplacer()
	if err := u.fill(globals); err != nil {
		return err
	}
	u.warnEmptyEnv(ctx.Logger(), globals)
	// A transport config Validate refuses is not loaded: loading it may
	// fail first, in words that do not say why a run could not use it.
	if u.tc.check(u.MaxResponseHeaderSize, caddy.NewReplacer()) != nil {
		return nil
	}
	raw := u.tc.withDefaults(u.MaxResponseHeaderSize)
	var mod any
	var err error
	if u.TransportRaw != nil {
		u.TransportRaw = raw
		mod, err = ctx.LoadModule(u, "TransportRaw")
	} else {
		mod, err = ctx.LoadModuleByID("http.reverse_proxy.transport.http", raw)
	}
	if err != nil {
		return fmt.Errorf("loading transport: %w", err)
	}
	ht, ok := mod.(*reverseproxy.HTTPTransport)
	if !ok {
		return fmt.Errorf("transport %T is not supported; use transport http", mod)
	}
	u.transport = ht
	return nil
}

// fill resolves the global placeholders of the URL and of the header
// values and reads the transport config.
func (u *HTTPUpstream) fill(globals *caddy.Replacer) error {
	target, err := resolveGlobal(globals, u.URL)
	if err != nil {
		return err
	}
	u.target = target
	u.headers = make(http.Header, len(u.HeaderUp))
	u.perRequest = nil
	for name, values := range u.HeaderUp {
		for _, v := range values {
			if requestPlaceholder(v) {
				if u.perRequest == nil {
					u.perRequest = http.Header{}
				}
				u.perRequest.Add(name, v)
				continue
			}
			rv, err := resolveGlobal(globals, v)
			if err != nil {
				return fmt.Errorf("header_up %s: %w", name, err)
			}
			u.headers.Add(name, rv)
		}
	}
	u.tc, err = readTransport(u.TransportRaw)
	return err
}

// requestPlaceholder reports whether a header_up value uses a request
// placeholder ({http.*}, such as {http.auth.user.id}): it is resolved for
// each request that starts a run, with that request's values.
func requestPlaceholder(v string) bool { return strings.Contains(v, "{http.") }

// RequestHeaders resolves the header_up values with request placeholders
// for one request (nil when there are none). A value that resolves to
// something no header can hold (a line break) is sent empty.
func (u *HTTPUpstream) RequestHeaders(repl *caddy.Replacer) http.Header {
	if u.perRequest == nil {
		return nil
	}
	h := make(http.Header, len(u.perRequest))
	for name, values := range u.perRequest {
		for _, v := range values {
			rv := repl.ReplaceAll(v, "")
			if strings.ContainsAny(rv, "\r\n\x00") {
				rv = ""
			}
			h[name] = append(h[name], rv)
		}
	}
	return h
}

// envPlaceholder matches an {env.NAME} placeholder.
var envPlaceholder = regexp.MustCompile(`\{env\.[^{}]+\}`)

// warnEmptyEnv warns about each header_up value with an {env.*}
// placeholder that resolves to empty: the header is still sent (an empty
// value may be meant), but most often the variable is unset where Caddy
// runs, and an agent refusing the call would not say why.
func (u *HTTPUpstream) warnEmptyEnv(log *zap.Logger, globals *caddy.Replacer) {
	for name, values := range u.HeaderUp {
		for _, v := range values {
			for _, ph := range envPlaceholder.FindAllString(v, -1) {
				if globals.ReplaceAll(ph, "") == "" {
					variable := strings.TrimSuffix(strings.TrimPrefix(ph, "{env."), "}")
					log.Warn("a2a: header_up value uses an environment variable that is empty or unset; the header is sent with it empty",
						zap.String("header", name), zap.String("variable", variable))
				}
			}
		}
	}
}

// Validate checks the settings and the transport they load.
func (u *HTTPUpstream) Validate() error {
	if err := u.check(caddy.NewReplacer()); err != nil {
		return err
	}
	if u.transport == nil {
		return errors.New("transport not loaded")
	}
	if u.transport.TLSEnabled() && strings.HasPrefix(u.target, "http://") {
		return fmt.Errorf("upstream %s is http:// but the transport enables TLS; use https://", u.target)
	}
	return nil
}

// check holds the settings (placeholders resolved) to their rules.
func (u *HTTPUpstream) check(globals *caddy.Replacer) error {
	if err := checkUpstreamURL(u.target); err != nil {
		return err
	}
	return u.checkSettings(globals)
}

// checkSettings is check but for the URL.
func (u *HTTPUpstream) checkSettings(globals *caddy.Replacer) error {
	if u.Timeout < 0 {
		return errors.New("timeout must be positive")
	}
	for name := range u.HeaderUp {
		if err := checkHeaderUp(name); err != nil {
			return fmt.Errorf("header_up: %w", err)
		}
	}
	for name, values := range u.headers {
		for _, v := range values {
			if strings.ContainsAny(v, "\r\n\x00") {
				return fmt.Errorf("header_up %s: value contains a line break or NUL", name)
			}
		}
	}
	if u.MaxResponseHeaderSize != 0 {
		if err := checkMaxResponseHeader(u.MaxResponseHeaderSize); err != nil {
			return fmt.Errorf("max_response_header: %w", err)
		}
	}
	return u.tc.check(u.MaxResponseHeaderSize, globals)
}

// Target is the URL as resolved.
func (u *HTTPUpstream) Target() string { return u.target }

// NewAgent returns the agent of the agent contract over the transport.
func (u *HTTPUpstream) NewAgent(opts AgentOptions) (upstream.Agent, error) {
	return httpagent.New(httpagent.Config{URL: u.target, HTTPConfig: u.httpConfig(opts)})
}

// httpConfig is what every kind over this transport calls its agent
// with.
func (u *HTTPUpstream) httpConfig(opts AgentOptions) upstream.HTTPConfig {
	return upstream.HTTPConfig{
		Client:  &http.Client{Transport: u.transport, CheckRedirect: noRedirects},
		Timeout: time.Duration(u.Timeout),
		Headers: u.headers,
		// What the agent answers is held to the limits of what callers
		// send: it reaches them, and its parts live beside theirs.
		Limits:       opts.Limits,
		MaxJSONDepth: opts.MaxJSONDepth,
		// The transport's own placeholders see the globals only: the
		// ones it resolves per connection were checked in Validate.
		RequestContext: transportContext(caddy.NewReplacer()),
	}
}

// UnmarshalCaddyfile parses `upstream [http] <url> { … }`:
//
//	upstream [http] <url> {
//		timeout             <duration>
//		header_up           <name> <value>
//		max_response_header <size>
//		transport           http { <reverse_proxy http transport options> }
//	}
func (u *HTTPUpstream) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return u.unmarshal(d, upstreamKeys, nil, nil)
}

// unmarshal parses the http kind's line and block; more, if set, parses
// the subdirectives of a kind built on it (true when it knew the key),
// keys listing them all for the error that names the unknown one, and
// check runs that kind's checks on what was read (nil: none).
func (u *HTTPUpstream) unmarshal(d *caddyfile.Dispenser, keys []string, more func(key string) (bool, error), check func() error) error {
	d.Next() // the kind, or the directive when it names none
	// Where the block's errors are reported.
	block := *d
	if !d.NextArg() {
		return d.ArgErr()
	}
	u.URL = d.Val()
	if d.NextArg() {
		return d.ArgErr()
	}
	if err := subdirectives(d, "upstream", []string{"header_up"}, func(key string) error {
		var err error
		switch key {
		case "timeout":
			u.Timeout, err = durationArg(d)
		case "header_up":
			var args []string
			if args, err = argsNoBlock(d, 2, 2); err != nil {
				return err
			}
			name := http.CanonicalHeaderKey(args[0])
			if _, dup := u.HeaderUp[name]; dup {
				return d.Errf("header_up %s given twice", name)
			}
			if u.HeaderUp == nil {
				u.HeaderUp = http.Header{}
			}
			u.HeaderUp[name] = []string{args[1]}
		case "max_response_header":
			u.MaxResponseHeaderSize, err = sizeArg(d, "want a size from 1KiB to 1GiB")
		case "transport":
			if !d.NextArg() {
				return d.ArgErr()
			}
			name := d.Val()
			unm, err := caddyfile.UnmarshalModule(d, "http.reverse_proxy.transport."+name)
			if err != nil {
				return err
			}
			u.TransportRaw = caddyconfig.JSONModuleObject(unm, "protocol", name, nil)
		default:
			if more != nil {
				if known, err := more(key); known {
					return err
				}
			}
			return unknownSubdirective(d, "upstream", key, keys)
		}
		return err
	}); err != nil {
		return err
	}
	if err := u.checkParsed(); err != nil {
		return block.WrapErr(err)
	}
	if check != nil {
		if err := check(); err != nil {
			return block.WrapErr(err)
		}
	}
	return nil
}

// checkParsed runs Validate's checks on a copy of u as Provision leaves
// it, for the Caddyfile parser to name the line. A URL or header value
// with a placeholder is checked by Validate alone, once resolved where
// Caddy runs; whether its placeholders are global ones is known here.
func (u *HTTPUpstream) checkParsed() error {
	c := *u
	globals := caddy.NewReplacer()
	if err := c.fill(globals); err != nil {
		return err
	}
	if !strings.Contains(u.URL, "{") {
		if err := checkUpstreamURL(c.target); err != nil {
			return err
		}
	}
	c.headers = http.Header{}
	for name, values := range u.HeaderUp {
		for _, v := range values {
			if !strings.Contains(v, "{") {
				c.headers.Add(name, v)
			}
		}
	}
	return c.checkSettings(globals)
}

// checkUpstreamURL accepts the agent's URL.
func checkUpstreamURL(s string) error {
	u, err := checkAbsoluteURL(s)
	if err != nil {
		return err
	}
	if u.Fragment != "" {
		return fmt.Errorf("URL %q must not have a fragment", s)
	}
	return nil
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

// checkMaxResponseHeader refuses a response header cap no answer fits
// under, or one past the sizes any limit takes.
func checkMaxResponseHeader(n int64) error {
	if n < minMaxResponseHeader || n > maxLimitSize {
		return fmt.Errorf("want a size from 1KiB to 1GiB, got %d bytes", n)
	}
	return nil
}

// noRedirects hands a 3xx back as the answer: following it would turn the
// POST into a GET without the body, and the agent contract has no
// redirects, so the run fails plainly instead of oddly.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// transportConfig is what the module reads of the transport config
// before Caddy loads it: its name and the settings the module's defaults
// and checks depend on.
type transportConfig struct {
	name string          // the protocol; "http" when no transport is configured
	raw  json.RawMessage // as configured; nil for none
	m    map[string]json.RawMessage
	// capSet: the transport sets max_response_header_size itself, to cap.
	capSet bool
	cap    int64
	h3     bool // versions 3 alone: Caddy's HTTP/3 transport
}

// readTransport reads raw (nil: no transport configured).
func readTransport(raw json.RawMessage) (transportConfig, error) {
	tc := transportConfig{name: "http", raw: raw, m: map[string]json.RawMessage{}}
	if raw == nil {
		return tc, nil
	}
	if err := json.Unmarshal(raw, &tc.m); err != nil {
		return tc, fmt.Errorf("transport: %w", err)
	}
	if tc.m == nil {
		tc.m = map[string]json.RawMessage{}
	}
	tc.name = ""
	if p, ok := tc.m["protocol"]; ok {
		if err := json.Unmarshal(p, &tc.name); err != nil {
			return tc, fmt.Errorf("transport protocol: %w", err)
		}
	}
	var versions []string
	if v, ok := tc.m["versions"]; ok {
		if err := json.Unmarshal(v, &versions); err != nil {
			return tc, fmt.Errorf("transport versions: %w", err)
		}
	}
	tc.h3 = len(versions) == 1 && versions[0] == "3"
	if v, ok := tc.m["max_response_header_size"]; ok {
		tc.capSet = true
		if err := json.Unmarshal(v, &tc.cap); err != nil {
			return tc, fmt.Errorf("transport max_response_header: %w", err)
		}
	}
	return tc, nil
}

// withDefaults is the transport config with the module's defaults where
// it sets nothing else:
//
//   - compression off: a compressed NDJSON or SSE answer is held back by
//     the agent's compressor until a block fills, which defeats
//     streaming;
//   - max_response_header_size: the upstream's MaxResponseHeaderSize
//     (capSize, 0 for the default 64KiB), not net/http's 10MiB. The
//     transport's own setting is the same knob: set in one place it
//     counts; set in both, Validate refuses the config, as neither could
//     be said to win. Caddy's HTTP/3 transport keeps quic-go's own cap
//     (10MB), as docs/caddyfile.md says, so nothing is set there.
func (tc *transportConfig) withDefaults(capSize int64) json.RawMessage {
	m := make(map[string]json.RawMessage, len(tc.m)+2)
	for k, v := range tc.m {
		m[k] = v
	}
	if _, set := m["compression"]; !set {
		m["compression"] = json.RawMessage("false")
	}
	if !tc.capSet && !tc.h3 {
		if capSize == 0 {
			capSize = DefaultMaxResponseHeader
		}
		m["max_response_header_size"] = json.RawMessage(strconv.FormatInt(capSize, 10))
	}
	b, _ := json.Marshal(m) // of raw messages read from JSON: cannot fail
	return b
}

// check refuses a transport other than http, two settings of the
// response header cap, a cap Caddy's HTTP/3 transport would not apply,
// and the settings a run cannot honour (see checkTransportSettings).
func (tc *transportConfig) check(capSize int64, globals *caddy.Replacer) error {
	if tc.name == "" {
		return errors.New(`transport: "protocol" is required; use "protocol": "http"`)
	}
	if tc.name != "http" {
		// Only the HTTP transport is known to work outside
		// reverse_proxy: the others (fastcgi, …) need the proxy's
		// request context.
		return fmt.Errorf("transport %q is not supported; use transport http", tc.name)
	}
	switch {
	case tc.capSet && capSize != 0:
		return errors.New("max_response_header is set both in the upstream block and in its transport; set it once")
	case tc.capSet:
		if err := checkMaxResponseHeader(tc.cap); err != nil {
			return fmt.Errorf("transport max_response_header: %w", err)
		}
		if tc.h3 {
			return errMaxResponseHeaderH3
		}
	case tc.h3 && capSize != 0:
		return errMaxResponseHeaderH3
	}
	if tc.raw == nil {
		return nil
	}
	return checkTransportSettings(tc.raw, globals)
}

// errMaxResponseHeaderH3: Caddy's HTTP/3 transport (v2.11.9) builds its
// quic-go transport without passing the header cap on, so a cap set with
// versions 3 would silently not hold.
var errMaxResponseHeaderH3 = errors.New("max_response_header: not applied by Caddy's HTTP/3 transport (transport versions 3), " +
	"whose answers keep quic-go's own header cap; remove it or use HTTP/1.1 or HTTP/2")

// Caddy's reverse_proxy HTTP transport is made for requests that came
// through Caddy's server, and reads from the context of the request it
// sends (v2.11.9, httptransport.go and the network proxy module):
//
//   - caddy.ReplacerCtxKey: the replacer, asserted without a check when
//     tls_server_name holds a placeholder (in the dial goroutine of
//     net/http, or of quic-go with `versions 3`), and checked by
//     `network_proxy url` (and the older forward_proxy_url) with a
//     placeholder, which fails the request without one;
//   - caddyhttp.VarsCtxKey: the vars table; it reads
//     reverse_proxy.proxy_protocol_info (the client's address, set by
//     reverse_proxy; without it every dial fails when proxy_protocol is
//     set), reverse_proxy.tls_h1_only (in its own TLS dialer; absent:
//     HTTP/2 may be negotiated) and reverse_proxy.proxy (only with a dial
//     info), and writes reverse_proxy.proxy when a network proxy is used;
//   - reverse_proxy's dial info (an unexported key): absent, the address
//     of the request's URL is dialed, which is the agent's.
//
// A run's context has none of them: it is not a request's (a run
// outlives the request that started it), so transportContext gives each
// upstream request a replacer of the global placeholders and a vars table
// of its own, and checkTransportSettings refuses at load what still
// cannot work.

// transportCtx is a run's context with what Caddy's transport reads: one
// value for both keys keeps it to one allocation beside the table.
type transportCtx struct {
	context.Context
	repl *caddy.Replacer
	vars map[string]any
}

// Value answers the replacer and the vars table, and asks the run's
// context for anything else.
func (c *transportCtx) Value(key any) any {
	switch key {
	case caddy.ReplacerCtxKey:
		return c.repl
	case caddyhttp.VarsCtxKey:
		return c.vars
	}
	return c.Context.Value(key)
}

// transportContext returns the httpagent.Config.RequestContext hook:
// every request to the agent gets repl (global placeholders only; it is
// only read, so runs share it) and an empty vars table of its own, which
// the transport may write to. Both replace what the context may already
// hold: a message reply runs under the client's request, whose
// placeholders must not reach the transport (they are refused at load,
// so both kinds of run resolve alike) and whose vars table the transport
// must not write to from its own goroutines.
func transportContext(repl *caddy.Replacer) func(context.Context) context.Context {
	return func(ctx context.Context) context.Context {
		return &transportCtx{Context: ctx, repl: repl, vars: make(map[string]any)}
	}
}

// transportSettings are the settings of Caddy's HTTP transport that a run
// cannot always honour (the JSON field names of
// http.reverse_proxy.transport.http).
type transportSettings struct {
	ProxyProtocol   string          `json:"proxy_protocol"`
	ForwardProxyURL string          `json:"forward_proxy_url"`
	NetworkProxy    json.RawMessage `json:"network_proxy"`
	TLS             *struct {
		ServerName string `json:"server_name"`
	} `json:"tls"`
	Resolver *struct {
		Addresses []string `json:"addresses"`
	} `json:"resolver"`
}

// checkTransportSettings refuses the transport settings a run cannot
// honour, naming the setting and why, before any run uses them (loading
// the transport does not: each fails a run, or the process, only when a
// request is sent):
//
//   - proxy_protocol: the PROXY header tells the agent which client a
//     connection serves, and a run has no client connection (it outlives
//     the request that started it, and connections to the agent are
//     pooled across runs of different callers);
//   - a placeholder other than a global one in what the transport
//     resolves per connection or request (tls_server_name, network_proxy
//     url, forward_proxy_url): a request placeholder has no value in a
//     run and would resolve to "";
//   - a resolver without addresses, which makes every name lookup panic
//     (in the resolver's goroutine, taking the process down).
func checkTransportSettings(raw json.RawMessage, globals *caddy.Replacer) error {
	var t transportSettings
	if err := json.Unmarshal(raw, &t); err != nil {
		return fmt.Errorf("transport: %w", err)
	}
	if t.ProxyProtocol != "" {
		return errors.New("transport proxy_protocol: not supported: a PROXY header carries the address of the client " +
			"a request came from, and an agent run has none (it outlives the request that started it, and its " +
			"connections to the agent are shared by runs of different callers)")
	}
	if t.Resolver != nil && len(t.Resolver.Addresses) == 0 {
		return errors.New("transport resolver: at least one address is required")
	}
	perRequest := []struct{ name, value string }{{"forward_proxy_url", t.ForwardProxyURL}}
	if t.TLS != nil {
		perRequest = append(perRequest, struct{ name, value string }{"tls_server_name", t.TLS.ServerName})
	}
	if len(t.NetworkProxy) > 0 {
		var np struct {
			From string `json:"from"`
			URL  string `json:"url"`
		}
		if err := json.Unmarshal(t.NetworkProxy, &np); err != nil {
			return fmt.Errorf("transport network_proxy: %w", err)
		}
		if np.From == "url" {
			perRequest = append(perRequest, struct{ name, value string }{"network_proxy url", np.URL})
		}
	}
	for _, s := range perRequest {
		if !strings.Contains(s.value, "{") {
			continue
		}
		if _, err := globals.ReplaceOrErr(s.value, false, true); err != nil {
			return fmt.Errorf("transport %s: %w (it is resolved for each request to the agent, where only global "+
				"placeholders such as {env.NAME} have a value: a run is not a client request)", s.name, err)
		}
	}
	return nil
}

// Interface guards.
var (
	_ UpstreamModule        = (*HTTPUpstream)(nil)
	_ caddy.Provisioner     = (*HTTPUpstream)(nil)
	_ caddy.Validator       = (*HTTPUpstream)(nil)
	_ caddyfile.Unmarshaler = (*HTTPUpstream)(nil)
)

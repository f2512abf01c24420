package caddya2a

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"
)

// DefaultCORSMaxAge is how long a browser may cache a preflight answer
// when cors sets no max_age.
const DefaultCORSMaxAge = 10 * time.Minute

// anyOrigin is the origins entry that allows every origin (without
// credentials).
const anyOrigin = "*"

// CORS lets web pages of other origins call the JSON-RPC endpoint from a
// browser. Without it, browsers' cross-origin calls are refused (403)
// and preflights get no CORS headers; requests that carry neither
// Sec-Fetch-Site nor Origin (curl, SDK clients, other servers) are not
// affected either way. The public card answers any origin whatever this
// says.
type CORS struct {
	// Origins are the exact origins whose pages may call, as browsers
	// send them in Origin: scheme://host[:port] in lower case, without a
	// path and without the scheme's default port. They are also the
	// trusted origins of the cross-origin protection, for the requests a
	// browser preflights (a JSON Content-Type, a method other than POST):
	// a simple request from another origin is refused whatever this
	// lists. "*" (alone) allows any origin, without credentials. Required.
	Origins []string `json:"origins,omitempty"`

	// Credentials lets the listed origins' pages send credentials
	// (cookies, cached HTTP authentication, TLS client certificates) and
	// read the answers (Access-Control-Allow-Credentials: true). Refused
	// with "*". Default: off; a page sending its own Authorization header
	// needs no credentials.
	Credentials bool `json:"credentials,omitempty"`

	// MaxAge is how long a browser may cache a preflight answer
	// (Access-Control-Max-Age). Default: 10m.
	MaxAge caddy.Duration `json:"max_age,omitempty"`
}

// fill applies MaxAge's default.
func (c *CORS) fill() {
	if c != nil && c.MaxAge == 0 {
		c.MaxAge = caddy.Duration(DefaultCORSMaxAge)
	}
}

// check refuses what no browser could match and credentials for any
// origin.
func (c *CORS) check() error {
	if c == nil {
		return nil
	}
	if len(c.Origins) == 0 {
		return errors.New("cors: origins is required")
	}
	for i, o := range c.Origins {
		if o == anyOrigin {
			if len(c.Origins) > 1 {
				return errors.New("cors: * allows every origin and must stand alone in origins")
			}
			continue
		}
		if err := checkOrigin(o); err != nil {
			return fmt.Errorf("cors: %w", err)
		}
		if slices.Contains(c.Origins[:i], o) {
			return fmt.Errorf("cors: origin %s listed twice", o)
		}
	}
	if c.Credentials && c.Origins[0] == anyOrigin {
		return errors.New("cors: credentials on cannot be used with origins *: list the origins whose pages may send credentials")
	}
	if c.MaxAge < 0 {
		return errors.New("cors: max_age must not be negative")
	}
	return nil
}

// checkOrigin accepts an origin exactly as a browser serializes it in the
// Origin header, since that header is compared as a string: a listed
// origin in any other spelling would never match.
func checkOrigin(s string) error {
	if s == "null" {
		return errors.New(`origin "null" (sandboxed frames, file: pages) is shared by unrelated pages and cannot be listed`)
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Opaque != "" {
		return fmt.Errorf("origin %q: want scheme://host[:port]", s)
	}
	if u.Host == "" || u.User != nil || strings.ContainsAny(u.Host, "*{}") {
		return fmt.Errorf("origin %q: want an exact scheme://host[:port], without credentials or wildcards", s)
	}
	if u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.HasSuffix(s, "#") {
		return fmt.Errorf("origin %q: an origin has no path, query or fragment (not even a trailing /)", s)
	}
	host := strings.ToLower(u.Hostname())
	for _, r := range host {
		if r > 0x7e {
			return fmt.Errorf("origin %q: browsers send an international host name in its xn-- form", s)
		}
	}
	if strings.Contains(host, ":") {
		ip := net.ParseIP(host)
		if ip == nil {
			return fmt.Errorf("origin %q: bad host", s)
		}
		host = "[" + ip.String() + "]"
	}
	canonical := strings.ToLower(u.Scheme) + "://" + host
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("origin %q: bad port", s)
		}
		if !(u.Scheme == "http" && n == 80) && !(u.Scheme == "https" && n == 443) {
			canonical += ":" + strconv.Itoa(n)
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return fmt.Errorf("origin %q: empty port", s)
	}
	if canonical != s {
		return fmt.Errorf("origin %q: browsers send it as %s (lower case, no default port); list it that way", s, canonical)
	}
	return nil
}

// Header values of the browser rules, built once: a preflight or an
// answer to a listed origin writes them without allocating.
var (
	// The request headers A2A clients send: the media type, the
	// caller's credentials, the version and extension negotiation (1.0's
	// A2A-Extensions and 0.3's X-A2A-Extensions, since one endpoint
	// serves both and reads both) and a stream's resume point. Any other
	// requested header is not allowed.
	corsAllowHeaders = []string{"Content-Type, Authorization, A2A-Version, A2A-Extensions, X-A2A-Extensions, Last-Event-ID"}
	// What a page may read of an answer beyond the safelisted headers:
	// the negotiated version and extensions (echoed under the name the
	// client used) and when to retry.
	corsExposeHeaders = []string{"A2A-Version, A2A-Extensions, X-A2A-Extensions, Retry-After"}
	rpcAllowMethods   = []string{"POST"}
	rpcAllow          = []string{"POST, OPTIONS"}
	cardAllowMethods  = []string{"GET, HEAD"}
	cardAllow         = []string{"GET, HEAD, OPTIONS"}
	varyOrigin        = []string{"Origin"}
	allowAnyOrigin    = []string{"*"}
	allowCredentials  = []string{"true"}
	cardPreflightAge  = []string{strconv.Itoa(int(DefaultCORSMaxAge.Seconds()))}
)

// crossOriginRefusal is the one-line body of a refused cross-origin
// request. It names the fix for the page's developer and echoes nothing
// the request sent.
const crossOriginRefusal = "a2a: cross-origin request refused: list the page's origin in the a2a cors block to allow it"

// simpleRequestRefusal is the body of the 403 to a page of an allowed
// origin whose state-changing request was not preflighted: the fix is the
// JSON media type every A2A client sends.
const simpleRequestRefusal = "a2a: cross-origin request refused: a page's call must send Content-Type: application/json, so that the browser preflights it"

// maxLoggedOrigin bounds the Origin header as logged: it is the caller's
// text, and may be as long as Caddy lets a header be.
const maxLoggedOrigin = 256

// browserPolicy is a mount's rules for browser callers: the cross-origin
// protection of its state-changing requests (on with or without a cors
// block) and the CORS answers for the origins the block lists.
type browserPolicy struct {
	// csrf trusts the listed origins; cross trusts none, and so tells
	// every browser request from another origin.
	csrf, cross *http.CrossOriginProtection
	// origins are the listed origins; nil without a cors block.
	origins map[string]bool
	// any is `origins *`: every origin, never with credentials.
	any         bool
	credentials bool
	maxAge      []string
}

// newBrowserPolicy builds the rules of c (nil: no cors block). c has
// been checked.
func newBrowserPolicy(c *CORS) (*browserPolicy, error) {
	p := &browserPolicy{csrf: http.NewCrossOriginProtection(), cross: http.NewCrossOriginProtection()}
	if c == nil {
		return p, nil
	}
	p.credentials = c.Credentials
	p.maxAge = []string{strconv.FormatInt(int64(time.Duration(c.MaxAge)/time.Second), 10)}
	p.origins = make(map[string]bool, len(c.Origins))
	for _, o := range c.Origins {
		if o == anyOrigin {
			p.any = true
			continue
		}
		p.origins[o] = true
		if err := p.csrf.AddTrustedOrigin(o); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// listed reports whether a page of origin gets CORS answers. With
// `origins *` every answer carries them, Origin or not, so that none
// varies by Origin.
func (p *browserPolicy) listed(origin string) bool {
	return p.any || (origin != "" && p.origins[origin])
}

// gateRPC applies the browser rules to a request on the RPC path before
// its envelope is looked at. It answers OPTIONS (a preflight gets the
// CORS headers only for a listed origin) and refuses, with 403, a
// cross-origin browser request that no listed origin allows. Otherwise it
// sets the CORS headers of the answer now, so that whatever the answer
// turns out to be (JSON, an SSE stream, or an HTTP error that Caddy's
// error handling renders) a listed origin's page can read it. It
// reports whether it answered.
func (p *browserPolicy) gateRPC(w http.ResponseWriter, r *http.Request, log *zap.Logger) bool {
	return p.gate(w, r, log, rpcAllow, rpcAllowMethods)
}

// gate is gateRPC for a path that answers the methods allowMethods
// (allow, its Allow header, adds OPTIONS): the HTTP+JSON routes too.
func (p *browserPolicy) gate(w http.ResponseWriter, r *http.Request, log *zap.Logger, allow, allowMethods []string) bool {
	h := w.Header()
	if p.origins != nil && !p.any {
		// The answer depends on Origin whenever specific origins are
		// listed, for caches too (a 405 is cacheable).
		addVaryOrigin(h)
	}
	origin := r.Header.Get("Origin")
	listed := p.listed(origin)
	if r.Method == http.MethodOptions {
		h["Allow"] = allow
		if listed && r.Header.Get("Access-Control-Request-Method") != "" {
			p.allowOrigin(h, origin)
			h["Access-Control-Allow-Methods"] = allowMethods
			h["Access-Control-Allow-Headers"] = corsAllowHeaders
			h["Access-Control-Max-Age"] = p.maxAge
		}
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	if !p.any {
		// Listed origins are its trusted origins; requests with neither
		// Sec-Fetch-Site nor Origin pass.
		if err := p.csrf.Check(r); err != nil {
			refuseCrossOrigin(w, r, log, origin, err.Error(), crossOriginRefusal)
			return true
		}
	}
	// An allowed origin (listed, or any with *) passes only with a CORS
	// request: one the browser preflighted, so that the origin's
	// allowance was asked before anything was sent. A simple request (a
	// form, a no-cors fetch, a body-less POST) is sent first and judged
	// after, and origins * would otherwise let every site's pages make
	// one with their visitors' cookies or cached credentials.
	if !preflighted(r) && p.cross.Check(r) != nil {
		if listed {
			// The page may read why, as any answer: its origin is allowed.
			p.allowOrigin(h, origin)
			h["Access-Control-Expose-Headers"] = corsExposeHeaders
		}
		refuseCrossOrigin(w, r, log, origin, "not preflighted: "+r.Method+" without a JSON Content-Type", simpleRequestRefusal)
		return true
	}
	if listed {
		p.allowOrigin(h, origin)
		h["Access-Control-Expose-Headers"] = corsExposeHeaders
	}
	return false
}

// refuseCrossOrigin answers 403 with msg and logs why (reason) with what
// the browser said of the request's origin.
func refuseCrossOrigin(w http.ResponseWriter, r *http.Request, log *zap.Logger, origin, reason, msg string) {
	if len(origin) > maxLoggedOrigin {
		origin = origin[:maxLoggedOrigin]
	}
	log.Info("a2a: cross-origin request refused (403)",
		zap.String("origin", origin),
		zap.String("sec_fetch_site", r.Header.Get("Sec-Fetch-Site")),
		zap.String("host", r.Host),
		zap.String("method", r.Method),
		zap.String("path", r.URL.Path),
		zap.String("remote_addr", r.RemoteAddr),
		zap.String("reason", reason))
	http.Error(w, msg, http.StatusForbidden)
}

// preflighted reports whether a browser sends r only after a CORS
// preflight allowed it: a method other than the safelisted GET, HEAD and
// POST, or a Content-Type other than the three a form can send (checked
// by its essence only: a value a browser would still preflight for its
// length or bytes is refused all the same, and those types are 415 here
// anyway). Request headers are not looked at: a proxy or a Caddy
// directive (forward_auth's copy_headers) may add Authorization to a
// request the browser sent without one.
func preflighted(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost:
	default:
		return true
	}
	ct := r.Header.Get("Content-Type")
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.TrimSpace(ct)
	if ct == "" {
		return false
	}
	return !strings.EqualFold(ct, "application/x-www-form-urlencoded") &&
		!strings.EqualFold(ct, "multipart/form-data") && !strings.EqualFold(ct, "text/plain")
}

// allowOrigin names origin as allowed: itself (never * when credentials
// are on, which the config refuses with *), or * for `origins *`.
func (p *browserPolicy) allowOrigin(h http.Header, origin string) {
	if p.any {
		h["Access-Control-Allow-Origin"] = allowAnyOrigin
		return
	}
	h["Access-Control-Allow-Origin"] = []string{origin}
	if p.credentials {
		h["Access-Control-Allow-Credentials"] = allowCredentials
	}
}

// gateCard applies the public card's browser rule: any origin may read
// it, without credentials, whatever the cors block says (browser
// clients discover agents by it, and it holds nothing private). It
// answers OPTIONS and reports whether it did.
func gateCard(w http.ResponseWriter, r *http.Request) bool {
	h := w.Header()
	h["Access-Control-Allow-Origin"] = allowAnyOrigin
	if r.Method != http.MethodOptions {
		return false
	}
	h["Allow"] = cardAllow
	if r.Header.Get("Access-Control-Request-Method") != "" {
		h["Access-Control-Allow-Methods"] = cardAllowMethods
		h["Access-Control-Allow-Headers"] = corsAllowHeaders
		h["Access-Control-Max-Age"] = cardPreflightAge
	}
	w.WriteHeader(http.StatusNoContent)
	return true
}

// addVaryOrigin adds Origin to Vary, keeping what an earlier handler
// (encode's Accept-Encoding, say) put there.
func addVaryOrigin(h http.Header) {
	if v, ok := h["Vary"]; ok {
		// A full slice: never append into an array another handler
		// may share.
		h["Vary"] = append(v[:len(v):len(v)], "Origin")
		return
	}
	h["Vary"] = varyOrigin
}

package caddya2a

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
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
	// trusted origins of the cross-origin protection. "*" (alone) allows
	// any origin, without credentials. Required.
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

// check refuses what no browser could match and credentials for any
// origin; it fills MaxAge's default. Shared by JSON and Caddyfile.
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
	if c.MaxAge == 0 {
		c.MaxAge = caddy.Duration(DefaultCORSMaxAge)
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

// unmarshalCORS parses `cors { origins <origin>...; credentials on|off;
// max_age <duration> }`; every key may appear once.
func (h *Handler) unmarshalCORS(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	line := d.Line()
	c := &CORS{}
	seen := map[string]int{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		key := d.Val()
		if line, dup := seen[key]; dup {
			return d.Errf("duplicate cors subdirective %q (first at line %d)", key, line)
		}
		seen[key] = d.Line()
		switch key {
		case "origins":
			args, err := argsNoBlock(d, 1, -1)
			if err != nil {
				return err
			}
			c.Origins = args
			if err := (&CORS{Origins: args}).check(); err != nil {
				return d.Err(err.Error())
			}
		case "credentials":
			v, err := oneArg(d)
			if err != nil {
				return err
			}
			switch v {
			case "on":
				c.Credentials = true
			case "off":
				c.Credentials = false
			default:
				return d.Errf("credentials: want on or off, got %q", v)
			}
		case "max_age":
			dur, err := durationArg(d)
			if err != nil {
				return err
			}
			c.MaxAge = dur
		default:
			return d.Errf("unknown cors subdirective %q", key)
		}
	}
	// Checked on a copy: MaxAge stays as written, its default is filled
	// at provision as for JSON.
	probe := *c
	if err := probe.check(); err != nil {
		return d.Errf("%v (cors block at line %d)", err, line)
	}
	h.CORS = c
	return nil
}

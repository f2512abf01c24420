package cli

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
)

// origin is u's scheme://host[:port] in lower case, the scheme's default
// port left out, or "" when u is not an http or https URL with a host.
// Credentials given for one origin go to no other, as a browser's would
// not.
func origin(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return ""
	}
	scheme := strings.ToLower(p.Scheme)
	port := p.Port()
	switch {
	case scheme != "http" && scheme != "https":
		return ""
	case scheme == "http" && port == "80", scheme == "https" && port == "443":
		port = ""
	}
	host := strings.ToLower(p.Hostname())
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host
}

// TrustOrigin lets the command send its credentials (Header) to one
// more origin, "https://host[:port]" (the --trust-origin flag): that of
// an interface the card names on another origin than its own.
func (o *Options) TrustOrigin(s string) error {
	p, err := url.Parse(s)
	or := origin(s)
	if err != nil || or == "" || (p.Path != "" && p.Path != "/") || p.RawQuery != "" || p.Fragment != "" || p.User != nil {
		return fmt.Errorf("--trust-origin %q: want an origin, http(s)://host[:port]", s)
	}
	if !slices.Contains(o.TrustedOrigins, or) {
		o.TrustedOrigins = append(o.TrustedOrigins, or)
		o.noteFlag("--trust-origin", or)
	}
	return nil
}

// mayCredential says whether the command's credentials may go to the
// interface at u of the card read at cardURL: to the card's own origin,
// or one the user trusted.
func (o *Options) mayCredential(cardURL, u string) bool {
	or := origin(u)
	return or != "" && (or == origin(cardURL) || slices.Contains(o.TrustedOrigins, or))
}

// originOf is u's origin, or u itself when it has none (a gRPC
// host:port), for a message.
func originOf(u string) string {
	if or := origin(u); or != "" {
		return or
	}
	return u
}

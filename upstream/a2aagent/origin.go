package a2aagent

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// ParseOrigin reads an origin as the config names one, scheme://host[:port]
// (http or https, no path, query, fragment or user info, and no IPv6 zone:
// a zone names an interface of this machine, and its %25 would not survive
// the round trip), and returns it in the form origins are compared in:
// lower case, the port always given.
func ParseOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" ||
		u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" ||
		strings.Contains(u.Hostname(), "%") {
		return "", fmt.Errorf("%q is not an origin: want scheme://host[:port], http or https, nothing after it", s)
	}
	return originOf(u), nil
}

// originOf is u's scheme, host and port, compared as one: the default port
// written out, so that http://a and http://a:80 are the same origin.
func originOf(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = "80"
		if scheme == "https" {
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// originError: the card's interface is on an origin the upstream does not
// allow. Runs carry callers' messages and header_up's credentials, so a
// card (which the agent, or whoever answers at its address, writes) must
// not be able to send them anywhere else.
type originError struct {
	// url is the interface's URL, origin its origin as the card wrote it.
	url, origin string
}

func (e *originError) Error() string {
	return fmt.Sprintf("upstream: the card's JSON-RPC interface %q is on another origin (%s) than the upstream's url; allow_origin names the origins it may use", e.url, e.origin)
}

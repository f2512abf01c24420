package handler

import (
	"errors"
	"slices"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// extensions is a service's declared extensions, indexed for the per
// request negotiation.
type extensions struct {
	declared map[string]bool
	// required lists the URIs a client must activate, in declared order.
	required []string
}

func newExtensions(list []protocol.Extension) (extensions, error) {
	x := extensions{declared: make(map[string]bool, len(list))}
	for _, ext := range list {
		u := ext.URI
		switch {
		case u == "":
			return x, errors.New("handler: an extension has no URI")
		case strings.ContainsAny(u, ", \t\r\n"):
			// The headers are comma-separated lists: such a URI could
			// never be requested.
			return x, errors.New("handler: extension URI " + u + " contains a comma or white space")
		case x.declared[u]:
			return x, errors.New("handler: extension " + u + " is declared twice")
		}
		x.declared[u] = true
		if ext.Required {
			x.required = append(x.required, u)
		}
	}
	return x, nil
}

// SetExtensions replaces the declared extensions: a gateway declares its
// agent's, which it learns from the agent's card and which may change.
func (s *Service) SetExtensions(list []protocol.Extension) error {
	x, err := newExtensions(list)
	if err != nil {
		return err
	}
	s.ext.Store(&x)
	return nil
}

// Negotiation is what one request's extension headers activated.
type Negotiation struct {
	// Activated are the requested URIs this service declares, in the
	// order requested, without duplicates.
	Activated []string
	// missing are the required URIs the request did not activate.
	missing []string
}

// Negotiate reads the URIs a client requested, as the lines of its
// extension headers (each a comma-separated list; A2A 1.0's
// A2A-Extensions and 0.3's X-A2A-Extensions alike): the activated ones are
// the requested URIs the service declares. Unknown URIs are ignored, as
// the spec asks: no fallback, no error.
func (s *Service) Negotiate(headers ...[]string) Negotiation {
	x := s.ext.Load()
	var n Negotiation
	requested := false
	for _, lines := range headers {
		requested = requested || len(lines) > 0
	}
	if len(x.declared) == 0 || !requested {
		n.missing = x.required
		return n
	}
	for _, lines := range headers {
		for _, line := range lines {
			for uri := range strings.SplitSeq(line, ",") {
				uri = strings.TrimSpace(uri)
				if x.declared[uri] && !slices.Contains(n.Activated, uri) {
					n.Activated = append(n.Activated, uri)
				}
			}
		}
	}
	for _, u := range x.required {
		if !slices.Contains(n.Activated, u) {
			n.missing = append(n.missing, u)
		}
	}
	return n
}

// requiredError is the answer to a request that did not activate a
// required extension: -32008 in both versions. A2A 1.0 names the code;
// 0.3 only asks for "an appropriate error", and the same code (its message
// naming the URIs; 0.3 errors carry no data) lets one client-side check
// serve both versions. Several missing URIs are listed comma-separated, the
// header's own list format.
func (n *Negotiation) requiredError() *protocol.Error {
	if len(n.missing) == 0 {
		return nil
	}
	return protocol.ErrExtensionSupportRequired(strings.Join(n.missing, ", "))
}

// needsExtensions reports whether method m is refused without the
// required extensions. Fetching the extended card is discovery, like the
// public card: a client learns about the extensions from it.
func needsExtensions(m protocol.Method) bool {
	return m != protocol.MethodExtendedCard
}

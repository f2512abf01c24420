package handler

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// The extension headers: A2A 1.0 names it A2A-Extensions, 0.3 named it
// X-A2A-Extensions. Both are read whatever the method's version, and the
// answer echoes under the name(s) the client used. The keys are the
// canonical forms, looked up directly to skip canonicalisation.
const (
	extensionsHeader    = "A2A-Extensions"
	extensionsKey       = "A2a-Extensions"
	extensionsHeaderV03 = "X-A2A-Extensions"
	extensionsKeyV03    = "X-A2a-Extensions"
)

// extensions is an endpoint's declared extensions, indexed for the per
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

// negotiation is what one request activated.
type negotiation struct {
	// activated are the requested URIs this endpoint declares, in the
	// order requested, without duplicates.
	activated []string
	// missing are the required URIs the request did not activate.
	missing []string
}

// negotiate reads the extension headers of r and echoes the activated
// URIs on w under each header name the client used (before anything is
// written, so JSON and SSE answers alike carry it). Unknown URIs are
// ignored, as the spec asks: no fallback, no error.
func (x *extensions) negotiate(w http.ResponseWriter, r *http.Request) negotiation {
	var n negotiation
	v10, v03 := r.Header[extensionsKey], r.Header[extensionsKeyV03]
	if len(x.declared) == 0 || (len(v10) == 0 && len(v03) == 0) {
		n.missing = x.required
		return n
	}
	for _, lines := range [][]string{v10, v03} {
		for _, line := range lines {
			for uri := range strings.SplitSeq(line, ",") {
				uri = strings.TrimSpace(uri)
				if x.declared[uri] && !slices.Contains(n.activated, uri) {
					n.activated = append(n.activated, uri)
				}
			}
		}
	}
	for _, u := range x.required {
		if !slices.Contains(n.activated, u) {
			n.missing = append(n.missing, u)
		}
	}
	if len(n.activated) > 0 {
		echo := []string{strings.Join(n.activated, ", ")}
		h := w.Header()
		if len(v10) > 0 {
			h[extensionsKey] = echo
		}
		if len(v03) > 0 {
			h[extensionsKeyV03] = echo
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
func (n *negotiation) requiredError() *protocol.Error {
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

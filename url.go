package caddya2a

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"golang.org/x/net/http/httpguts"
)

// checkAbsoluteURL accepts an absolute http(s) URL with a host and no
// credentials (a card must not leak them, and an upstream must get its
// secrets from header_up where they are not logged with the URL).
func checkAbsoluteURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("invalid URL %q: %w", s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("URL %q must be absolute http:// or https://", s)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("URL %q has no host", s)
	}
	if u.User != nil {
		return nil, fmt.Errorf("URL %q must not carry credentials", s)
	}
	return u, nil
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

// checkPublicURL accepts the card's RPC URL: clients POST to it verbatim.
func checkPublicURL(s string) error {
	u, err := checkAbsoluteURL(s)
	if err != nil {
		return err
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("URL %q must not have a query or fragment", s)
	}
	return nil
}

// errBadHost refuses a card request whose host cannot be put in a URL.
var errBadHost = errors.New("a2a: request host is missing or invalid")

// rpcURL is the public JSON-RPC URL for the card served to r: the
// configured url, or else the URL the client reached, with the card path
// replaced by the rpc path.
func (h *Handler) rpcURL(r *http.Request) (string, error) {
	if h.publicURL != "" {
		return h.publicURL, nil
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host := r.Host
	// Forwarded headers are honoured only when Caddy decided the peer is a
	// trusted proxy (the server's trusted_proxies); from anyone else they
	// would let a client rewrite the card others may be served.
	if trusted, _ := caddyhttp.GetVar(r.Context(), caddyhttp.TrustedProxyVarKey).(bool); trusted {
		switch p := strings.ToLower(firstValue(r.Header.Get("X-Forwarded-Proto"))); p {
		case "http", "https":
			scheme = p
		}
		if fh := firstValue(r.Header.Get("X-Forwarded-Host")); fh != "" && validHost(fh) {
			host = fh
		}
	}
	if !validHost(host) {
		return "", errBadHost
	}
	u := url.URL{Scheme: scheme, Host: host, Path: strippedPrefix(r) + h.RPCPath}
	return u.String(), nil
}

// strippedPrefix is the path prefix a handler before this one removed
// (handle_path, uri strip_prefix), so a mount under /agent/ advertises
// /agent/a2a. A rewrite that is not a pure strip yields "".
func strippedPrefix(r *http.Request) string {
	orig, ok := r.Context().Value(caddyhttp.OriginalRequestCtxKey).(http.Request)
	if !ok || orig.URL == nil {
		return ""
	}
	op, cp := orig.URL.Path, r.URL.Path
	if len(op) <= len(cp) || !strings.HasSuffix(op, cp) {
		return ""
	}
	prefix := strings.TrimSuffix(op[:len(op)-len(cp)], "/")
	if !strings.HasPrefix(prefix, "/") {
		return ""
	}
	return prefix
}

// firstValue is the first element of a comma-separated header value: the
// one the proxy nearest the client wrote.
func firstValue(v string) string {
	if i := strings.IndexByte(v, ','); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v)
}

// validHost accepts what net/http accepts as a Host header (the bytes of
// RFC 3986's host and port, which a URL carries as its authority; no
// '/', '?', '#', '@' or white space that would move them into another part
// of the URL), at most 255 bytes long.
func validHost(h string) bool {
	return h != "" && len(h) <= 255 && httpguts.ValidHostHeader(h)
}

package caddya2a

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/trace"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"golang.org/x/net/http/httpguts"

	"github.com/caddy-a2a/caddy-a2a/binding/httpbind"
	"github.com/caddy-a2a/caddy-a2a/binding/jsonrpc"
	"github.com/caddy-a2a/caddy-a2a/handler"
)

// serveCard answers GET and HEAD on the card path.
func (h *Handler) serveCard(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header()["Allow"] = cardAllow
		return caddyhttp.Error(http.StatusMethodNotAllowed, fmt.Errorf("a2a: %s on the agent card", r.Method))
	}
	u, err := h.rpcURL(r)
	if err != nil {
		return caddyhttp.Error(http.StatusBadRequest, err)
	}
	h.cards.ServeCard(w, r, httpbind.CardURLs{RPC: u, REST: h.restURL(u), GRPC: h.grpcAddr(u)})
	return nil
}

// startRPC checks the HTTP envelope of a JSON-RPC call (method, media
// type, size), resolves the caller and hands the body to the JSON-RPC
// binding. A stream it set up comes back unserved: ServeHTTP serves it
// from its own frame (jsonrpc.Binding.Start says why).
func (h *Handler) startRPC(w http.ResponseWriter, r *http.Request, req *a2aRequest) (jsonrpc.Stream, error) {
	if r.Method != http.MethodPost {
		w.Header()["Allow"] = rpcAllow
		return jsonrpc.Stream{}, caddyhttp.Error(http.StatusMethodNotAllowed, fmt.Errorf("a2a: %s on the JSON-RPC endpoint", r.Method))
	}
	if ct := r.Header.Get("Content-Type"); !jsonContentType(ct) {
		h.refuseMediaType(w, r, ct)
		return jsonrpc.Stream{}, nil
	}
	body, err := h.readBody(w, r)
	if err != nil {
		return jsonrpc.Stream{}, err
	}
	// Read to the end; closing lets HTTP/2 drop the stream's receive
	// buffer now rather than when a long stream ends.
	_ = r.Body.Close()
	return h.rpc.Start(w, r, body, h.caller(r, req)), nil
}

// caller is who makes request r (req as the envelope sees it), as every
// binding passes it to the service: the owner, where it came in, the
// headers its runs send the agent, and the request's info to fill.
func (h *Handler) caller(r *http.Request, req *a2aRequest) handler.Caller {
	owner := h.owner(r)
	if owner == "" && h.anonymous != nil {
		h.anonymous.Do(h.warnAnonymous)
	}
	c := handler.Caller{Owner: owner, Endpoint: req, Info: &req.info}
	if sp := trace.SpanFromContext(r.Context()); sp.SpanContext().IsValid() {
		// Caddy's tracing handler is in the route: the runs join its trace.
		c.Span = sp
	}
	if rh, ok := h.upstream.(requestHeaders); ok {
		if repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
			c.Headers = rh.RequestHeaders(repl)
		}
	}
	return c
}

// requestHeaders is an upstream whose header_up values use request
// placeholders (HTTPUpstream.RequestHeaders).
type requestHeaders interface {
	RequestHeaders(repl *caddy.Replacer) http.Header
}

// mediaTypeRefusal is the body of the 415: the likeliest first mistake
// (curl -d sends application/x-www-form-urlencoded) answered in words,
// where Caddy's error handling would write an empty body.
const mediaTypeRefusal = "a2a: unsupported Content-Type: send application/json or application/a2a+json"

// refuseMediaType answers 415 with mediaTypeRefusal itself, as the 403
// of a cross-origin call is answered, and logs what was sent at debug
// level (Caddy logs a handler's error the same way).
func (h *Handler) refuseMediaType(w http.ResponseWriter, r *http.Request, ct string) {
	if h.logger != nil {
		if len(ct) > maxLoggedOrigin {
			ct = ct[:maxLoggedOrigin]
		}
		h.logger.Debug("a2a: request refused (415)", zap.String("content_type", ct),
			zap.String("path", r.URL.Path), zap.String("remote_addr", r.RemoteAddr))
	}
	http.Error(w, mediaTypeRefusal, http.StatusUnsupportedMediaType)
}

// warnAnonymous tells the operator, once per config load, that this
// mount answers callers without an identity: every one of them is the
// same anonymous owner. Often that is an oversight (an auth directive
// whose matcher misses rpc_path); nothing changes for the caller. It
// names the empty ListTasks, the symptom that brings an operator here:
// anonymous callers would otherwise list one another's tasks.
func (h *Handler) warnAnonymous() {
	if h.logger == nil {
		return
	}
	h.logger.Warn(anonymousWarning, zap.String("rpc_path", h.RPCPath), zap.String("rest_path", h.RESTPath), zap.String("owner", h.Owner))
}

// anonymousWarning is warnAnonymous's message.
const anonymousWarning = "a2a: the A2A endpoint is served to anonymous callers (the owner placeholder is empty on a request), " +
	"whose ListTasks is always empty; to gate it, put basic_auth or forward_auth in front of rpc_path (and rest_path): " +
	"see docs/gating.md, \"Public card, gated RPC\""

// exactBodyMax is the largest declared body length allocated at once.
// Nearly every JSON-RPC request is smaller, and takes one allocation of
// exactly its size; a larger declared length is only a claim, so its
// buffer grows as the bytes arrive instead.
const exactBodyMax = 16 << 10

// readBody reads the request body within max_request_body.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	limit := h.MaxRequestBody
	if r.ContentLength > limit {
		return nil, caddyhttp.Error(http.StatusRequestEntityTooLarge,
			fmt.Errorf("a2a: request body of %d bytes exceeds max_request_body %d", r.ContentLength, limit))
	}
	var err error
	var body []byte
	if r.ContentLength > 0 {
		// The length is known and within the limit, and net/http ends the
		// body there.
		body, err = readDeclared(r.Body, r.ContentLength)
	} else {
		var buf bytes.Buffer
		_, err = buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit))
		body = buf.Bytes()
	}
	if err != nil {
		if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, caddyhttp.Error(http.StatusRequestEntityTooLarge,
				fmt.Errorf("a2a: request body exceeds max_request_body %d", mbe.Limit))
		}
		// A client that went away or sent a short body.
		return nil, caddyhttp.Error(http.StatusBadRequest, fmt.Errorf("a2a: reading request body: %w", err))
	}
	return body, nil
}

// readDeclared reads a body of declared length n. Up to exactBodyMax it
// is one allocation of exactly n bytes (bytes.Buffer's ReadFrom would grow
// it once more for its minimum read); beyond, the buffer starts at
// exactBodyMax and doubles only when full, up to n, so a client that
// declares megabytes and sends a byte holds 16 KiB, and the buffer is never
// more than twice what arrived.
func readDeclared(r io.Reader, n int64) ([]byte, error) {
	buf := make([]byte, min(n, exactBodyMax))
	off := 0
	for {
		m, err := io.ReadFull(r, buf[off:])
		off += m
		if err != nil {
			return nil, err
		}
		if int64(off) == n {
			return buf, nil
		}
		grown := make([]byte, min(2*int64(len(buf)), n))
		copy(grown, buf)
		buf = grown
	}
}

// owner evaluates the owner setting for r. The placeholders are config; the
// values are Caddy's (e.g. the user basic_auth authenticated), so no
// caller-sent text is ever expanded.
func (h *Handler) owner(r *http.Request) string {
	repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	if !ok {
		return ""
	}
	return repl.ReplaceAll(h.Owner, "")
}

// jsonContentType accepts the two media types A2A clients send
// (application/json, and application/a2a+json which A2A 1.0.1 prefers),
// with any parameters. A missing one is refused like a wrong one: it is
// what a browser sends for a no-cors request, which needs no preflight,
// so accepting it would let any page post JSON-RPC with the visitor's
// credentials.
func jsonContentType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || mt == "application/a2a+json"
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

// baseURL is the mount's public base URL of its JSON-RPC URL u: u
// without rpc_path (its origin if u does not end in it). It is the iss of
// the signed deliveries of push configs (PushOptions.Issuer), as the card
// gives the mount.
func (h *Handler) baseURL(u string) string {
	if base := strings.TrimSuffix(u, h.RPCPath); base != u {
		return base
	}
	return originOf(u)
}

// Package httpbind holds what every binding over HTTP shares (JSON-RPC
// now, HTTP+JSON next): the SSE stream writer with its write deadlines,
// the A2A-Version and extension headers, the JSON answer, and the Agent
// Card's HTTP answer with its ETags. It knows HTTP and the neutral model,
// never a binding's envelope: a binding hands it its frame encoding.
package httpbind

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/handler"
)

// Header values set on every JSON answer; shared slices so writing them
// does not allocate.
var jsonContentType = []string{"application/json"}

// VersionHeader is the A2A-Version request header; versionKey is its
// canonical form, looked up directly because Header.Get would allocate to
// canonicalize the mixed-case spelling on every request.
const (
	VersionHeader = "A2A-Version"
	versionKey    = "A2a-Version"
)

// The extension headers: A2A 1.0 names it A2A-Extensions, 0.3 named it
// X-A2A-Extensions. Both are read whatever the method's version, and the
// answer echoes under the name(s) the client used. The keys are the
// canonical forms, looked up directly to skip canonicalisation.
const (
	extensionsKey    = "A2a-Extensions"
	extensionsKeyV03 = "X-A2a-Extensions"
)

// LastEventKey is the canonical form of the SSE Last-Event-ID header.
const LastEventKey = "Last-Event-Id"

// HeaderValue is Header.Get for a key already in canonical form.
func HeaderValue(h http.Header, canonicalKey string) string {
	if v := h[canonicalKey]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// RequestedVersion is the A2A-Version a request names: the header, else
// the query parameter of the same name, else "" (which means 0.3).
func RequestedVersion(r *http.Request) string {
	if v := HeaderValue(r.Header, versionKey); v != "" {
		return v
	}
	if r.URL != nil && r.URL.RawQuery != "" {
		return r.URL.Query().Get(VersionHeader)
	}
	return ""
}

// Negotiate reads r's extension headers, has svc activate what it
// declares, and echoes the activated URIs on w under each header name the
// client used, before anything is written, so JSON and SSE answers alike
// carry them.
func Negotiate(svc *handler.Service, w http.ResponseWriter, r *http.Request) handler.Negotiation {
	v10, v03 := r.Header[extensionsKey], r.Header[extensionsKeyV03]
	n := svc.Negotiate(v10, v03)
	if len(n.Activated) > 0 {
		echo := []string{strings.Join(n.Activated, ", ")}
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

// largeAnswer is the size from which a JSON answer is written within a
// write deadline. A smaller one fits the connection's buffers and does not
// block; a larger one (a task holding megabytes of artifacts) to a client
// that stops reading would hold the request's goroutine for good, as an
// SSE frame would without its deadline. Below it the answer costs no
// deadline update (BenchmarkSendMessageBlocking).
const largeAnswer = 64 << 10

// WriteJSON answers 200 with the JSON body b. A large body is written
// within timeout (0: none), after which the connection is cut.
func WriteJSON(w http.ResponseWriter, b []byte, timeout time.Duration) {
	if len(b) > largeAnswer && timeout > 0 {
		// A writer without deadlines (a test recorder) is written as is.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(timeout))
	}
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// privateCache is the Cache-Control of an extended card: it is one
// caller's, never a shared cache's to hand on.
var privateCache = []string{"private"}

// WriteExtendedCard answers an extended card document doc through
// write (the binding's own success answer), marked private.
func WriteExtendedCard(w http.ResponseWriter, write func()) {
	w.Header()["Cache-Control"] = privateCache
	write()
}

// Challenge sets the WWW-Authenticate of a 401 (RFC 9110 requires one;
// "" is a server whose only scheme HTTP cannot name, mutual TLS) and
// keeps the answer out of caches.
func Challenge(w http.ResponseWriter, challenge string) {
	h := w.Header()
	if challenge != "" {
		h.Set("WWW-Authenticate", challenge)
	}
	h["Cache-Control"] = noStore
}

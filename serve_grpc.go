package caddya2a

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/binding/grpcbind"
)

// The gRPC binding's HTTP envelope: which requests are its, and the card's
// gRPC address.

// isGRPC reports whether r is a gRPC call of an A2A service: HTTP/2, a
// gRPC content type, and a method of lf.a2a.v1.A2AService (1.0) or
// a2a.v1.A2AService (0.3).
func isGRPC(r *http.Request) bool {
	return r.ProtoMajor == 2 && (strings.HasPrefix(r.URL.Path, grpcbind.ServicePath) || strings.HasPrefix(r.URL.Path, grpcbind.ServicePathV03)) &&
		strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc")
}

// grpcAllow is the one method a gRPC call uses.
var grpcAllow = []string{"POST"}

// serveGRPC hands a gRPC call to the binding with the caller Caddy's auth
// resolved, after the browser rules every binding applies.
func (h *Handler) serveGRPC(w http.ResponseWriter, r *http.Request) {
	if h.browser.gate(w, r, h.logger, grpcAllow, grpcAllow) {
		return
	}
	req, start := h.begin(r, bindingGRPC)
	r = r.WithContext(grpcbind.WithCaller(r.Context(), h.caller(r, req)))
	h.grpc.ServeHTTP(flushWriter{w, http.NewResponseController(w)}, r)
	// After the call: a gRPC stream is answered by the same handler
	// call, so its duration is the whole stream's.
	h.answered(r, req, start)
}

// flushWriter gives grpc-go the http.Flusher it asks a ResponseWriter
// for: Caddy's writers flush through http.ResponseController (Unwrap).
type flushWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func (f flushWriter) Flush() { _ = f.rc.Flush() }

func (f flushWriter) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// grpcAddr is the gRPC address of the card served with JSON-RPC URL
// rpcURL: its host and port (the scheme's default port when it names
// none), as A2A 1.0 lists a gRPC interface; "" without the binding.
func (h *Handler) grpcAddr(rpcURL string) string {
	if h.grpc == nil {
		return ""
	}
	u, err := url.Parse(rpcURL)
	if err != nil || u.Host == "" {
		return ""
	}
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

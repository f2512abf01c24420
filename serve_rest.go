package caddya2a

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/caddy-a2a/caddy-a2a/binding/rest"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// The HTTP envelope of the HTTP+JSON binding: which paths are its, and
// the refusals made before the binding sees a request (unknown route,
// method, media type, size), each answered as the binding answers its
// own errors, a google.rpc.Status body.

// restRoute reports whether path is under rest_path, and its part after
// it ("/message:send").
func (h *Handler) restRoute(path string) (string, bool) {
	if !strings.HasPrefix(path, h.restBase) {
		return "", false
	}
	rel := path[len(h.restBase):]
	return rel, strings.HasPrefix(rel, "/")
}

// startREST answers a request under rest_path; a stream it set up comes
// back unserved, for ServeHTTP to serve from its own frame.
func (h *Handler) startREST(w http.ResponseWriter, r *http.Request, rel string, req *a2aRequest) (rest.Stream, error) {
	esc := r.URL.EscapedPath()
	if rest.UnsafePath(esc) {
		// Before any route, gate or service: Caddy's matchers judged this
		// request by another path than the one it names here.
		writeRESTRefusal(w, strings.HasPrefix(rel, "/v1/"), http.StatusBadRequest, protocol.StatusInvalidArgument, unsafePathRefusal)
		return rest.Stream{}, nil
	}
	// The escaped path, as the routes read it: an id's encoded ':' stays
	// part of the id, never an action.
	if strings.HasPrefix(esc, h.restBase) {
		rel = esc[len(h.restBase):]
	}
	rt := rest.Match(r.Method, rel)
	if !rt.Found() || !h.rest.Serves(rt) {
		writeRESTRefusal(w, false, http.StatusNotFound, protocol.StatusNotFound,
			"No HTTP+JSON route at "+r.URL.Path+": the routes under "+h.RESTPath+" are /message:send, /message:stream, /tasks, /tasks/{id}, /tasks/{id}:cancel and /tasks/{id}:subscribe (A2A 1.0), and the same under /v1 but /tasks (A2A 0.3, when served)")
		return rest.Stream{}, nil
	}
	allow := restAllow[rt.Allow]
	if h.browser.gate(w, r, h.logger, allow.withOptions, allow.methods) {
		return rest.Stream{}, nil
	}
	if rt.Op == 0 {
		w.Header()["Allow"] = allow.withOptions
		writeRESTRefusal(w, rt.V03, http.StatusMethodNotAllowed, protocol.StatusUnimplemented,
			r.Method+" is not a method of "+r.URL.Path+" (allowed: "+rt.Allow+")")
		return rest.Stream{}, nil
	}
	var body []byte
	if rt.Body && (r.ContentLength != 0 || bodyRequired(rt.Op)) {
		// A route whose body may be left out (cancel) takes a request
		// without one and without a Content-Type, as a2a-go sends it; one
		// that sends a body sends its type, as for JSON-RPC.
		if ct := r.Header.Get("Content-Type"); !jsonContentType(ct) {
			writeRESTRefusal(w, rt.V03, http.StatusUnsupportedMediaType, protocol.StatusInvalidArgument, strings.TrimPrefix(mediaTypeRefusal, "a2a: "))
			return rest.Stream{}, nil
		}
		var err error
		if body, err = h.readBody(w, r); err != nil {
			if he, ok := errors.AsType[caddyhttp.HandlerError](err); ok && he.StatusCode == http.StatusRequestEntityTooLarge {
				perr := protocol.ErrInvalidParams("The request body exceeds max_request_body (" + strconv.FormatInt(h.MaxRequestBody, 10) + " bytes)")
				perr.Metadata = map[string]string{"limit": "max_request_body", "max": strconv.FormatInt(h.MaxRequestBody, 10)}
				rest.WriteStatus(w, perr, protocol.Mapping{Code: protocol.StatusInvalidArgument, HTTP: http.StatusRequestEntityTooLarge}, rt.V03)
				return rest.Stream{}, nil
			}
			return rest.Stream{}, err
		}
		_ = r.Body.Close()
	}
	return h.rest.Start(w, r, rt, body, h.caller(r, req)), nil
}

// unsafePathRefusal is the message of the 400 answering a path under
// rest_path that rest.UnsafePath refuses.
const unsafePathRefusal = "The request path has a dot segment (. or .., encoded or not) or an encoded slash or backslash (%2F, %5C): no HTTP+JSON route has one, and Caddy's matchers would have read it as another path"

// restAllow holds, for each Allow value of the routes, the header values
// the browser gate and a 405 write: made once, not per request.
var restAllow = func() map[string]struct{ withOptions, methods []string } {
	m := map[string]struct{ withOptions, methods []string }{}
	for _, a := range []string{"GET", "POST", "GET, POST", "GET, DELETE"} {
		m[a] = struct{ withOptions, methods []string }{[]string{a + ", OPTIONS"}, []string{a}}
	}
	return m
}()

// bodyRequired reports whether operation op cannot go without a body.
func bodyRequired(op protocol.Method) bool {
	return op == protocol.MethodSend || op == protocol.MethodStream || op == protocol.MethodPushSet
}

// writeRESTRefusal answers a request the binding never sees with a
// google.rpc.Status body of the HTTP status and canonical code given.
func writeRESTRefusal(w http.ResponseWriter, v03 bool, status int, code protocol.StatusCode, msg string) {
	rest.WriteStatus(w, &protocol.Error{Code: protocol.CodeInvalidRequest, Message: msg}, protocol.Mapping{Code: code, HTTP: status}, v03)
}

// restURL is the public HTTP+JSON base URL of the card served to r, made
// from rpcURL (the JSON-RPC URL of the same card): its path's rpc_path
// replaced with rest_path, or, for a configured url that does not end in
// rpc_path, rest_path on the url's scheme and host.
func (h *Handler) restURL(rpcURL string) string {
	if h.rest == nil {
		return ""
	}
	base := strings.TrimSuffix(rpcURL, h.RPCPath)
	if base == rpcURL {
		base = originOf(rpcURL)
	}
	return base + h.restBase
}

// originOf is the scheme://host of an absolute URL.
func originOf(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		if j := strings.IndexByte(u[i+3:], '/'); j >= 0 {
			return u[:i+3+j]
		}
	}
	return u
}

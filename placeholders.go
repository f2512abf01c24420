package caddya2a

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/caddyserver/caddy/v2"

	"github.com/caddy-a2a/caddy-a2a/handler"
)

// begin starts an A2A request on binding: its placeholders are set for
// the handlers and the access log after this one, before a byte of the
// answer is written, so that a deferred response header (`header
// >X-A2A-Method {http.a2a.method}`) carries them too:
//
//	{http.a2a.method}      the operation (A2A 1.0's method name, both versions)
//	{http.a2a.version}     0.3 or 1.0
//	{http.a2a.binding}     jsonrpc, rest or grpc
//	{http.a2a.task_id}     the task answered
//	{http.a2a.context_id}  its context
//	{http.a2a.task_state}  its state in the answer (a stream's: at its start)
//	{http.a2a.error_code}  the A2A error code answered (none when it is not one)
//	{http.a2a.deduplicated} true for a send answered as a retry of an earlier
//	                       one (exactly-once sends), false for any other request
//
// One provider, read when a placeholder is asked for: it reads what the
// binding and the service have learnt so far, and nothing is boxed for a
// request whose placeholders no one reads.
func (h *Handler) begin(r *http.Request, binding int) (*a2aRequest, time.Time) {
	req := &a2aRequest{binding: binding, h: h, r: r}
	if repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		repl.Map(req.get)
	}
	return req, time.Now()
}

// answered is what follows a request's answer (for a stream, its setup):
// the request counted and timed, and its span told what A2A made of it.
func (h *Handler) answered(r *http.Request, req *a2aRequest, start time.Time) {
	if h.requests != nil {
		h.requests.observe(req.binding, &req.info, time.Since(start))
	}
	if sp := trace.SpanFromContext(r.Context()); sp.IsRecording() {
		// The request's span (Caddy's tracing) says what A2A made of it.
		i := &req.info
		sp.SetAttributes(attribute.String("a2a.method", i.Method.String()), attribute.String("a2a.binding", bindingNames[req.binding]),
			attribute.String("a2a.version", i.Version.String()), attribute.String("a2a.task_id", i.TaskID), attribute.Int("a2a.error_code", i.Code))
	}
}

// a2aRequest is one A2A request as the envelope sees it: its binding and
// what the binding and the service learnt of it, which answer its
// placeholders.
type a2aRequest struct {
	info    handler.RequestInfo
	binding int
	// h and r resolve the caller's endpoint (handler.Endpoint) when the
	// service asks for it.
	h *Handler
	r *http.Request
}

// RPCURL is the mount's public JSON-RPC URL as the request reached it.
func (p *a2aRequest) RPCURL() (string, error) { return p.h.rpcURL(p.r) }

// get answers the {http.a2a.*} placeholders.
func (p *a2aRequest) get(key string) (any, bool) {
	name, ok := strings.CutPrefix(key, "http.a2a.")
	if !ok {
		return nil, false
	}
	i := &p.info
	switch name {
	case "binding":
		return bindingNames[p.binding], true
	case "method":
		if i.Method != 0 {
			return i.Method.String(), true
		}
	case "version":
		if i.Version != 0 {
			return i.Version.String(), true
		}
	case "task_id":
		// Known and empty when no task was answered (a refusal): a
		// `header` directive, which keeps an unknown placeholder's text,
		// then writes nothing rather than the placeholder.
		return i.TaskID, true
	case "context_id":
		return i.ContextID, true
	case "task_state":
		if i.TaskID != "" {
			return i.State.String(), true
		}
	case "error_code":
		if i.Code != 0 {
			return strconv.Itoa(i.Code), true
		}
	case "deduplicated":
		return strconv.FormatBool(i.Deduplicated), true
	}
	return "", true
}

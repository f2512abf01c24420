// Package rest is the HTTP+JSON binding of A2A 1.0 (§11): the operations
// of the service (handler.Service) as routes under a base path, bodies and
// results in the 1.0 ProtoJSON the JSON-RPC binding carries in its params
// and results, errors as google.rpc.Status JSON with the spec's HTTP
// status, streams as SSE frames each holding one StreamResponse. Every
// rule about tasks, streams, limits and errors is the service's, so a call
// answers the same over either binding.
package rest

import (
	"bytes"
	"net/http"

	"github.com/caddy-a2a/caddy-a2a/binding/call"
	"github.com/caddy-a2a/caddy-a2a/binding/httpbind"
	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// Binding serves HTTP+JSON requests for one service.
type Binding struct {
	svc *handler.Service
	// codec and codec03 read and write the 1.0 and the 0.3 routes'
	// bodies; nil for a version the service does not serve (its routes
	// are not served then).
	codec, codec03 protocol.Codec
}

// New returns the HTTP+JSON binding of svc: 1.0's routes if it serves
// 1.0, 0.3's (/v1/…) if it serves 0.3.
func New(svc *handler.Service) *Binding {
	b := &Binding{svc: svc}
	if svc.Wire().Serves(protocol.V10) {
		b.codec = svc.Wire().Codec(protocol.V10)
	}
	if svc.Wire().Serves(protocol.V03) {
		b.codec03 = protocol.NewRESTCodecV03(svc.Wire().Limits)
	}
	return b
}

// Serves reports whether the binding serves route rt's version.
func (b *Binding) Serves(rt Route) bool {
	if rt.V03 {
		return b.codec03 != nil
	}
	return b.codec != nil
}

// Stream is a stream set up by Start and not yet served; the zero Stream
// has nothing to serve.
type Stream = httpbind.Stream

// sse is one streamed answer: the SSE writer and the frames of the
// binding, one allocation.
type sse struct {
	httpbind.SSE
	frames
}

// frames writes each event alone, as a StreamResponse (of the route's
// version), and an error after the stream started as
// {"error":<google.rpc.Status>}, as a2a-go reads it.
type frames struct {
	codec protocol.Codec
	v03   bool
}

func (f *frames) AppendEvent(dst []byte, ev *protocol.Event) []byte {
	return f.codec.AppendStreamResult(dst, ev)
}

func (f *frames) AppendError(dst []byte, perr *protocol.Error) []byte {
	return appendStatus(dst, perr, protocol.MapError(perr), f.v03)
}

// appendStatus is the error body of a route of 0.3 (v03) or 1.0.
func appendStatus(dst []byte, perr *protocol.Error, m protocol.Mapping, v03 bool) []byte {
	if v03 {
		return protocol.AppendStatusV03(dst, perr, m)
	}
	return protocol.AppendStatus(dst, perr, m)
}

func (b *Binding) newSSE(w http.ResponseWriter, codec protocol.Codec, v03 bool) *sse {
	s := &sse{frames: frames{codec: codec, v03: v03}}
	s.Init(w, &s.frames, b.svc.Wire().WriteTimeout)
	return s
}

// Start answers the request r for route rt (Match, Found, with an Op),
// whose body, if the route reads one, the caller has read within its size
// limit and media type. A stream that has been set up is returned
// unserved: the caller serves it from its own frame.
func (b *Binding) Start(w http.ResponseWriter, r *http.Request, rt Route, body []byte, c handler.Caller) Stream {
	svc := b.svc
	writeErr := func(perr *protocol.Error) {
		c.Info.SetError(perr)
		WriteStatus(w, perr, protocol.MapError(perr), rt.V03)
	}
	neg := httpbind.Negotiate(svc, w, r)
	c.Extensions = neg.Activated
	codec, want := b.codec, protocol.V10
	if rt.V03 {
		codec, want = b.codec03, protocol.V03
	}
	c.Info.SetMethod(rt.Op, want)
	if raw := httpbind.RequestedVersion(r); raw != "" {
		if v, ok := protocol.ParseVersionHeader(raw); !ok || v != want {
			writeErr(versionError(raw, want))
			return Stream{}
		}
	}
	if perr := svc.Admit(rt.Op, &neg); perr != nil {
		writeErr(perr)
		return Stream{}
	}
	params, pooled, perr := b.routeParams(r, rt, body)
	if perr != nil {
		writeErr(perr)
		return Stream{}
	}
	if pooled != nil {
		defer httpbind.PutBuf(pooled)
	}
	ctx := r.Context()
	switch {
	case call.IsStream(rt.Op):
		var after string
		if rt.Op == protocol.MethodSubscribe {
			after = httpbind.HeaderValue(r.Header, httpbind.LastEventKey)
		}
		st, perr := call.Stream(ctx, svc, c, codec, rt.Op, params, after)
		if perr != nil {
			writeErr(perr)
			return Stream{}
		}
		return httpbind.NewStream(st, b.newSSE(w, codec, rt.V03))
	case rt.Op == protocol.MethodExtendedCard:
		doc, perr := svc.ExtendedCard(c, want, nil)
		if perr != nil {
			if perr.Code == protocol.CodeUnauthenticated {
				httpbind.Challenge(w, svc.Challenge())
			}
			writeErr(perr)
			return Stream{}
		}
		httpbind.WriteExtendedCard(w, func() {
			b.writeResult(w, func(dst []byte) []byte { return append(dst, doc...) })
		})
	default:
		res, perr := call.Unary(ctx, svc, c, codec, rt.Op, params)
		if perr != nil {
			writeErr(perr)
			return Stream{}
		}
		if res.Empty() {
			b.writeResult(w, appendEmpty)
		} else {
			b.writeResult(w, res.Append)
		}
	}
	return Stream{}
}

// appendEmpty is the answer of a call that returns nothing (a push
// config's delete): an empty object.
func appendEmpty(dst []byte) []byte { return append(dst, "{}"...) }

// routeParams builds the params object of route rt's operation: a send's
// body as it is; the task id of the path with the query's members (get,
// subscribe, list) or with the body's (cancel), in a pooled buffer
// (pooled, which the caller puts back once the call is over); a push
// config's path, query and body (pushParams); none for the extended card.
func (b *Binding) routeParams(r *http.Request, rt Route, body []byte) (params []byte, pooled *[]byte, perr *protocol.Error) {
	switch rt.Op {
	case protocol.MethodSend, protocol.MethodStream:
		if perr := protocol.CheckBody(body, b.svc.Wire().MaxJSONDepth); perr != nil {
			return nil, nil, perr
		}
		return body, nil, nil
	case protocol.MethodGetTask:
		buf, perr := b.params(r, rt.TaskID, getTaskQuery)
		return pooledParams(buf, perr)
	case protocol.MethodSubscribe:
		buf, perr := b.params(r, rt.TaskID, nil)
		return pooledParams(buf, perr)
	case protocol.MethodListTasks:
		more, perr := queryParams(nil, r.URL.Query(), listTasksQuery)
		if perr != nil {
			return nil, nil, perr
		}
		buf := httpbind.GetBuf()
		*buf = object(*buf, more)
		return *buf, buf, nil
	case protocol.MethodCancelTask:
		members, perr := bodyMembers(body, b.svc.Wire().MaxJSONDepth)
		if perr != nil {
			return nil, nil, perr
		}
		buf := httpbind.GetBuf()
		*buf = idParams(*buf, rt.TaskID, members)
		return *buf, buf, nil
	case protocol.MethodPushSet, protocol.MethodPushGet, protocol.MethodPushList, protocol.MethodPushDelete:
		params, perr := pushParams(r, rt, body, b.svc.Wire().MaxJSONDepth)
		return params, nil, perr
	case protocol.MethodExtendedCard:
		return nil, nil, nil
	}
	// Match routes to the operations above only.
	return nil, nil, protocol.ErrUnsupportedOperation("This operation is not supported")
}

// pooledParams is routeParams' answer for params built in buf.
func pooledParams(buf *[]byte, perr *protocol.Error) ([]byte, *[]byte, *protocol.Error) {
	if perr != nil {
		return nil, nil, perr
	}
	return *buf, buf, nil
}

// params is the params object {"id":<task id>, <the query's members>} in
// a pooled buffer.
func (b *Binding) params(r *http.Request, id string, known map[string]queryParam) (*[]byte, *protocol.Error) {
	buf := httpbind.GetBuf()
	var more []byte
	if r.URL.RawQuery != "" {
		var perr *protocol.Error
		if more, perr = queryParams(nil, r.URL.Query(), known); perr != nil {
			httpbind.PutBuf(buf)
			return nil, perr
		}
	}
	*buf = idParams(*buf, id, more)
	return buf, nil
}

// bodyMembers is what a body that may be empty adds to the params the
// path gives: nothing for no body, null or {}, else the object's members
// with their leading comma. A body is held to the rules of a JSON-RPC
// body (protocol.CheckBody).
func bodyMembers(body []byte, maxDepth int) ([]byte, *protocol.Error) {
	t := bytes.TrimSpace(body)
	if len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	if perr := protocol.CheckBody(t, maxDepth); perr != nil {
		return nil, perr
	}
	inner := bytes.TrimSpace(t[1 : len(t)-1])
	if len(inner) == 0 {
		return nil, nil
	}
	out := make([]byte, 0, len(inner)+1)
	out = append(out, ',')
	return append(out, inner...), nil
}

// versionError refuses a request for another version than the route's
// (want): the 1.0 routes serve 1.0 only, the /v1 routes 0.3 only.
func versionError(raw string, want protocol.Version) *protocol.Error {
	where := "this HTTP+JSON path, which serves A2A " + want.String()
	if want == protocol.V10 {
		where += " (the 0.3 routes are under /v1)"
	}
	perr := protocol.ErrVersionNotSupported(raw, "Protocol version "+raw+" is not served on "+where+": send A2A-Version: "+want.String()+" or none")
	perr.Metadata["supportedVersions"] = want.String()
	return perr
}

// writeResult answers 200 with the JSON appendResult encodes into a
// pooled buffer.
func (b *Binding) writeResult(w http.ResponseWriter, appendResult func(dst []byte) []byte) {
	buf := httpbind.GetBuf()
	*buf = appendResult(*buf)
	httpbind.WriteJSON(w, *buf, b.svc.Wire().WriteTimeout)
	httpbind.PutBuf(buf)
}

// WriteStatus answers perr as a google.rpc.Status body under mapping m
// (with Retry-After where m says when to come back), for a route of 0.3
// (v03: protocol.AppendStatusV03) or 1.0: also what the caller answers
// for what it refuses before the binding (an unknown path, a wrong
// method, an oversized body).
func WriteStatus(w http.ResponseWriter, perr *protocol.Error, m protocol.Mapping, v03 bool) {
	buf := httpbind.GetBuf()
	*buf = appendStatus(*buf, perr, m, v03)
	h := w.Header()
	h["Content-Type"] = jsonType
	if m.RetryAfter != "" {
		h["Retry-After"] = []string{m.RetryAfter}
	}
	w.WriteHeader(m.HTTP)
	_, _ = w.Write(*buf)
	httpbind.PutBuf(buf)
}

var jsonType = []string{"application/json"}

// Package jsonrpc is the JSON-RPC 2.0 binding of A2A, both wire versions
// on one endpoint: it reads the envelope, routes by method name (a "/"
// means 0.3, PascalCase 1.0) and the A2A-Version header, decodes params
// with the version's codec, calls the service (handler.Service) and writes
// its answer as a JSON-RPC response, or as SSE frames each holding one.
// Everything else (tasks, streams, limits, errors' meaning) is the
// service's.
package jsonrpc

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/binding/call"
	"github.com/caddy-a2a/caddy-a2a/binding/httpbind"
	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// Binding serves JSON-RPC requests for one service.
type Binding struct {
	svc *handler.Service
	// served says which versions the service serves, in a sentence
	// ("This agent serves A2A 1.0 and 0.3.") and as a list ("1.0,0.3").
	served, servedList string
}

// New returns the JSON-RPC binding of svc.
func New(svc *handler.Service) *Binding {
	var vs []string
	for _, v := range []protocol.Version{protocol.V10, protocol.V03} {
		if svc.Wire().Serves(v) {
			vs = append(vs, v.String())
		}
	}
	return &Binding{svc: svc, served: "This agent serves A2A " + strings.Join(vs, " and ") + ".", servedList: strings.Join(vs, ",")}
}

// Serve answers one JSON-RPC request whose body the caller has already
// read within its size limit. Protocol errors are JSON-RPC bodies on 200,
// for the streaming methods too when the error comes before the stream's
// first event (0.3's tasks/resubscribe excepted: serve says why).
func (b *Binding) Serve(w http.ResponseWriter, r *http.Request, body []byte, c handler.Caller) {
	b.Start(w, r, body, c).Serve()
}

// Start is Serve for a caller that serves streams itself: it answers
// every request as Serve does, except that a stream which has been set up
// is returned unserved, and the caller must call its Serve (at once, with
// w still valid). Why: an open stream parks its goroutine for as long as
// the client listens, on a stack sized by the deepest call the request
// made on its way there. Serving the stream from the caller's frame, after
// decoding and setup have returned, keeps that depth within Go's smallest
// stack that fits an HTTP/2 handler under Caddy: 8 KB per idle stream
// instead of 16 KB. bench/run.sh's idle-stream step (ONLY=idle) measures
// it; BENCHMARKS.md has both numbers.
func (b *Binding) Start(w http.ResponseWriter, r *http.Request, body []byte, c handler.Caller) Stream {
	return b.serve(w, r, body, c)
}

// Stream is a stream set up by Start and not yet served; the zero Stream
// has nothing to serve.
type Stream = httpbind.Stream

// sse is one streamed answer: the SSE writer and the JSON-RPC framing of
// its events, allocated together.
type sse struct {
	httpbind.SSE
	frames
}

func (b *Binding) newSSE(w http.ResponseWriter, id json.RawMessage, codec protocol.Codec) *sse {
	s := &sse{frames: frames{id: id, codec: codec}}
	s.Init(w, &s.frames, b.svc.Wire().WriteTimeout)
	return s
}

// frames wraps each event of a stream in a JSON-RPC response carrying the
// request's id.
type frames struct {
	id    json.RawMessage
	codec protocol.Codec
}

func (f *frames) AppendEvent(dst []byte, ev *protocol.Event) []byte {
	dst = protocol.AppendResultHead(dst, f.id)
	dst = f.codec.AppendStreamResult(dst, ev)
	return protocol.AppendResponseEnd(dst)
}

func (f *frames) AppendError(dst []byte, perr *protocol.Error) []byte {
	dst = protocol.AppendErrorHead(dst, f.id)
	dst = f.codec.AppendError(dst, perr)
	return protocol.AppendResponseEnd(dst)
}

// serve answers one request; a stream ready to be served is returned
// instead (Start says why).
func (b *Binding) serve(w http.ResponseWriter, r *http.Request, body []byte, c handler.Caller) Stream {
	svc := b.svc
	req, perr := protocol.DecodeRequestLimit(body, svc.Wire().MaxJSONDepth)
	raw := httpbind.RequestedVersion(r)
	hv, hvOK := protocol.ParseVersionHeader(raw)
	// Negotiated first so that every answer, errors included, echoes the
	// activated extensions.
	neg := httpbind.Negotiate(svc, w, r)
	c.Extensions = neg.Activated

	if req.Method == "" {
		// Nothing to route by: answer in the version the header names.
		codec := svc.Wire().Codec(protocol.V03)
		if hvOK && hv == protocol.V10 {
			codec = svc.Wire().Codec(protocol.V10)
		}
		c.Info.SetError(perr)
		b.writeError(w, codec, req.ID, perr)
		return Stream{}
	}

	dialect := protocol.DialectOf(req.Method)
	codec := svc.Wire().Codec(dialect)
	m, known := codec.Method(req.Method)
	c.Info.SetMethod(m, dialect)
	// An error found before a stream's first event is a plain JSON-RPC
	// error on 200, as for any method: that is what clients that peek at
	// the answer's media type read (the official conformance kit,
	// @a2a-js/sdk). 0.3's tasks/resubscribe keeps its one SSE error frame:
	// a2a-go v0.3's client reads only SSE frames there, and sees a plain
	// JSON answer as an empty stream with no error at all.
	sseError := known && m == protocol.MethodSubscribe && dialect == protocol.V03
	fail := func(codec protocol.Codec, perr *protocol.Error) {
		c.Info.SetError(perr)
		if sseError {
			s := b.newSSE(w, req.ID, codec)
			s.Fail(perr)
			s.Finish()
			return
		}
		b.writeError(w, codec, req.ID, perr)
	}

	if perr := b.checkVersion(raw, hv, hvOK, dialect, req.Method); perr != nil {
		if hvOK && hv == protocol.V10 {
			codec = svc.Wire().Codec(protocol.V10)
		}
		fail(codec, perr)
		return Stream{}
	}
	if perr != nil {
		if req.NoID {
			perr = requestFault(codec, m, known, req, perr)
		}
		fail(codec, perr)
		return Stream{}
	}
	if !known {
		fail(codec, protocol.ErrMethodNotFound(req.Method))
		return Stream{}
	}
	// Before the params are even decoded: nothing is read or written for
	// a call the service refuses as such.
	if perr := svc.Admit(m, &neg); perr != nil {
		fail(codec, perr)
		return Stream{}
	}

	ctx := r.Context()
	switch {
	case call.IsStream(m):
		var after string
		if m == protocol.MethodSubscribe {
			after = httpbind.HeaderValue(r.Header, httpbind.LastEventKey)
		}
		st, perr := call.Stream(ctx, svc, c, codec, m, req.Params, after)
		if perr != nil {
			fail(codec, perr)
			return Stream{}
		}
		return httpbind.NewStream(st, b.newSSE(w, req.ID, codec))
	case m == protocol.MethodExtendedCard:
		doc, perr := svc.ExtendedCard(c, dialect, req.Params)
		if perr != nil && perr.Code == protocol.CodeUnauthenticated {
			// HTTP's answer, not a JSON-RPC error: A2A defines no code for
			// it, and a client's credentials layer acts on the 401.
			c.Info.SetError(perr)
			httpbind.Challenge(w, svc.Challenge())
			http.Error(w, "a2a: "+perr.Message, http.StatusUnauthorized)
			return Stream{}
		}
		if perr != nil {
			fail(codec, perr)
			return Stream{}
		}
		httpbind.WriteExtendedCard(w, func() {
			b.writeResult(w, req.ID, func(dst []byte) []byte { return append(dst, doc...) })
		})
	default:
		res, perr := call.Unary(ctx, svc, c, codec, m, req.Params)
		if perr != nil {
			fail(codec, perr)
			return Stream{}
		}
		if res.Empty() {
			b.writeResult(w, req.ID, appendNull)
		} else {
			b.writeResult(w, req.ID, res.Append)
		}
	}
	return Stream{}
}

// requestFault is the error for a request refused as a notification
// (notification, -32600): the request's own faults come first, an unknown
// method (-32601), then params its method cannot take (-32602), as
// JSON-RPC clients and conformance suites expect of such a request.
func requestFault(codec protocol.Codec, m protocol.Method, known bool, req *protocol.Request, notification *protocol.Error) *protocol.Error {
	if !known {
		return protocol.ErrMethodNotFound(req.Method)
	}
	if perr := call.Check(codec, m, req.Params); perr != nil {
		return perr
	}
	return notification
}

// checkVersion applies the version rules to a request for method (of
// dialect) whose A2A-Version is raw, parsed as hv/hvOK. Every refusal
// says which versions this agent serves, in its message and, for 1.0
// clients, in the ErrorInfo metadata (supportedVersions).
func (b *Binding) checkVersion(raw string, hv protocol.Version, hvOK bool, dialect protocol.Version, method string) *protocol.Error {
	switch {
	case !hvOK:
		return b.versionError(raw, "Protocol version "+raw+" is not supported")
	case hv != dialect && dialect == protocol.V10:
		if raw == "" {
			return b.versionError(protocol.V03.String(), "Method "+method+" is an A2A 1.0 method but the request asks for A2A "+
				protocol.V03.String()+" (the default when no A2A-Version is sent): send the header A2A-Version: 1.0")
		}
		return b.versionError(raw, "Method "+method+" is an A2A 1.0 method but the request asks for A2A "+
			hv.String()+" (A2A-Version: "+raw+"): send A2A-Version: 1.0")
	case hv != dialect:
		return b.versionError(raw, "Method "+method+" is an A2A 0.3 method but the request asks for A2A "+hv.String()+
			": use the A2A 1.0 method or send A2A-Version: 0.3")
	case !b.svc.Wire().Serves(dialect):
		requested := raw
		if requested == "" {
			requested = dialect.String()
		}
		return b.versionError(requested, "Protocol version "+dialect.String()+" is not served by this agent")
	}
	return nil
}

// versionError is -32009 for requested, its message msg followed by the
// versions served.
func (b *Binding) versionError(requested, msg string) *protocol.Error {
	perr := protocol.ErrVersionNotSupported(requested, msg+". "+b.served)
	perr.Metadata["supportedVersions"] = b.servedList
	return perr
}

// appendNull is the result of a call that returns nothing (push config
// delete): "result": null, as JSON-RPC requires a result member.
func appendNull(dst []byte) []byte { return append(dst, "null"...) }

// writeResult answers a success response whose result appendResult
// encodes straight into a pooled buffer.
func (b *Binding) writeResult(w http.ResponseWriter, id json.RawMessage, appendResult func(dst []byte) []byte) {
	buf := httpbind.GetBuf()
	*buf = protocol.AppendResultHead(*buf, id)
	*buf = appendResult(*buf)
	*buf = protocol.AppendResponseEnd(*buf)
	httpbind.WriteJSON(w, *buf, b.svc.Wire().WriteTimeout)
	httpbind.PutBuf(buf)
}

// writeError answers a JSON-RPC error response encoded by codec.
func (b *Binding) writeError(w http.ResponseWriter, codec protocol.Codec, id json.RawMessage, perr *protocol.Error) {
	buf := httpbind.GetBuf()
	*buf = protocol.AppendErrorHead(*buf, id)
	*buf = codec.AppendError(*buf, perr)
	*buf = protocol.AppendResponseEnd(*buf)
	httpbind.WriteJSON(w, *buf, b.svc.Wire().WriteTimeout)
	httpbind.PutBuf(buf)
}

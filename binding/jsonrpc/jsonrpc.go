package handler

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// Header values set on every JSON answer; shared slices so writing them
// does not allocate.
var (
	jsonContentType = []string{"application/json"}
)

// versionHeader is the A2A-Version request header; versionKey is its
// canonical form, looked up directly because Header.Get would allocate to
// canonicalize the mixed-case spelling on every request.
const (
	versionHeader = "A2A-Version"
	versionKey    = "A2a-Version"
)

// headerValue is Header.Get for a key already in canonical form.
func headerValue(h http.Header, canonicalKey string) string {
	if v := h[canonicalKey]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// requestedVersion is the A2A-Version a request names: the header, else
// the query parameter of the same name, else "" (which means 0.3).
func requestedVersion(r *http.Request) string {
	if v := headerValue(r.Header, versionKey); v != "" {
		return v
	}
	if r.URL != nil && r.URL.RawQuery != "" {
		return r.URL.Query().Get(versionHeader)
	}
	return ""
}

// serveRPC answers one request; a stream ready to be served is returned
// instead (StartRPC says why).
func (e *Endpoint) serveRPC(w http.ResponseWriter, r *http.Request, body []byte, c Caller) *Stream {
	req, perr := protocol.DecodeRequestLimit(body, e.opts.MaxJSONDepth)
	raw := requestedVersion(r)
	hv, hvOK := protocol.ParseVersionHeader(raw)
	// Negotiated first so that every answer, errors included, echoes the
	// activated extensions.
	neg := e.ext.negotiate(w, r)
	c.extensions = neg.activated

	if req.Method == "" {
		// Nothing to route by: answer in the version the header names.
		codec := e.codecs[protocol.V03]
		if hvOK && hv == protocol.V10 {
			codec = e.codecs[protocol.V10]
		}
		e.writeError(w, codec, req.ID, perr)
		return nil
	}

	dialect := protocol.DialectOf(req.Method)
	codec := e.codecs[dialect]
	m, known := codec.Method(req.Method)
	streaming := known && m.Streaming()
	fail := func(codec protocol.Codec, perr *protocol.Error) {
		if streaming {
			s := newSSE(w, req.ID, codec, e.opts.WriteTimeout)
			s.fail(perr)
			s.finish()
			return
		}
		e.writeError(w, codec, req.ID, perr)
	}

	if perr := e.checkVersion(raw, hv, hvOK, dialect, req.Method); perr != nil {
		if hvOK && hv == protocol.V10 {
			codec = e.codecs[protocol.V10]
		}
		fail(codec, perr)
		return nil
	}
	if perr != nil {
		fail(codec, perr)
		return nil
	}
	if !known {
		e.writeError(w, codec, req.ID, protocol.ErrMethodNotFound(req.Method))
		return nil
	}
	if needsExtensions(m) {
		// Before the params are even decoded: nothing is read or written
		// for a client that cannot speak a required extension.
		if perr := neg.requiredError(); perr != nil {
			fail(codec, perr)
			return nil
		}
	}

	ctx := r.Context()
	switch m {
	case protocol.MethodSend:
		p, err := codec.DecodeSend(req.Params)
		if err != nil {
			fail(codec, asParamsError(err))
			return nil
		}
		var ev protocol.Event
		if e.opts.Reply == ReplyMessage {
			ev.Message, perr = e.sendReply(ctx, c, p)
		} else {
			ev.Task, perr = e.send(ctx, c, p)
		}
		if perr != nil {
			fail(codec, perr)
			return nil
		}
		e.writeResult(w, req.ID, func(dst []byte) []byte { return codec.AppendSendResult(dst, &ev) })
	case protocol.MethodGetTask:
		p, err := codec.DecodeGetTask(req.Params)
		if err != nil {
			fail(codec, asParamsError(err))
			return nil
		}
		t, perr := e.getTask(ctx, c, p)
		if perr != nil {
			fail(codec, perr)
			return nil
		}
		e.writeResult(w, req.ID, func(dst []byte) []byte { return codec.AppendTask(dst, t) })
	case protocol.MethodCancelTask:
		p, err := codec.DecodeTaskID(req.Params)
		if err != nil {
			fail(codec, asParamsError(err))
			return nil
		}
		t, perr := e.cancelTask(ctx, c, p)
		if perr != nil {
			fail(codec, perr)
			return nil
		}
		e.writeResult(w, req.ID, func(dst []byte) []byte { return codec.AppendTask(dst, t) })
	case protocol.MethodListTasks:
		p, err := codec.DecodeListTasks(req.Params)
		if err != nil {
			fail(codec, asParamsError(err))
			return nil
		}
		res, perr := e.listTasks(ctx, c, p)
		if perr != nil {
			fail(codec, perr)
			return nil
		}
		e.writeResult(w, req.ID, func(dst []byte) []byte { return codec.AppendListTasks(dst, res) })
	case protocol.MethodStream, protocol.MethodSubscribe:
		if !e.opts.Streaming {
			fail(codec, protocol.ErrUnsupportedOperation("Streaming is not supported by this agent"))
			return nil
		}
		return e.serveStream(w, r, c, codec, req.ID, m, req.Params)
	case protocol.MethodPushSet, protocol.MethodPushGet, protocol.MethodPushList, protocol.MethodPushDelete:
		fail(codec, protocol.ErrPushNotSupported())
	case protocol.MethodExtendedCard:
		// The card never declares an extended card, so per A2A 1.0 this is
		// -32004 (not -32007, which means declared but not configured).
		fail(codec, protocol.ErrUnsupportedOperation("This agent does not declare an extended Agent Card"))
	default:
		e.writeError(w, codec, req.ID, protocol.ErrMethodNotFound(req.Method))
	}
	return nil
}

// checkVersion applies the version rules to a request for method (of
// dialect) whose A2A-Version is raw, parsed as hv/hvOK.
func (e *Endpoint) checkVersion(raw string, hv protocol.Version, hvOK bool, dialect protocol.Version, method string) *protocol.Error {
	switch {
	case !hvOK:
		return protocol.ErrVersionNotSupported(raw, "")
	case hv != dialect && dialect == protocol.V10:
		requested := raw
		if requested == "" {
			requested = protocol.V03.String()
		}
		return protocol.ErrVersionNotSupported(requested,
			"Method "+method+" is an A2A 1.0 method but the request asks for A2A "+protocol.V03.String()+
				" (the default when no A2A-Version is sent): send the header A2A-Version: 1.0")
	case hv != dialect:
		return protocol.ErrVersionNotSupported(raw,
			"Method "+method+" is an A2A 0.3 method but the request asks for A2A "+hv.String()+
				": use the A2A 1.0 method or send A2A-Version: 0.3")
	case !e.served[dialect]:
		requested := raw
		if requested == "" {
			requested = dialect.String()
		}
		return protocol.ErrVersionNotSupported(requested, "Protocol version "+dialect.String()+" is not served by this agent")
	}
	return nil
}

// writeResult answers a success response whose result appendResult
// encodes straight into a pooled buffer.
func (e *Endpoint) writeResult(w http.ResponseWriter, id json.RawMessage, appendResult func(dst []byte) []byte) {
	b := getBuf()
	*b = protocol.AppendResultHead(*b, id)
	*b = appendResult(*b)
	*b = protocol.AppendResponseEnd(*b)
	writeJSON(w, *b)
	putBuf(b)
}

// writeError answers a JSON-RPC error response encoded by codec.
func (e *Endpoint) writeError(w http.ResponseWriter, codec protocol.Codec, id json.RawMessage, perr *protocol.Error) {
	b := getBuf()
	*b = protocol.AppendErrorHead(*b, id)
	*b = codec.AppendError(*b, perr)
	*b = protocol.AppendResponseEnd(*b)
	writeJSON(w, *b)
	putBuf(b)
}

func writeJSON(w http.ResponseWriter, b []byte) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

package handler

import (
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// RequestInfo is what is learnt of one request as it is served: the
// binding and the service fill it (through Caller.Info) for the envelope's
// placeholders, log fields and metrics. A nil *RequestInfo takes every
// call and keeps nothing.
type RequestInfo struct {
	// Method and Version are the operation and the wire version the
	// request asked for (zero until known).
	Method  protocol.Method
	Version protocol.Version
	// Code is the A2A error code answered, 0 for none.
	Code int
	// TaskID, ContextID and State are the task the request made, read or
	// changed, as the answer gave it.
	TaskID, ContextID string
	State             protocol.TaskState
	// Deduplicated: the request was a send of a message its owner had
	// sent before under the same messageId, answered from the first
	// send's task without calling the agent.
	Deduplicated bool
}

// SetMethod records the operation and version.
func (i *RequestInfo) SetMethod(m protocol.Method, v protocol.Version) {
	if i != nil {
		i.Method, i.Version = m, v
	}
}

// SetError records the error answered.
func (i *RequestInfo) SetError(perr *protocol.Error) {
	if i != nil && perr != nil {
		i.Code = perr.Code
	}
}

// SetTask records the task answered.
func (i *RequestInfo) SetTask(t *protocol.Task) {
	if i != nil && t != nil {
		i.TaskID, i.ContextID, i.State = t.ID, t.ContextID, t.Status.State
	}
}

// log is the service's logger with the fields of the request c makes
// (method and version as far as known, and the traceID when the request
// is traced), so a line an error answer leaves joins its request's access
// log line. Only error paths call it: an answer that goes well costs
// nothing.
func (c Caller) log(base *zap.Logger) *zap.Logger {
	var fields []zap.Field
	if i := c.Info; i != nil && i.Method != 0 {
		fields = append(fields, zap.String("method", i.Method.String()), zap.String("version", i.Version.String()))
	}
	if c.Span != nil && c.Span.SpanContext().IsValid() {
		fields = append(fields, zap.String("traceID", c.Span.SpanContext().TraceID().String()))
	}
	if len(fields) == 0 {
		return base
	}
	return base.With(fields...)
}

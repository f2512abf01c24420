// Package call is the one method table every binding calls through: a
// method's params, in the JSON of a version's codec, are decoded, the
// service (handler.Service) is called, and its answer is kept for the
// binding to encode with the same codec. A binding builds the params its
// way (JSON-RPC's params member; HTTP+JSON's path, query and body; a gRPC
// message as ProtoJSON), frames the answer its way, and keeps its own
// special cases (the extended card's 401, a delete's empty answer). A new
// A2A method is one case in the codec, one here, and one route or RPC per
// binding.
package call

import (
	"context"
	"encoding/json"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// IsStream reports whether m answers with a stream of events
// (SendStreamingMessage, SubscribeToTask and their 0.3 names).
func IsStream(m protocol.Method) bool {
	return m == protocol.MethodStream || m == protocol.MethodSubscribe
}

// Unary calls unary method m for caller c with params in codec's JSON.
// A params error is -32602 (protocol.ParamsError); every other error is
// the service's. The extended card is not in the table: each binding
// answers its refusal in its own way.
func Unary(ctx context.Context, svc *handler.Service, c handler.Caller, codec protocol.Codec, m protocol.Method, params json.RawMessage) (Result, *protocol.Error) {
	r := Result{codec: codec, kind: m}
	var perr *protocol.Error
	switch m {
	case protocol.MethodSend:
		p, err := codec.DecodeSend(params)
		if err != nil {
			return r, protocol.ParamsError(err)
		}
		r.event, perr = svc.SendMessage(ctx, c, p)
	case protocol.MethodGetTask:
		p, err := codec.DecodeGetTask(params)
		if err != nil {
			return r, protocol.ParamsError(err)
		}
		r.task, perr = svc.GetTask(ctx, c, p)
	case protocol.MethodCancelTask:
		p, err := codec.DecodeTaskID(params)
		if err != nil {
			return r, protocol.ParamsError(err)
		}
		r.task, perr = svc.CancelTask(ctx, c, p)
	case protocol.MethodListTasks:
		p, err := codec.DecodeListTasks(params)
		if err != nil {
			return r, protocol.ParamsError(err)
		}
		r.list, perr = svc.ListTasks(ctx, c, p)
	case protocol.MethodPushSet:
		p, err := codec.DecodePushConfig(params)
		if err != nil {
			return r, protocol.ParamsError(err)
		}
		r.push, perr = svc.SetPushConfig(ctx, c, p)
	case protocol.MethodPushGet:
		p, err := codec.DecodePushConfigID(params, false)
		if err != nil {
			return r, protocol.ParamsError(err)
		}
		r.push, perr = svc.GetPushConfig(ctx, c, p)
	case protocol.MethodPushDelete:
		p, err := codec.DecodePushConfigID(params, true)
		if err != nil {
			return r, protocol.ParamsError(err)
		}
		perr = svc.DeletePushConfig(ctx, c, p)
	case protocol.MethodPushList:
		p, err := codec.DecodePushList(params)
		if err != nil {
			return r, protocol.ParamsError(err)
		}
		r.pushes, perr = svc.ListPushConfigs(ctx, c, p)
	default:
		// Streams, the extended card and unknown methods are not unary
		// calls of the table: a binding that routes one here has a bug.
		return r, protocol.ErrMethodNotFound("")
	}
	return r, perr
}

// Stream opens streaming method m for caller c with params in codec's
// JSON; lastEventID is where a subscription resumes (SSE's Last-Event-ID,
// gRPC's last-event-id metadata; "" for none).
func Stream(ctx context.Context, svc *handler.Service, c handler.Caller, codec protocol.Codec, m protocol.Method, params json.RawMessage, lastEventID string) (*handler.Stream, *protocol.Error) {
	switch m {
	case protocol.MethodStream:
		p, err := codec.DecodeSend(params)
		if err != nil {
			return nil, protocol.ParamsError(err)
		}
		return svc.SendStreamingMessage(ctx, c, p)
	case protocol.MethodSubscribe:
		p, err := codec.DecodeTaskID(params)
		if err != nil {
			return nil, protocol.ParamsError(err)
		}
		return svc.SubscribeToTask(ctx, c, p, lastEventID)
	}
	return nil, protocol.ErrMethodNotFound("")
}

// Check decodes params for m without calling the service: the -32602 a
// call would answer, or nil (also for a method without params of the
// table's). JSON-RPC names a request's faults in order with it.
func Check(codec protocol.Codec, m protocol.Method, params json.RawMessage) *protocol.Error {
	var err error
	switch m {
	case protocol.MethodSend, protocol.MethodStream:
		_, err = codec.DecodeSend(params)
	case protocol.MethodGetTask:
		_, err = codec.DecodeGetTask(params)
	case protocol.MethodCancelTask, protocol.MethodSubscribe:
		_, err = codec.DecodeTaskID(params)
	case protocol.MethodListTasks:
		_, err = codec.DecodeListTasks(params)
	}
	if err != nil {
		return protocol.ParamsError(err)
	}
	return nil
}

// Result is a unary call's answer, encoded when the binding writes it,
// straight into the binding's buffer. A value, not a closure: nothing is
// allocated to carry it.
type Result struct {
	codec  protocol.Codec
	kind   protocol.Method
	event  protocol.Event
	task   *protocol.Task
	list   *protocol.ListTasksResult
	push   *protocol.PushConfig
	pushes *protocol.PushListResult
}

// Empty reports an answer without a body of its own (a push config's
// delete): each binding writes its own empty answer (JSON-RPC's null,
// HTTP+JSON's {}, gRPC's Empty).
func (r *Result) Empty() bool { return r.kind == protocol.MethodPushDelete }

// Append appends the answer in the codec's JSON (nothing for an Empty
// one).
func (r *Result) Append(dst []byte) []byte {
	switch r.kind {
	case protocol.MethodSend:
		return r.codec.AppendSendResult(dst, &r.event)
	case protocol.MethodGetTask, protocol.MethodCancelTask:
		return r.codec.AppendTask(dst, r.task)
	case protocol.MethodListTasks:
		return r.codec.AppendListTasks(dst, r.list)
	case protocol.MethodPushSet, protocol.MethodPushGet:
		return r.codec.AppendPushConfig(dst, r.push)
	case protocol.MethodPushList:
		return r.codec.AppendPushList(dst, r.pushes)
	}
	return dst
}

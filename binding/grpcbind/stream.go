package grpcbind

import (
	"context"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/caddy-a2a/caddy-a2a/binding/httpbind"
	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// serveStream sends st's events as StreamResponse messages; the stream's
// error, if it ends with one, is the call's status.
func (b *Binding) serveStream(st *handler.Stream, ss grpc.ServerStreamingServer[a2apb.StreamResponse]) error {
	return serveStream(st, ss, b.codec)
}

// serveStream writes st to ss, each event encoded by codec and read into
// a new M (either version's StreamResponse).
func serveStream[M any, PM interface {
	*M
	proto.Message
}](st *handler.Stream, ss grpc.ServerStreamingServer[M], codec protocol.Codec) error {
	w := &streamWriter[M, PM]{codec: codec, ss: ss}
	st.Serve(w)
	return w.err
}

// streamWriter is the handler.EventWriter of a gRPC server stream. gRPC
// frames each message itself and sends it at once, so there is nothing to
// queue or flush. A2A's gRPC binding has no event ids: a client resumes
// with SubscribeToTask and the snapshot it begins with (or, beyond the
// spec, the metadata last-event-id, which it can only know from another
// binding).
type streamWriter[M any, PM interface {
	*M
	proto.Message
}] struct {
	codec protocol.Codec
	ss    grpc.ServerStreamingServer[M]
	err   error
}

func (w *streamWriter[M, PM]) Open() error { return w.ss.SendHeader(metadata.MD{}) }

func (w *streamWriter[M, PM]) Queue(_ string, ev *protocol.Event) error {
	buf := httpbind.GetBuf()
	defer httpbind.PutBuf(buf)
	*buf = w.codec.AppendStreamResult(*buf, ev)
	msg := new(M)
	if err := unmarshal.Unmarshal(*buf, PM(msg)); err != nil {
		return err
	}
	return w.ss.Send(msg)
}

func (w *streamWriter[M, PM]) Flush() error { return nil }

func (w *streamWriter[M, PM]) Idle() {}

// Heartbeat has nothing to send: gRPC has no comment frame, and HTTP/2
// keeps the connection alive with its own PINGs.
func (w *streamWriter[M, PM]) Heartbeat() error { return nil }

func (w *streamWriter[M, PM]) Fail(perr *protocol.Error) { w.err = statusError(perr) }

// CutOnUnload has nothing to cut: Stop ends every call of an unloaded
// config.
func (w *streamWriter[M, PM]) CutOnUnload(context.Context) {}

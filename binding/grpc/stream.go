package grpcbind

import (
	"context"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/caddy-a2a/caddy-a2a/binding/httpbind"
	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// serveStream sends st's events as StreamResponse messages; the stream's
// error, if it ends with one, is the call's status.
func (b *Binding) serveStream(st *handler.Stream, ss grpc.ServerStreamingServer[a2apb.StreamResponse]) error {
	w := &streamWriter{b: b, ss: ss}
	st.Serve(w)
	return w.err
}

// streamWriter is the handler.EventWriter of a gRPC server stream. gRPC
// frames each message itself and sends it at once, so there is nothing to
// queue or flush. A2A's gRPC binding has no event ids: a client resumes
// with SubscribeToTask and the snapshot it begins with (or, beyond the
// spec, the metadata last-event-id, which it can only know from another
// binding).
type streamWriter struct {
	b   *Binding
	ss  grpc.ServerStreamingServer[a2apb.StreamResponse]
	err error
}

func (w *streamWriter) Open() error { return w.ss.SendHeader(metadata.MD{}) }

func (w *streamWriter) Queue(_ string, ev *protocol.Event) error {
	buf := httpbind.GetBuf()
	defer httpbind.PutBuf(buf)
	*buf = w.b.codec.AppendStreamResult(*buf, ev)
	var msg a2apb.StreamResponse
	if err := unmarshal.Unmarshal(*buf, &msg); err != nil {
		return err
	}
	return w.ss.Send(&msg)
}

func (w *streamWriter) Flush() error { return nil }

func (w *streamWriter) Idle() {}

// Heartbeat has nothing to send: gRPC has no comment frame, and HTTP/2
// keeps the connection alive with its own PINGs.
func (w *streamWriter) Heartbeat() error { return nil }

func (w *streamWriter) Fail(perr *protocol.Error) { w.err = statusError(perr) }

// CutOnUnload has nothing to cut: Stop ends every call of an unloaded
// config.
func (w *streamWriter) CutOnUnload(context.Context) {}

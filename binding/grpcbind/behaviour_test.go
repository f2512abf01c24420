package grpcbind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/handler/handlertest"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// TestBehaviour runs the service's behaviour suite over gRPC (A2A 1.0's
// lf.a2a.v1.A2AService): a real grpc-go client, a2a-go's generated
// stubs, over HTTP/2 without TLS to the binding's ServeHTTP, as the
// module serves it on a site's h2c.
func TestBehaviour(t *testing.T) {
	handlertest.Run(t, newGRPCClient)
}

// ownerKey is the metadata the test caller's identity travels in; the
// test server reads it as the header it arrives as.
const ownerKey = "x-test-owner"

// grpcClient is the suite's Client over gRPC: each request message read
// from the 1.0 codec's params JSON (A2A 1.0's JSON is the proto's
// ProtoJSON), each answer written back as ProtoJSON and read by the
// codec. It checks what gRPC adds as it reads: that an error's status
// code is the canonical code A2A maps its code to, its ErrorInfo the
// error's reason.
type grpcClient struct {
	t     *testing.T
	cl    a2apb.A2AServiceClient
	codec protocol.Codec
}

func newGRPCClient(t *testing.T, svc *handler.Service) handlertest.Client {
	b := New(svc, 4<<20)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// As the module's serveGRPC does: the caller resolved from the
		// HTTP request, in the context grpc-go hands the methods.
		c := handler.Caller{Owner: r.Header.Get(ownerKey)}
		b.ServeHTTP(w, r.WithContext(WithCaller(r.Context(), c)))
	}))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	conn, err := grpc.NewClient(srv.Listener.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		b.Stop()
		srv.CloseClientConnections()
		srv.Close()
	})
	return &grpcClient{t: t, cl: a2apb.NewA2AServiceClient(conn), codec: protocol.NewCodec(protocol.V10, protocol.Limits{})}
}

// broken reports an answer that breaks the binding: the test fails, and
// the call answers an error no scenario expects (code 0), so that the
// scenario stops where it is, in whichever goroutine it called.
func (c *grpcClient) broken(format string, args ...any) *protocol.Error {
	msg := fmt.Sprintf(format, args...)
	c.t.Errorf("gRPC: %s", msg)
	return &protocol.Error{Message: "broken answer: " + msg}
}

// outgoing is ctx carrying the call's metadata: the version, the owner,
// more pairs kv.
func outgoing(ctx context.Context, owner string, kv ...string) context.Context {
	md := metadata.Pairs(append([]string{"a2a-version", "1.0"}, kv...)...)
	if owner != "" {
		md.Set(ownerKey, owner)
	}
	return metadata.NewOutgoingContext(ctx, md)
}

// request reads the codec's params JSON into msg.
func (c *grpcClient) request(js []byte, msg proto.Message) *protocol.Error {
	if err := protojson.Unmarshal(js, msg); err != nil {
		return c.broken("params %s are no %T: %v", js, msg, err)
	}
	return nil
}

// answer is msg as the codec's JSON.
func (c *grpcClient) answer(msg proto.Message) ([]byte, *protocol.Error) {
	js, err := protojson.Marshal(msg)
	if err != nil {
		return nil, c.broken("%T: %v", msg, err)
	}
	return js, nil
}

// status reads a call's error: a gRPC status whose code is the canonical
// code of the A2A error its ErrorInfo names.
func (c *grpcClient) status(err error) *protocol.Error {
	st, ok := status.FromError(err)
	if !ok {
		return c.broken("%v is no gRPC status", err)
	}
	perr := &protocol.Error{Message: st.Message()}
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			perr.Reason, perr.Metadata = d.GetReason(), d.GetMetadata()
			if d.GetDomain() != protocol.ErrorDomain {
				return c.broken("ErrorInfo domain %q", d.GetDomain())
			}
		case *errdetails.BadRequest:
			for _, v := range d.GetFieldViolations() {
				perr.Violations = append(perr.Violations, protocol.FieldViolation{Field: v.GetField(), Description: v.GetDescription()})
			}
		}
	}
	perr.Code = handlertest.CodeOf(perr.Reason, protocol.StatusCode(st.Code()))
	want := codes.Code(protocol.MapError(perr).Code)
	if perr.Code == protocol.CodeResourceExhausted {
		want = codes.ResourceExhausted
	}
	if perr.Code == 0 || st.Code() != want {
		return c.broken("status %s %q (reason %q) is A2A error %d, which maps to %s", st.Code(), st.Message(), perr.Reason, perr.Code, want)
	}
	return perr
}

func (c *grpcClient) Send(ctx context.Context, owner string, p *protocol.SendParams) (*protocol.Event, *protocol.Error) {
	req := &a2apb.SendMessageRequest{}
	if perr := c.request(c.codec.AppendSendParams(nil, p), req); perr != nil {
		return nil, perr
	}
	res, err := c.cl.SendMessage(outgoing(ctx, owner), req)
	if err != nil {
		return nil, c.status(err)
	}
	js, perr := c.answer(res)
	if perr != nil {
		return nil, perr
	}
	ev, err := c.codec.DecodeSendResult(js)
	if err != nil {
		return nil, c.broken("send result %s: %v", js, err)
	}
	return ev, nil
}

func (c *grpcClient) GetTask(ctx context.Context, owner string, p *protocol.GetTaskParams) (*protocol.Task, *protocol.Error) {
	req := &a2apb.GetTaskRequest{}
	if perr := c.request(c.codec.AppendGetTaskParams(nil, p), req); perr != nil {
		return nil, perr
	}
	res, err := c.cl.GetTask(outgoing(ctx, owner), req)
	return c.task(res, err)
}

func (c *grpcClient) CancelTask(ctx context.Context, owner string, id string) (*protocol.Task, *protocol.Error) {
	req := &a2apb.CancelTaskRequest{}
	if perr := c.request(c.codec.AppendTaskIDParams(nil, &protocol.TaskIDParams{ID: id}), req); perr != nil {
		return nil, perr
	}
	res, err := c.cl.CancelTask(outgoing(ctx, owner), req)
	return c.task(res, err)
}

// task reads a call's Task answer.
func (c *grpcClient) task(res *a2apb.Task, err error) (*protocol.Task, *protocol.Error) {
	if err != nil {
		return nil, c.status(err)
	}
	js, perr := c.answer(res)
	if perr != nil {
		return nil, perr
	}
	task, err := c.codec.DecodeTask(js)
	if err != nil {
		return nil, c.broken("task %s: %v", js, err)
	}
	return task, nil
}

func (c *grpcClient) ListTasks(ctx context.Context, owner string, p *protocol.ListTasksParams) (*protocol.ListTasksResult, *protocol.Error) {
	req := &a2apb.ListTasksRequest{}
	if perr := c.request(handlertest.ListTasksParams(p), req); perr != nil {
		return nil, perr
	}
	res, err := c.cl.ListTasks(outgoing(ctx, owner), req)
	if err != nil {
		return nil, c.status(err)
	}
	js, perr := c.answer(res)
	if perr != nil {
		return nil, perr
	}
	list, err := handlertest.DecodeListTasks(c.codec, js)
	if err != nil {
		return nil, c.broken("ListTasks answer %s: %v", js, err)
	}
	return list, nil
}

func (c *grpcClient) Stream(ctx context.Context, owner string, p *protocol.SendParams) (handlertest.Events, *protocol.Error) {
	req := &a2apb.SendMessageRequest{}
	if perr := c.request(c.codec.AppendSendParams(nil, p), req); perr != nil {
		return nil, perr
	}
	ss, err := c.cl.SendStreamingMessage(outgoing(ctx, owner), req)
	return c.stream(ss, err)
}

// Subscribe resumes after lastEventID through the metadata last-event-id
// (A2A's gRPC binding has no event ids of its own; the binding reads the
// SSE bindings' there).
func (c *grpcClient) Subscribe(ctx context.Context, owner string, id, lastEventID string) (handlertest.Events, *protocol.Error) {
	req := &a2apb.SubscribeToTaskRequest{}
	if perr := c.request(c.codec.AppendTaskIDParams(nil, &protocol.TaskIDParams{ID: id}), req); perr != nil {
		return nil, perr
	}
	var kv []string
	if lastEventID != "" {
		kv = []string{"last-event-id", lastEventID}
	}
	ss, err := c.cl.SubscribeToTask(outgoing(ctx, owner, kv...), req)
	return c.stream(ss, err)
}

// stream reads a server stream's first message: a gRPC stream's error
// comes with its first Recv, whether the call was refused or broke.
func (c *grpcClient) stream(ss grpc.ServerStreamingClient[a2apb.StreamResponse], err error) (handlertest.Events, *protocol.Error) {
	if err != nil {
		return nil, c.status(err)
	}
	s := &grpcEvents{c: c, ss: ss}
	first, err := s.Next()
	if perr, ok := err.(*protocol.Error); ok {
		return nil, perr
	}
	s.first, s.firstErr, s.peeked = first, err, true
	return s, nil
}

// grpcEvents reads a server stream, each StreamResponse one event.
type grpcEvents struct {
	c  *grpcClient
	ss grpc.ServerStreamingClient[a2apb.StreamResponse]
	// first is the first message's event, read when the stream opened.
	first    protocol.Event
	firstErr error
	peeked   bool
}

func (s *grpcEvents) Next() (protocol.Event, error) {
	if s.peeked {
		s.peeked = false
		return s.first, s.firstErr
	}
	msg, err := s.ss.Recv()
	if errors.Is(err, io.EOF) {
		return protocol.Event{}, io.EOF
	}
	if err != nil {
		return protocol.Event{}, s.c.status(err)
	}
	js, perr := s.c.answer(msg)
	if perr != nil {
		return protocol.Event{}, perr
	}
	ev, err := s.c.codec.DecodeStreamResult(js)
	if err != nil {
		return protocol.Event{}, s.c.broken("stream message %s: %v", js, err)
	}
	return *ev, nil
}

package grpcbind

import (
	"context"
	"google.golang.org/protobuf/encoding/protojson"
	"strconv"
	"strings"

	a2apb03 "github.com/a2aproject/a2a-go/a2apb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// A2A 0.3's gRPC service, a2a.v1.A2AService (a2a-go v0.3's generated
// code), over the same service: its messages are the 0.3 proto, whose
// ProtoJSON the 0.3 proto codec reads and writes. 0.3 names a task
// by a resource name, "tasks/{id}", where the codec's params have an id.
type binding03 struct {
	a2apb03.UnimplementedA2AServiceServer
	b *Binding
}

func registerV03(b *Binding) {
	a2apb03.RegisterA2AServiceServer(b.server, &binding03{b: b})
}

func (s *binding03) start(ctx context.Context, m protocol.Method) (handler.Caller, error) {
	return s.b.startVersion(ctx, m, protocol.V03)
}

// taskParams is the params object {"id", "historyLength"?} of a request
// naming its task "tasks/{id}"; historyLength 0 is the proto's unset.
func taskParams(name string, historyLength int32) ([]byte, error) {
	id, ok := strings.CutPrefix(name, "tasks/")
	if !ok || id == "" || strings.Contains(id, "/") {
		return nil, statusError(protocol.ErrInvalidParams("", protocol.FieldViolation{Field: "name", Description: `must be "tasks/{id}"`}))
	}
	dst := append([]byte(`{"id":`), jsonwire.AppendString(nil, id)...)
	if historyLength > 0 {
		dst = append(dst, `,"historyLength":`...)
		dst = strconv.AppendInt(dst, int64(historyLength), 10)
	}
	return append(dst, '}'), nil
}

// SendMessage implements a2apb03.A2AServiceServer.
func (s *binding03) SendMessage(ctx context.Context, req *a2apb03.SendMessageRequest) (*a2apb03.SendMessageResponse, error) {
	c, err := s.start(ctx, protocol.MethodSend)
	if err != nil {
		return nil, err
	}
	p, err := s.b.decodeSend(s.b.codec03, req)
	if err != nil {
		return nil, err
	}
	ev, perr := s.b.svc.SendMessage(ctx, c, p)
	if perr != nil {
		return nil, statusError(perr)
	}
	return result(func(dst []byte) []byte { return s.b.codec03.AppendSendResult(dst, &ev) }, &a2apb03.SendMessageResponse{})
}

// SendStreamingMessage implements a2apb03.A2AServiceServer.
func (s *binding03) SendStreamingMessage(req *a2apb03.SendMessageRequest, ss grpc.ServerStreamingServer[a2apb03.StreamResponse]) error {
	ctx := ss.Context()
	c, err := s.start(ctx, protocol.MethodStream)
	if err != nil {
		return err
	}
	p, err := s.b.decodeSend(s.b.codec03, req)
	if err != nil {
		return err
	}
	st, perr := s.b.svc.SendStreamingMessage(ctx, c, p)
	if perr != nil {
		return statusError(perr)
	}
	return serveStream(st, ss, s.b.codec03)
}

// GetTask implements a2apb03.A2AServiceServer.
func (s *binding03) GetTask(ctx context.Context, req *a2apb03.GetTaskRequest) (*a2apb03.Task, error) {
	c, err := s.start(ctx, protocol.MethodGetTask)
	if err != nil {
		return nil, err
	}
	js, err := taskParams(req.GetName(), req.GetHistoryLength())
	if err != nil {
		return nil, err
	}
	p, derr := s.b.codec03.DecodeGetTask(js)
	if derr != nil {
		return nil, statusError(protocol.ParamsError(derr))
	}
	t, perr := s.b.svc.GetTask(ctx, c, p)
	if perr != nil {
		return nil, statusError(perr)
	}
	return result(func(dst []byte) []byte { return s.b.codec03.AppendTask(dst, t) }, &a2apb03.Task{})
}

// CancelTask implements a2apb03.A2AServiceServer.
func (s *binding03) CancelTask(ctx context.Context, req *a2apb03.CancelTaskRequest) (*a2apb03.Task, error) {
	c, err := s.start(ctx, protocol.MethodCancelTask)
	if err != nil {
		return nil, err
	}
	js, err := taskParams(req.GetName(), 0)
	if err != nil {
		return nil, err
	}
	p, derr := s.b.codec03.DecodeTaskID(js)
	if derr != nil {
		return nil, statusError(protocol.ParamsError(derr))
	}
	t, perr := s.b.svc.CancelTask(ctx, c, p)
	if perr != nil {
		return nil, statusError(perr)
	}
	return result(func(dst []byte) []byte { return s.b.codec03.AppendTask(dst, t) }, &a2apb03.Task{})
}

// TaskSubscription implements a2apb03.A2AServiceServer: 0.3's resubscribe.
func (s *binding03) TaskSubscription(req *a2apb03.TaskSubscriptionRequest, ss grpc.ServerStreamingServer[a2apb03.StreamResponse]) error {
	ctx := ss.Context()
	c, err := s.start(ctx, protocol.MethodSubscribe)
	if err != nil {
		return err
	}
	js, err := taskParams(req.GetName(), 0)
	if err != nil {
		return err
	}
	p, derr := s.b.codec03.DecodeTaskID(js)
	if derr != nil {
		return statusError(protocol.ParamsError(derr))
	}
	md, _ := metadata.FromIncomingContext(ctx)
	after := ""
	if v := md.Get("last-event-id"); len(v) > 0 {
		after = v[0]
	}
	st, perr := s.b.svc.SubscribeToTask(ctx, c, p, after)
	if perr != nil {
		return statusError(perr)
	}
	return serveStream(st, ss, s.b.codec03)
}

// ListTasks implements a2apb03.A2AServiceServer: the 0.3 proto has the
// method, A2A 0.3 does not (there is no list in 0.3).
func (s *binding03) ListTasks(ctx context.Context, _ *a2apb03.ListTasksRequest) (*a2apb03.ListTasksResponse, error) {
	if _, err := s.start(ctx, protocol.MethodListTasks); err != nil {
		return nil, err
	}
	return nil, statusError(protocol.ErrUnsupportedOperation("A2A 0.3 has no task list: call ListTasks on the 1.0 service"))
}

// CreateTaskPushNotificationConfig implements a2apb03.A2AServiceServer.
func (s *binding03) CreateTaskPushNotificationConfig(ctx context.Context, req *a2apb03.CreateTaskPushNotificationConfigRequest) (*a2apb03.TaskPushNotificationConfig, error) {
	return callPush(s.b, ctx, protocol.V03, s.b.codec03, protocol.MethodPushSet, req, &a2apb03.TaskPushNotificationConfig{})
}

// GetTaskPushNotificationConfig implements a2apb03.A2AServiceServer.
func (s *binding03) GetTaskPushNotificationConfig(ctx context.Context, req *a2apb03.GetTaskPushNotificationConfigRequest) (*a2apb03.TaskPushNotificationConfig, error) {
	return callPush(s.b, ctx, protocol.V03, s.b.codec03, protocol.MethodPushGet, req, &a2apb03.TaskPushNotificationConfig{})
}

// ListTaskPushNotificationConfig implements a2apb03.A2AServiceServer.
func (s *binding03) ListTaskPushNotificationConfig(ctx context.Context, req *a2apb03.ListTaskPushNotificationConfigRequest) (*a2apb03.ListTaskPushNotificationConfigResponse, error) {
	return callPush(s.b, ctx, protocol.V03, s.b.codec03, protocol.MethodPushList, req, &a2apb03.ListTaskPushNotificationConfigResponse{})
}

// DeleteTaskPushNotificationConfig implements a2apb03.A2AServiceServer.
func (s *binding03) DeleteTaskPushNotificationConfig(ctx context.Context, req *a2apb03.DeleteTaskPushNotificationConfigRequest) (*emptypb.Empty, error) {
	return callPush(s.b, ctx, protocol.V03, s.b.codec03, protocol.MethodPushDelete, req, &emptypb.Empty{})
}

// GetAgentCard implements a2apb03.A2AServiceServer: 0.3's extended card
// over gRPC, read from the document 0.3 clients get over HTTP. That is
// 0.3's JSON card, not its proto's JSON: what the proto names the same
// is kept, and what it names otherwise (the security requirements, a
// list of {"schemes":…} there) is dropped.
func (s *binding03) GetAgentCard(ctx context.Context, _ *a2apb03.GetAgentCardRequest) (*a2apb03.AgentCard, error) {
	return extendedCard(s.b, ctx, protocol.V03, protojson.UnmarshalOptions{DiscardUnknown: true}, &a2apb03.AgentCard{})
}

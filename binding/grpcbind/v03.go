package grpcbind

import (
	"context"
	"google.golang.org/protobuf/encoding/protojson"
	"strconv"
	"strings"

	a2apb03 "github.com/a2aproject/a2a-go/a2apb"
	"google.golang.org/grpc"
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

// nameParams builds the params of a request naming its task "tasks/{id}".
func nameParams(name string, historyLength int32) func() ([]byte, error) {
	return func() ([]byte, error) { return taskParams(name, historyLength) }
}

// SendMessage implements a2apb03.A2AServiceServer.
func (s *binding03) SendMessage(ctx context.Context, req *a2apb03.SendMessageRequest) (*a2apb03.SendMessageResponse, error) {
	return unary(s.b, ctx, protocol.V03, protocol.MethodSend, s.b.paramsOf(req), &a2apb03.SendMessageResponse{})
}

// SendStreamingMessage implements a2apb03.A2AServiceServer.
func (s *binding03) SendStreamingMessage(req *a2apb03.SendMessageRequest, ss grpc.ServerStreamingServer[a2apb03.StreamResponse]) error {
	st, err := s.b.openStream(ss.Context(), protocol.V03, protocol.MethodStream, s.b.paramsOf(req))
	if err != nil {
		return err
	}
	return serveStream(st, ss, s.b.codec03)
}

// GetTask implements a2apb03.A2AServiceServer.
func (s *binding03) GetTask(ctx context.Context, req *a2apb03.GetTaskRequest) (*a2apb03.Task, error) {
	return unary(s.b, ctx, protocol.V03, protocol.MethodGetTask, nameParams(req.GetName(), req.GetHistoryLength()), &a2apb03.Task{})
}

// CancelTask implements a2apb03.A2AServiceServer.
func (s *binding03) CancelTask(ctx context.Context, req *a2apb03.CancelTaskRequest) (*a2apb03.Task, error) {
	return unary(s.b, ctx, protocol.V03, protocol.MethodCancelTask, nameParams(req.GetName(), 0), &a2apb03.Task{})
}

// TaskSubscription implements a2apb03.A2AServiceServer: 0.3's resubscribe.
func (s *binding03) TaskSubscription(req *a2apb03.TaskSubscriptionRequest, ss grpc.ServerStreamingServer[a2apb03.StreamResponse]) error {
	st, err := s.b.openStream(ss.Context(), protocol.V03, protocol.MethodSubscribe, nameParams(req.GetName(), 0))
	if err != nil {
		return err
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
	return unary(s.b, ctx, protocol.V03, protocol.MethodPushSet, s.b.paramsOf(req), &a2apb03.TaskPushNotificationConfig{})
}

// GetTaskPushNotificationConfig implements a2apb03.A2AServiceServer.
func (s *binding03) GetTaskPushNotificationConfig(ctx context.Context, req *a2apb03.GetTaskPushNotificationConfigRequest) (*a2apb03.TaskPushNotificationConfig, error) {
	return unary(s.b, ctx, protocol.V03, protocol.MethodPushGet, s.b.paramsOf(req), &a2apb03.TaskPushNotificationConfig{})
}

// ListTaskPushNotificationConfig implements a2apb03.A2AServiceServer.
func (s *binding03) ListTaskPushNotificationConfig(ctx context.Context, req *a2apb03.ListTaskPushNotificationConfigRequest) (*a2apb03.ListTaskPushNotificationConfigResponse, error) {
	return unary(s.b, ctx, protocol.V03, protocol.MethodPushList, s.b.paramsOf(req), &a2apb03.ListTaskPushNotificationConfigResponse{})
}

// DeleteTaskPushNotificationConfig implements a2apb03.A2AServiceServer.
func (s *binding03) DeleteTaskPushNotificationConfig(ctx context.Context, req *a2apb03.DeleteTaskPushNotificationConfigRequest) (*emptypb.Empty, error) {
	return unary(s.b, ctx, protocol.V03, protocol.MethodPushDelete, s.b.paramsOf(req), &emptypb.Empty{})
}

// GetAgentCard implements a2apb03.A2AServiceServer: 0.3's extended card
// over gRPC, read from the document 0.3 clients get over HTTP. That is
// 0.3's JSON card, not its proto's JSON: what the proto names the same
// is kept, and what it names otherwise (the security requirements, a
// list of {"schemes":…} there) is dropped.
func (s *binding03) GetAgentCard(ctx context.Context, _ *a2apb03.GetAgentCardRequest) (*a2apb03.AgentCard, error) {
	return extendedCard(s.b, ctx, protocol.V03, protojson.UnmarshalOptions{DiscardUnknown: true}, &a2apb03.AgentCard{})
}

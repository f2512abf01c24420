// Package grpcbind is the gRPC binding of A2A 1.0 (§10): the service
// lf.a2a.v1.A2AService, with the generated code a2a-go ships
// (a2apb/v1), over the one service (handler.Service). A request message
// is written as ProtoJSON, which A2A 1.0's JSON is, and read by the 1.0
// codec like a JSON-RPC call's params; a result is encoded by the codec
// and read into its message the same way. So every rule (limits, ids,
// parts, errors) is the codec's and the service's, whatever the binding.
//
// It serves inside Caddy through grpc-go's ServeHTTP, on the site's own
// HTTP/2 (TLS h2, or h2c): the caller's identity comes from Caddy's auth
// exactly as for the other bindings (Caller).
package grpcbind

import (
	"context"
	"errors"
	"net/http"
	"strings"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/caddy-a2a/caddy-a2a/binding/call"
	"github.com/caddy-a2a/caddy-a2a/binding/httpbind"
	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// ServicePath and ServicePathV03 are the path prefixes of the services'
// methods (A2A 1.0's lf.a2a.v1, 0.3's a2a.v1): what a router hands to
// the binding.
const (
	ServicePath    = "/lf.a2a.v1.A2AService/"
	ServicePathV03 = "/a2a.v1.A2AService/"
)

// Binding is the gRPC server of one service.
type Binding struct {
	a2apb.UnimplementedA2AServiceServer
	svc *handler.Service
	// codec and codec03 read and write the messages of 1.0's and 0.3's
	// service (the 0.3 proto's ProtoJSON, as protocol.NewGRPCCodecV03 says); nil
	// for a version the service does not serve (its service is not
	// registered).
	codec, codec03 protocol.Codec
	server         *grpc.Server
}

// New returns the gRPC binding of svc: lf.a2a.v1.A2AService if it serves
// A2A 1.0, a2a.v1.A2AService if it serves 0.3. A request message is at
// most maxMessage bytes (the mount's max_request_body).
func New(svc *handler.Service, maxMessage int) *Binding {
	b := &Binding{svc: svc}
	b.server = grpc.NewServer(grpc.MaxRecvMsgSize(maxMessage),
		grpc.ChainUnaryInterceptor(noteUnaryError), grpc.ChainStreamInterceptor(noteStreamError))
	if svc.Wire().Serves(protocol.V10) {
		b.codec = svc.Wire().Codec(protocol.V10)
		a2apb.RegisterA2AServiceServer(b.server, b)
	}
	if svc.Wire().Serves(protocol.V03) {
		b.codec03 = protocol.NewGRPCCodecV03(svc.Wire().Limits)
		registerV03(b)
	}
	return b
}

// Serves10 reports whether 1.0's service is served.
func (b *Binding) Serves10() bool { return b.codec != nil }

// ServeHTTP serves one gRPC call that came over HTTP/2; r's context
// carries the caller (WithCaller).
func (b *Binding) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.server.ServeHTTP(w, r)
}

// Stop ends the calls in progress: the config is being unloaded.
func (b *Binding) Stop() { b.server.Stop() }

type callerKey struct{}

// WithCaller returns ctx carrying c, the caller the module resolved for
// the HTTP request the call came in.
func WithCaller(ctx context.Context, c handler.Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// start is what every method does first: the caller, the version and
// extension metadata (A2A 1.0 §10: a2a-version, a2a-extensions), and the
// service's refusals of the operation as such.
func (b *Binding) start(ctx context.Context, m protocol.Method) (handler.Caller, error) {
	return b.startVersion(ctx, m, protocol.V10)
}

// startVersion is start for a service of version want (lf.a2a.v1 is 1.0,
// a2a.v1 0.3).
func (b *Binding) startVersion(ctx context.Context, m protocol.Method, want protocol.Version) (handler.Caller, error) {
	c, _ := ctx.Value(callerKey{}).(handler.Caller)
	c.Info.SetMethod(m, want)
	md, _ := metadata.FromIncomingContext(ctx)
	if vs := md.Get("a2a-version"); len(vs) > 0 && vs[0] != "" {
		if v, ok := protocol.ParseVersionHeader(vs[0]); !ok || v != want {
			perr := protocol.ErrVersionNotSupported(vs[0], "Protocol version "+vs[0]+" is not served by this gRPC service, which serves A2A "+want.String())
			perr.Metadata["supportedVersions"] = want.String()
			return c, statusError(perr)
		}
	}
	neg := b.svc.Negotiate(md.Get("a2a-extensions"), md.Get("x-a2a-extensions"))
	c.Extensions = neg.Activated
	if len(neg.Activated) > 0 {
		_ = grpc.SetHeader(ctx, metadata.Pairs("a2a-extensions", strings.Join(neg.Activated, ", ")))
	}
	if perr := b.svc.Admit(m, &neg); perr != nil {
		return c, statusError(perr)
	}
	return c, nil
}

// params writes a request message as the JSON params the codec reads,
// held to the rules of a JSON-RPC body (nesting above all).
func (b *Binding) params(msg proto.Message) ([]byte, error) {
	js, err := protojson.Marshal(msg)
	if err != nil {
		return nil, statusError(protocol.ErrInvalidParams("The request message cannot be read"))
	}
	if perr := protocol.CheckBody(js, b.svc.Wire().MaxJSONDepth); perr != nil {
		return nil, statusError(perr)
	}
	return js, nil
}

// result reads what appendResult encodes into msg.
func result[M proto.Message](appendResult func([]byte) []byte, msg M) (M, error) {
	buf := httpbind.GetBuf()
	defer httpbind.PutBuf(buf)
	*buf = appendResult(*buf)
	if err := unmarshal.Unmarshal(*buf, msg); err != nil {
		return msg, status.Error(codes.Internal, "The answer could not be encoded")
	}
	return msg, nil
}

// unmarshal reads the codec's JSON. Unknown members are refused: the codec
// writes the proto's names, and a member the proto lacks is a bug a test
// is to find, not a member to drop.
var unmarshal = protojson.UnmarshalOptions{}

// unary calls unary method m of the version-v service through the method
// table, with the params params builds (after the version check, as every
// binding orders them), its answer read into out (left empty for an Empty
// answer: a delete's).
func unary[M proto.Message](b *Binding, ctx context.Context, v protocol.Version, m protocol.Method, params func() ([]byte, error), out M) (M, error) {
	c, err := b.startVersion(ctx, m, v)
	if err != nil {
		return out, err
	}
	js, err := params()
	if err != nil {
		return out, err
	}
	res, perr := call.Unary(ctx, b.svc, c, b.codecOf(v), m, js)
	if perr != nil {
		return out, statusError(perr)
	}
	if res.Empty() {
		return out, nil
	}
	return result(res.Append, out)
}

// openStream opens streaming method m of the version-v service through
// the method table. A2A's resume point travels as the metadata
// last-event-id (the SSE bindings' header).
func (b *Binding) openStream(ctx context.Context, v protocol.Version, m protocol.Method, params func() ([]byte, error)) (*handler.Stream, error) {
	c, err := b.startVersion(ctx, m, v)
	if err != nil {
		return nil, err
	}
	js, err := params()
	if err != nil {
		return nil, err
	}
	after := ""
	if m == protocol.MethodSubscribe {
		md, _ := metadata.FromIncomingContext(ctx)
		if vs := md.Get("last-event-id"); len(vs) > 0 {
			after = vs[0]
		}
	}
	st, perr := call.Stream(ctx, b.svc, c, b.codecOf(v), m, js, after)
	if perr != nil {
		return nil, statusError(perr)
	}
	return st, nil
}

// codecOf is the codec of version v's service.
func (b *Binding) codecOf(v protocol.Version) protocol.Codec {
	if v == protocol.V03 {
		return b.codec03
	}
	return b.codec
}

// paramsOf builds a request's params as its ProtoJSON.
func (b *Binding) paramsOf(req proto.Message) func() ([]byte, error) {
	return func() ([]byte, error) { return b.params(req) }
}

// SendMessage implements a2apb.A2AServiceServer.
func (b *Binding) SendMessage(ctx context.Context, req *a2apb.SendMessageRequest) (*a2apb.SendMessageResponse, error) {
	return unary(b, ctx, protocol.V10, protocol.MethodSend, b.paramsOf(req), &a2apb.SendMessageResponse{})
}

// GetTask implements a2apb.A2AServiceServer.
func (b *Binding) GetTask(ctx context.Context, req *a2apb.GetTaskRequest) (*a2apb.Task, error) {
	return unary(b, ctx, protocol.V10, protocol.MethodGetTask, b.paramsOf(req), &a2apb.Task{})
}

// ListTasks implements a2apb.A2AServiceServer.
func (b *Binding) ListTasks(ctx context.Context, req *a2apb.ListTasksRequest) (*a2apb.ListTasksResponse, error) {
	return unary(b, ctx, protocol.V10, protocol.MethodListTasks, b.paramsOf(req), &a2apb.ListTasksResponse{})
}

// CancelTask implements a2apb.A2AServiceServer.
func (b *Binding) CancelTask(ctx context.Context, req *a2apb.CancelTaskRequest) (*a2apb.Task, error) {
	return unary(b, ctx, protocol.V10, protocol.MethodCancelTask, b.paramsOf(req), &a2apb.Task{})
}

// SendStreamingMessage implements a2apb.A2AServiceServer.
func (b *Binding) SendStreamingMessage(req *a2apb.SendMessageRequest, ss grpc.ServerStreamingServer[a2apb.StreamResponse]) error {
	st, err := b.openStream(ss.Context(), protocol.V10, protocol.MethodStream, b.paramsOf(req))
	if err != nil {
		return err
	}
	return b.serveStream(st, ss)
}

// SubscribeToTask implements a2apb.A2AServiceServer.
func (b *Binding) SubscribeToTask(req *a2apb.SubscribeToTaskRequest, ss grpc.ServerStreamingServer[a2apb.StreamResponse]) error {
	st, err := b.openStream(ss.Context(), protocol.V10, protocol.MethodSubscribe, b.paramsOf(req))
	if err != nil {
		return err
	}
	return b.serveStream(st, ss)
}

// The push config methods: without push, Admit refuses them as over
// every binding.

// CreateTaskPushNotificationConfig implements a2apb.A2AServiceServer.
func (b *Binding) CreateTaskPushNotificationConfig(ctx context.Context, req *a2apb.TaskPushNotificationConfig) (*a2apb.TaskPushNotificationConfig, error) {
	return unary(b, ctx, protocol.V10, protocol.MethodPushSet, b.paramsOf(req), &a2apb.TaskPushNotificationConfig{})
}

// GetTaskPushNotificationConfig implements a2apb.A2AServiceServer.
func (b *Binding) GetTaskPushNotificationConfig(ctx context.Context, req *a2apb.GetTaskPushNotificationConfigRequest) (*a2apb.TaskPushNotificationConfig, error) {
	return unary(b, ctx, protocol.V10, protocol.MethodPushGet, b.paramsOf(req), &a2apb.TaskPushNotificationConfig{})
}

// ListTaskPushNotificationConfigs implements a2apb.A2AServiceServer.
func (b *Binding) ListTaskPushNotificationConfigs(ctx context.Context, req *a2apb.ListTaskPushNotificationConfigsRequest) (*a2apb.ListTaskPushNotificationConfigsResponse, error) {
	return unary(b, ctx, protocol.V10, protocol.MethodPushList, b.paramsOf(req), &a2apb.ListTaskPushNotificationConfigsResponse{})
}

// DeleteTaskPushNotificationConfig implements a2apb.A2AServiceServer.
func (b *Binding) DeleteTaskPushNotificationConfig(ctx context.Context, req *a2apb.DeleteTaskPushNotificationConfigRequest) (*emptypb.Empty, error) {
	return unary(b, ctx, protocol.V10, protocol.MethodPushDelete, b.paramsOf(req), &emptypb.Empty{})
}

// GetExtendedAgentCard implements a2apb.A2AServiceServer: the 1.0 card
// document read into the proto (it is the proto's JSON, strictly).
func (b *Binding) GetExtendedAgentCard(ctx context.Context, _ *a2apb.GetExtendedAgentCardRequest) (*a2apb.AgentCard, error) {
	return extendedCard(b, ctx, protocol.V10, unmarshal, &a2apb.AgentCard{})
}

// extendedCard answers the extended card of version v as msg, read from
// the service's document with u.
func extendedCard[M proto.Message](b *Binding, ctx context.Context, v protocol.Version, u protojson.UnmarshalOptions, msg M) (M, error) {
	c, err := b.startVersion(ctx, protocol.MethodExtendedCard, v)
	if err != nil {
		return msg, err
	}
	doc, perr := b.svc.ExtendedCard(c, v, nil)
	if perr != nil {
		return msg, statusError(perr)
	}
	if err := u.Unmarshal(doc, msg); err != nil {
		return msg, status.Error(codes.Internal, "The answer could not be encoded")
	}
	return msg, nil
}

// statusError is perr as a gRPC status (A2A 1.0 §10.6): the canonical code
// of the HTTP+JSON mapping, the message, and the ErrorInfo and BadRequest
// details the other bindings carry.
func statusError(perr *protocol.Error) error {
	code := codes.Code(protocol.MapError(perr).Code)
	if perr.Code == protocol.CodeResourceExhausted {
		// A full store and a caller at its quota alike: HTTP tells them
		// apart (503, 429), gRPC has the one code for both.
		code = codes.ResourceExhausted
	}
	st := status.New(code, perr.Message)
	var details []protoadapt.MessageV1
	if reason := protocol.ErrorReason(perr); reason != "" {
		details = append(details, &errdetails.ErrorInfo{Reason: reason, Domain: protocol.ErrorDomain, Metadata: perr.Metadata})
	}
	if len(perr.Violations) > 0 {
		br := &errdetails.BadRequest{}
		for _, v := range perr.Violations {
			br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{Field: v.Field, Description: v.Description})
		}
		details = append(details, br)
	}
	if len(details) > 0 {
		if withDetails, err := st.WithDetails(details...); err == nil {
			st = withDetails
		}
	}
	return &a2aStatus{st: st, perr: perr}
}

// a2aStatus is an A2A error as the gRPC status grpc-go sends, keeping the
// error for the request's info (noteUnaryError).
type a2aStatus struct {
	st   *status.Status
	perr *protocol.Error
}

func (e *a2aStatus) Error() string              { return e.st.Err().Error() }
func (e *a2aStatus) GRPCStatus() *status.Status { return e.st }

// noteUnaryError records a call's A2A error in the caller's RequestInfo.
func noteUnaryError(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	res, err := next(ctx, req)
	noteError(ctx, err)
	return res, err
}

// noteStreamError is noteUnaryError for a server stream.
func noteStreamError(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, next grpc.StreamHandler) error {
	err := next(srv, ss)
	noteError(ss.Context(), err)
	return err
}

func noteError(ctx context.Context, err error) {
	var st *a2aStatus
	if err != nil && errors.As(err, &st) {
		if c, ok := ctx.Value(callerKey{}).(handler.Caller); ok {
			c.Info.SetError(st.perr)
		}
	}
}

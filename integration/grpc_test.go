package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	a2apb03 "github.com/a2aproject/a2a-go/a2apb"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
)

// The gRPC binding (grpc on) on the site's own HTTP/2, here h2c: the same
// service as JSON-RPC, so the same task reads the same and every error
// carries the same reason, as a gRPC status with ErrorInfo details.

// h2cGlobal lets the test server speak h2c, as a plaintext gRPC site must.
const h2cGlobal = "servers {\n\t\tprotocols h1 h2 h2c\n\t}"

// grpcClient dials the test Caddy over h2c.
func grpcClient(t *testing.T) a2apb.A2AServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(strings.TrimPrefix(base, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return a2apb.NewA2AServiceClient(conn)
}

// grpcCtx is a bounded context carrying metadata pairs kv.
func grpcCtx(t *testing.T, kv ...string) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return metadata.NewOutgoingContext(ctx, metadata.Pairs(append([]string{"a2a-version", "1.0"}, kv...)...))
}

// grpcFails asserts err is a status of code whose ErrorInfo has reason,
// and returns the status.
func grpcFails(t *testing.T, err error, code codes.Code, reason string) *status.Status {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || st.Code() != code {
		t.Fatalf("want %s, got %v", code, err)
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			if info.Reason != reason || info.Domain != "a2a-protocol.org" {
				t.Fatalf("ErrorInfo %+v, want reason %s", info, reason)
			}
			return st
		}
	}
	if reason != "" {
		t.Fatalf("no ErrorInfo in %v", st.Details())
	}
	return st
}

func TestGRPC(t *testing.T) {
	a := textAgent(t)
	loadGlobal(t, h2cGlobal, minimal("grpc on", "owner {http.request.header.X-Caller}"), map[string]any{"Agent": a.URL()})
	c := grpcClient(t)
	dave := grpcCtx(t, "x-caller", "dave")

	res, err := c.SendMessage(dave, &a2apb.SendMessageRequest{Message: &a2apb.Message{
		MessageId: "g-1", Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "Ada"}}},
	}})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	task := res.GetTask()
	if task == nil || task.GetStatus().GetState() != a2apb.TaskState_TASK_STATE_COMPLETED ||
		task.GetArtifacts()[0].GetParts()[0].GetText() != "Hello, Ada" {
		t.Fatalf("SendMessage answered %v", res)
	}
	// The task read over gRPC is the task JSON-RPC reads, field for field.
	got, err := c.GetTask(dave, &a2apb.GetTaskRequest{Id: task.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	byRPC := call(t, rpcURL, "1.0", "GetTask", map[string]any{"id": task.GetId()}, withHeader("X-Caller", "dave"))
	byRPC.ok(t, nil)
	if js := mustProtoJSON(t, got); !jsonEqual(t, js, byRPC.Result) {
		t.Fatalf("GetTask over gRPC\n%s\nover JSON-RPC\n%s", js, byRPC.Result)
	}
	list, err := c.ListTasks(dave, &a2apb.ListTasksRequest{PageSize: new(int32(1))})
	if err != nil || len(list.GetTasks()) != 1 || list.GetTasks()[0].GetId() != task.GetId() {
		t.Fatalf("ListTasks: %v %v", list, err)
	}

	// Errors: the canonical code of the HTTP+JSON mapping, the same
	// ErrorInfo; another caller's task is not found.
	_, err = c.GetTask(grpcCtx(t, "x-caller", "eve"), &a2apb.GetTaskRequest{Id: task.GetId()})
	st := grpcFails(t, err, codes.NotFound, "TASK_NOT_FOUND")
	rpcErr := call(t, rpcURL, "1.0", "GetTask", map[string]any{"id": task.GetId()}, withHeader("X-Caller", "eve")).fails(t, -32001)
	if st.Message() != rpcErr.Message {
		t.Fatalf("message %q, JSON-RPC's %q", st.Message(), rpcErr.Message)
	}
	_, err = c.CancelTask(dave, &a2apb.CancelTaskRequest{Id: task.GetId()})
	grpcFails(t, err, codes.FailedPrecondition, "TASK_NOT_CANCELABLE")
	_, err = c.ListTasks(dave, &a2apb.ListTasksRequest{PageSize: new(int32(500))})
	st = grpcFails(t, err, codes.InvalidArgument, "")
	var violation bool
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok && br.GetFieldViolations()[0].GetField() == "pageSize" {
			violation = true
		}
	}
	if !violation {
		t.Fatalf("no BadRequest naming pageSize: %v", st.Details())
	}
	_, err = c.SendMessage(dave, &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "g-2", Role: a2apb.Role_ROLE_USER}})
	grpcFails(t, err, codes.InvalidArgument, "")
	_, err = c.GetTask(metadata.NewOutgoingContext(grpcCtx(t), metadata.Pairs("a2a-version", "0.3")), &a2apb.GetTaskRequest{Id: "x"})
	grpcFails(t, err, codes.FailedPrecondition, "VERSION_NOT_SUPPORTED")
	_, err = c.GetExtendedAgentCard(dave, &a2apb.GetExtendedAgentCardRequest{})
	grpcFails(t, err, codes.FailedPrecondition, "UNSUPPORTED_OPERATION")
	_, err = c.CreateTaskPushNotificationConfig(dave, &a2apb.TaskPushNotificationConfig{TaskId: task.GetId()})
	grpcFails(t, err, codes.FailedPrecondition, "PUSH_NOTIFICATION_NOT_SUPPORTED")
	sub, err := c.SubscribeToTask(dave, &a2apb.SubscribeToTaskRequest{Id: task.GetId()})
	if err == nil {
		_, err = sub.Recv()
	}
	grpcFails(t, err, codes.FailedPrecondition, "UNSUPPORTED_OPERATION")

	// The card lists the binding as host:port.
	_, card := get(t, "GET", base+"/.well-known/agent-card.json")
	if !strings.Contains(string(card), `{"url":"127.0.0.1:9080","protocolBinding":"GRPC","protocolVersion":"1.0"}`) {
		t.Fatalf("card: %s", card)
	}
}

// TestGRPCStreams: a streaming send and a subscription get the
// StreamResponses the SSE bindings send, in order; a client that cancels
// its stream stops nothing but its stream.
func TestGRPCStreams(t *testing.T) {
	gate := make(chan struct{})
	a := streamAgent(t, gate)
	loadGlobal(t, h2cGlobal, minimal("grpc on"), map[string]any{"Agent": a.URL()})
	c := grpcClient(t)
	ctx, cancel := context.WithCancel(grpcCtx(t))
	s, err := c.SendStreamingMessage(ctx, &a2apb.SendMessageRequest{Message: &a2apb.Message{
		MessageId: "gs-1", Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "go"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Recv()
	if err != nil || first.GetTask() == nil {
		t.Fatalf("first message: %v %v", first, err)
	}
	id := first.GetTask().GetId()
	for {
		m, err := s.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if parts := m.GetArtifactUpdate().GetArtifact().GetParts(); len(parts) > 0 && strings.Contains(parts[0].GetText(), "chunk one") {
			break
		}
	}
	cancel() // the client leaves; the task runs on
	if st := getTask10(t, rpcURL, id).Status.State; st != "TASK_STATE_WORKING" {
		t.Fatalf("after the client left its stream, the task is %s", st)
	}
	sub, err := c.SubscribeToTask(grpcCtx(t), &a2apb.SubscribeToTaskRequest{Id: id})
	if err != nil {
		t.Fatal(err)
	}
	// The first message, the task as it is now, before the agent goes on:
	// a call's stream starts when the server answers, not when it is made.
	head, err := sub.Recv()
	if err != nil || head.GetTask() == nil {
		t.Fatalf("subscription's first message: %v %v", head, err)
	}
	close(gate)
	kinds := []string{"task"}
	var text string
	for {
		m, err := sub.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("subscription: %v", err)
		}
		switch {
		case m.GetTask() != nil:
			kinds = append(kinds, "task")
		case m.GetArtifactUpdate() != nil:
			kinds = append(kinds, "artifact")
			text += m.GetArtifactUpdate().GetArtifact().GetParts()[0].GetText()
		case m.GetStatusUpdate() != nil:
			kinds = append(kinds, "status:"+m.GetStatusUpdate().GetStatus().GetState().String())
		}
	}
	if kinds[0] != "task" || kinds[len(kinds)-1] != "status:TASK_STATE_COMPLETED" || !strings.Contains(text, "chunk two") {
		t.Fatalf("subscription: %v %q", kinds, text)
	}
	if got := getTask10(t, rpcURL, id); got.Status.State != "TASK_STATE_COMPLETED" || got.text() != "chunk one, chunk two" {
		t.Fatalf("the task after its first stream left: %s %q", got.Status.State, got.text())
	}
}

// TestGRPCGated: basic_auth in front of the service path refuses a call
// without credentials before the module; with them, tasks are the user's.
func TestGRPCGated(t *testing.T) {
	a := textAgent(t)
	loadGlobal(t, h2cGlobal, `http://:9080 {
	@a2a path /a2a /a2a/* /lf.a2a.v1.A2AService/*
	basic_auth @a2a {
		alice {{.Alice}}
		bob {{.Bob}}
	}
	a2a {
		upstream {{.Agent}}`+skillBlock+`
		grpc on
	}
}
`, map[string]any{"Agent": a.URL(), "Alice": aliceHash, "Bob": bobHash})
	c := grpcClient(t)
	msg := &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "ga-1", Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "x"}}}}}
	if _, err := c.SendMessage(grpcCtx(t), msg); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("no credentials: %v, want Unauthenticated (HTTP 401)", err)
	}
	if n := len(a.Calls()); n != 0 {
		t.Fatalf("the agent was called %d times", n)
	}
	basic := func(user, pw string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw)) }
	res, err := c.SendMessage(grpcCtx(t, "authorization", basic("alice", "alice-pw")), msg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetTask(grpcCtx(t, "authorization", basic("bob", "bob-pw")), &a2apb.GetTaskRequest{Id: res.GetTask().GetId()})
	grpcFails(t, err, codes.NotFound, "TASK_NOT_FOUND")
	if _, err := c.GetTask(grpcCtx(t, "authorization", basic("alice", "alice-pw")), &a2apb.GetTaskRequest{Id: res.GetTask().GetId()}); err != nil {
		t.Fatal(err)
	}
}

func mustProtoJSON(t *testing.T, m *a2apb.Task) []byte {
	t.Helper()
	b, err := protojson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jsonEqual compares two JSON documents by value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		t.Fatalf("not JSON: %s / %s", a, b)
	}
	ax, _ := json.Marshal(x)
	by, _ := json.Marshal(y)
	return bytes.Equal(ax, by)
}

// TestGRPCV03: 0.3's service a2a.v1.A2AService on the same mount: tasks
// named "tasks/{id}", the 0.3 proto's states, the same tasks as JSON-RPC.
func TestGRPCV03(t *testing.T) {
	a := textAgent(t)
	loadGlobal(t, h2cGlobal, minimal("grpc on"), map[string]any{"Agent": a.URL()})
	conn, err := grpc.NewClient(strings.TrimPrefix(base, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := a2apb03.NewA2AServiceClient(conn)
	ctx := metadata.NewOutgoingContext(grpcCtx(t), metadata.Pairs("a2a-version", "0.3"))
	res, err := c.SendMessage(ctx, &a2apb03.SendMessageRequest{
		Request: &a2apb03.Message{MessageId: "g03-1", Role: a2apb03.Role_ROLE_USER, Parts: []*a2apb03.Part{{Part: &a2apb03.Part_Text{Text: "Ada"}}}},
		// The proto's bool: a 0.3 client that wants to wait says so.
		Configuration: &a2apb03.SendMessageConfiguration{Blocking: true},
	})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	task := res.GetTask()
	if task.GetStatus().GetState() != a2apb03.TaskState_TASK_STATE_COMPLETED || task.GetArtifacts()[0].GetParts()[0].GetText() != "Hello, Ada" {
		t.Fatalf("SendMessage answered %v", res)
	}
	got, err := c.GetTask(ctx, &a2apb03.GetTaskRequest{Name: "tasks/" + task.GetId()})
	if err != nil || got.GetId() != task.GetId() {
		t.Fatalf("GetTask: %v %v", got, err)
	}
	if rpc := getTask10(t, rpcURL, task.GetId()); rpc.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("over JSON-RPC: %s", rpc.Status.State)
	}
	_, err = c.GetTask(ctx, &a2apb03.GetTaskRequest{Name: task.GetId()})
	grpcFails(t, err, codes.InvalidArgument, "")
	_, err = c.GetTask(ctx, &a2apb03.GetTaskRequest{Name: "tasks/nope"})
	grpcFails(t, err, codes.NotFound, "TASK_NOT_FOUND")
	_, err = c.CancelTask(ctx, &a2apb03.CancelTaskRequest{Name: "tasks/" + task.GetId()})
	grpcFails(t, err, codes.FailedPrecondition, "TASK_NOT_CANCELABLE")
	_, err = c.GetTask(metadata.NewOutgoingContext(grpcCtx(t), metadata.Pairs("a2a-version", "1.0")), &a2apb03.GetTaskRequest{Name: "tasks/" + task.GetId()})
	grpcFails(t, err, codes.FailedPrecondition, "VERSION_NOT_SUPPORTED")
	_, err = c.ListTasks(ctx, &a2apb03.ListTasksRequest{})
	grpcFails(t, err, codes.FailedPrecondition, "UNSUPPORTED_OPERATION")
	// A send that does not ask to wait answers at once.
	res, err = c.SendMessage(ctx, &a2apb03.SendMessageRequest{
		Request: &a2apb03.Message{MessageId: "g03-2", Role: a2apb03.Role_ROLE_USER, Parts: []*a2apb03.Part{{Part: &a2apb03.Part_Text{Text: "Bo"}}}},
	})
	if err != nil || res.GetTask().GetStatus().GetState() != a2apb03.TaskState_TASK_STATE_SUBMITTED {
		t.Fatalf("a send without blocking: %v %v", res, err)
	}
}

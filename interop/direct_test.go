package interop

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"testing"

	a2a03 "github.com/a2aproject/a2a-go/a2a"
	a2aclient03 "github.com/a2aproject/a2a-go/a2aclient"
	agentcard03 "github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	a2agrpc03 "github.com/a2aproject/a2a-go/v2/a2agrpc/v0"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
)

// directSetups are v2Setups' transports pointed at the `reply auto` mount,
// which offers every binding in both versions.
var directSetups = []v2Setup{
	{
		name: "jsonrpc-1.0",
		connect: func(t *testing.T, ctx context.Context, w *wire) *a2aclient.Client {
			return connectFrom(t, ctx, w, directURL, false, a2aclient.WithJSONRPCTransport(w.client()))
		},
		version: "1.0",
		method:  map[string]string{"send": "SendMessage", "stream": "SendStreamingMessage", "get": "GetTask", "list": "ListTasks"},
	},
	{
		name: "rest-1.0",
		connect: func(t *testing.T, ctx context.Context, w *wire) *a2aclient.Client {
			return connectFrom(t, ctx, w, directURL, false, a2aclient.WithRESTTransport(w.client()))
		},
		version: "1.0",
		method:  map[string]string{"send": "POST message:send", "stream": "POST message:stream", "get": "GET tasks/{id}", "list": "GET tasks"},
	},
	{
		name: "grpc-1.0",
		connect: func(t *testing.T, ctx context.Context, w *wire) *a2aclient.Client {
			return connectFrom(t, ctx, w, directURL, false, a2agrpc.WithGRPCTransport(w.grpcOptions()...))
		},
		version: "1.0",
		method:  map[string]string{"send": "SendMessage", "stream": "SendStreamingMessage", "get": "GetTask", "list": "ListTasks"},
	},
	{
		name: "jsonrpc-0.3-compat",
		connect: func(t *testing.T, ctx context.Context, w *wire) *a2aclient.Client {
			return connectFrom(t, ctx, w, directURL, true, a2aclient.WithCompatTransport(a2av0.Version, a2a.TransportProtocolJSONRPC,
				a2av0.NewJSONRPCTransportFactory(a2av0.JSONRPCTransportConfig{Client: w.client()})))
		},
		version: "0.3",
		method:  map[string]string{"send": "message/send", "stream": "message/stream", "get": "tasks/get"},
	},
	{
		name: "rest-0.3-compat",
		connect: func(t *testing.T, ctx context.Context, w *wire) *a2aclient.Client {
			return connectFrom(t, ctx, w, directURL, true, a2av0.WithRESTTransport(a2av0.RESTTransportConfig{Client: w.client()}))
		},
		version: "0.3",
		method:  map[string]string{"send": "POST v1/message:send", "stream": "POST v1/message:stream", "get": "GET v1/tasks/{id}"},
	},
	{
		name: "grpc-0.3-compat",
		connect: func(t *testing.T, ctx context.Context, w *wire) *a2aclient.Client {
			return connectFrom(t, ctx, w, directURL, true, a2agrpc03.WithGRPCTransport(w.grpcOptions()...))
		},
		version: "0.3",
		method:  map[string]string{"send": "SendMessage", "stream": "SendStreamingMessage", "get": "GetTask"},
	},
}

// TestDirectAnswerA2AGoV2: on the `reply auto` mount, with every a2a-go
// v2 transport, a turn the agent marks A2A-Reply: message is a
// *a2a.Message (blocking send, and the one event of a stream), a turn it
// does not mark is a Task, and the direct turns left no task behind.
func TestDirectAnswerA2AGoV2(t *testing.T) {
	for _, s := range directSetups {
		t.Run(s.name, func(t *testing.T) {
			ctx, w := testCtx(t), newWire(t)
			// ListTasks lists an owner's tasks only: an owner of its own
			// makes "nothing but the task turn" an exact list.
			caller := uniq(t)
			ctx = a2aclient.AttachServiceParams(ctx, a2aclient.ServiceParams{"X-Caller": {caller}})
			c := s.connect(t, ctx, w)
			defer c.Destroy()
			contextID := "ctx-" + caller

			sent := userText("direct " + caller)
			sent.ContextID = contextID
			res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: sent})
			if err != nil {
				t.Fatalf("SendMessage(direct): %v", err)
			}
			msg, ok := res.(*a2a.Message)
			if !ok {
				t.Fatalf("SendMessage(direct) returned %T, want *a2a.Message: %+v", res, res)
			}
			checkDirectV2(t, "SendMessage", msg, sent, "direct: "+caller)

			streamed := userText("directstream 3 " + caller)
			streamed.ContextID = contextID
			var evs []a2a.Event
			for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: streamed}) {
				if err != nil {
					t.Fatalf("SendStreamingMessage(directstream) after %d event(s): %v", len(evs), err)
				}
				evs = append(evs, ev)
			}
			if len(evs) != 1 {
				t.Fatalf("SendStreamingMessage(directstream) gave %d events, want the one Message: %v", len(evs), evs)
			}
			smsg, ok := evs[0].(*a2a.Message)
			if !ok {
				t.Fatalf("the stream's event is %T, want *a2a.Message", evs[0])
			}
			// The working note is progress, not answer; the chunks merge
			// into the one part.
			checkDirectV2(t, "SendStreamingMessage", smsg, streamed, "chunk-1;chunk-2;chunk-3;")

			tm := userText("echo " + caller)
			tm.ContextID = contextID
			res, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: tm})
			if err != nil {
				t.Fatalf("SendMessage(echo): %v", err)
			}
			task := asTask(t, res)
			if task.Status.State != a2a.TaskStateCompleted || artifactsText(task) != "echo: "+caller || task.ContextID != contextID {
				t.Errorf("SendMessage(echo): task %s state %s artifacts %q contextId %q; want completed, %q, %q",
					task.ID, task.Status.State, artifactsText(task), task.ContextID, "echo: "+caller, contextID)
			}

			// The module named each direct turn's run with a task id (the
			// agent was told it); it stored nothing under it. The task turn,
			// same owner, is there: the not-found is not the owner's doing.
			for _, in := range []string{"direct " + caller, "directstream 3 " + caller} {
				id := directTurnTaskID(t, in)
				if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(id)}); !errors.Is(err, a2a.ErrTaskNotFound) {
					t.Errorf("GetTask(%s, the run of %q): error %v, want %v", id, in, err, a2a.ErrTaskNotFound)
				}
			}
			got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
			if err != nil || got.Status.State != a2a.TaskStateCompleted {
				t.Errorf("GetTask(the echo task %s): %+v, %v; want it completed", task.ID, got, err)
			}
			ops := []string{"send", "stream", "get"}
			if _, ok := s.method["list"]; ok {
				ops = append(ops, "list")
				list, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: contextID, PageSize: 10})
				if err != nil {
					t.Fatalf("ListTasks: %v", err)
				}
				var ids []a2a.TaskID
				for _, lt := range list.Tasks {
					ids = append(ids, lt.ID)
				}
				if !slices.Equal(ids, []a2a.TaskID{task.ID}) || list.TotalSize != 1 || list.NextPageToken != "" {
					t.Errorf("ListTasks(context) = %v totalSize %d nextPageToken %q; want only the echo task %s, 1, none",
						ids, list.TotalSize, list.NextPageToken, task.ID)
				}
			}
			w.requireDialect(t, s.version, s.methods(ops...)...)
			requireSSE(t, w, s.method["stream"])
		})
	}
}

// checkDirectV2 compares a direct answer with the whole Message it must
// be, field by field through its JSON form; only the id is the module's
// to choose, and it must not be the caller's.
func checkDirectV2(t *testing.T, what string, got, sent *a2a.Message, text string) {
	t.Helper()
	if got.ID == "" || got.ID == sent.ID {
		t.Errorf("%s: messageId %q, want one of the module's (sent %q)", what, got.ID, sent.ID)
	}
	want := a2a.Message{ID: got.ID, ContextID: sent.ContextID, Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart(text)}}
	if g, w := mustJSON(t, got), mustJSON(t, &want); g != w {
		t.Errorf("%s: message\n got %s\nwant %s", what, g, w)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	return string(b)
}

// directTurnTaskID is the task id the module gave the agent for the turn
// whose input was input.
func directTurnTaskID(t *testing.T, input string) string {
	t.Helper()
	c := agentCallWithInput(input)
	if c == nil {
		t.Fatalf("the agent got no call with input %q", input)
	}
	if c.Req.TaskID == "" {
		t.Fatalf("the agent's call for %q carries no taskId: %s", input, c.Raw)
	}
	return c.Req.TaskID
}

// TestDirectAnswerA2AGoV03: the a2a-go v0.3.15 client on the `reply auto`
// mount (the card's 0.3 JSON-RPC interface): a marked turn is a
// *a2a.Message of kind message, blocking and as a stream's one event; an
// unmarked one a Task; tasks/get finds no task of a direct turn.
func TestDirectAnswerA2AGoV03(t *testing.T) {
	ctx, w := testCtx(t), newWire(t)
	caller := uniq(t)
	w.header = http.Header{"X-Caller": {caller}}
	card, err := (&agentcard03.Resolver{Client: w.client()}).Resolve(ctx, directURL)
	if err != nil {
		t.Fatalf("resolving the card with the v0.3 client: %v", err)
	}
	c, err := a2aclient03.NewFromCard(ctx, card, a2aclient03.WithDefaultsDisabled(), a2aclient03.WithJSONRPCTransport(w.client()))
	if err != nil {
		t.Fatalf("a2aclient.NewFromCard (v0.3): %v (url %q additional %v)", err, card.URL, card.AdditionalInterfaces)
	}
	defer c.Destroy()
	contextID := "ctx-" + caller

	sent := text03("direct " + caller)
	sent.ContextID = contextID
	res, err := c.SendMessage(ctx, &a2a03.MessageSendParams{Message: sent})
	if err != nil {
		t.Fatalf("message/send(direct): %v", err)
	}
	msg, ok := res.(*a2a03.Message)
	if !ok {
		t.Fatalf("message/send(direct) returned %T, want *a2a.Message: %+v", res, res)
	}
	checkDirectV03(t, "message/send", msg, sent, "direct: "+caller)

	streamed := text03("directstream 3 " + caller)
	streamed.ContextID = contextID
	var evs []a2a03.Event
	for ev, err := range c.SendStreamingMessage(ctx, &a2a03.MessageSendParams{Message: streamed}) {
		if err != nil {
			t.Fatalf("message/stream(directstream) after %d event(s): %v", len(evs), err)
		}
		evs = append(evs, ev)
	}
	if len(evs) != 1 {
		t.Fatalf("message/stream(directstream) gave %d events, want the one Message: %v", len(evs), evs)
	}
	smsg, ok := evs[0].(*a2a03.Message)
	if !ok {
		t.Fatalf("the stream's event is %T, want *a2a.Message", evs[0])
	}
	checkDirectV03(t, "message/stream", smsg, streamed, "chunk-1;chunk-2;chunk-3;")

	tm := text03("echo " + caller)
	tm.ContextID = contextID
	res, err = c.SendMessage(ctx, &a2a03.MessageSendParams{Message: tm})
	if err != nil {
		t.Fatalf("message/send(echo): %v", err)
	}
	task := asTask03(t, res)
	if task.Status.State != a2a03.TaskStateCompleted || artifacts03Text(task) != "echo: "+caller || task.ContextID != contextID {
		t.Errorf("message/send(echo): task %s state %s artifacts %q contextId %q; want completed, %q, %q",
			task.ID, task.Status.State, artifacts03Text(task), task.ContextID, "echo: "+caller, contextID)
	}
	for _, in := range []string{"direct " + caller, "directstream 3 " + caller} {
		id := directTurnTaskID(t, in)
		if _, err := c.GetTask(ctx, &a2a03.TaskQueryParams{ID: a2a03.TaskID(id)}); !errors.Is(err, a2a03.ErrTaskNotFound) {
			t.Errorf("tasks/get(%s, the run of %q): error %v, want %v", id, in, err, a2a03.ErrTaskNotFound)
		}
	}
	if got, err := c.GetTask(ctx, &a2a03.TaskQueryParams{ID: task.ID}); err != nil || got.Status.State != a2a03.TaskStateCompleted {
		t.Errorf("tasks/get(the echo task %s): %+v, %v; want it completed", task.ID, got, err)
	}
	w.requireDialect(t, "", v03MethodList("send", "stream", "get")...)
	requireSSE(t, w, "message/stream")
}

// checkDirectV03 is checkDirectV2 for the v0.3.15 types.
func checkDirectV03(t *testing.T, what string, got, sent *a2a03.Message, text string) {
	t.Helper()
	if got.ID == "" || got.ID == sent.ID {
		t.Errorf("%s: messageId %q, want one of the module's (sent %q)", what, got.ID, sent.ID)
	}
	want := a2a03.Message{ID: got.ID, ContextID: sent.ContextID, Role: a2a03.MessageRoleAgent, Parts: a2a03.ContentParts{a2a03.TextPart{Text: text}}}
	if g, w := mustJSON(t, got), mustJSON(t, &want); g != w {
		t.Errorf("%s: message\n got %s\nwant %s", what, g, w)
	}
}

// TestJSDirect runs @a2a-js/sdk against the `reply auto` mounts
// (js/test/direct.test.js): 1.0, and legacyCompat on the 0.3-only one.
func TestJSDirect(t *testing.T) {
	node, dir := nodeSuite(t)
	runNode(t, node, dir, "test/direct.test.js",
		"A2A_DIRECT_URL="+directURL, "A2A_DIRECT_LEGACY_URL="+directLegacyURL, "AGENT_CONTROL_URL="+agentURL)
}

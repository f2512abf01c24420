package interop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
)

// replySetups are the a2a-go v2 clients of v2Setups, pointed at the site
// with `reply message`.
var replySetups = []v2Setup{
	{
		name: "jsonrpc-1.0",
		connect: func(t *testing.T, ctx context.Context, w *wire) *a2aclient.Client {
			t.Helper()
			return connectV10(t, ctx, w, replyURL)
		},
		version: "1.0",
		method:  map[string]string{"send": "SendMessage", "stream": "SendStreamingMessage", "get": "GetTask"},
	},
	{
		name: "jsonrpc-0.3-compat",
		connect: func(t *testing.T, ctx context.Context, w *wire) *a2aclient.Client {
			t.Helper()
			card, err := (&agentcard.Resolver{Client: w.client(), CardParser: a2av0.NewAgentCardParser()}).Resolve(ctx, replyURL)
			if err != nil {
				t.Fatalf("resolving the card with the v0.3 parser: %v", err)
			}
			c, err := a2aclient.NewFromCard(ctx, card,
				a2aclient.WithDefaultsDisabled(),
				a2aclient.WithCompatTransport(a2av0.Version, a2a.TransportProtocolJSONRPC,
					a2av0.NewJSONRPCTransportFactory(a2av0.JSONRPCTransportConfig{Client: w.client()})))
			if err != nil {
				t.Fatalf("a2aclient.NewFromCard with the 0.3 compat transport: %v (card interfaces %v)", err, ifaces(card))
			}
			return c
		},
		version: "0.3",
		method:  map[string]string{"send": "message/send", "stream": "message/stream", "get": "tasks/get"},
	},
}

// TestA2AGoV2MessageReply: against `reply message`, the a2a-go v2 client
// (1.0 and 0.3 compat) gets a *a2a.Message from SendMessage, blocking or
// not, and exactly one message event from SendStreamingMessage; no task
// exists afterwards.
func TestA2AGoV2MessageReply(t *testing.T) {
	for _, s := range replySetups {
		t.Run(s.name, func(t *testing.T) {
			ctx, w := testCtx(t), newWire(t)
			c := s.connect(t, ctx, w)
			word := uniq(t)

			for _, immediate := range []bool{false, true} {
				input := fmt.Sprintf("echo %s-%v", word, immediate)
				req := &a2a.SendMessageRequest{Message: userText(input)}
				if immediate {
					req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
				}
				res, err := c.SendMessage(ctx, req)
				if err != nil {
					t.Fatalf("SendMessage (returnImmediately %v): %v", immediate, err)
				}
				msg, ok := res.(*a2a.Message)
				if !ok {
					t.Fatalf("SendMessage (returnImmediately %v) returned %T, want *a2a.Message", immediate, res)
				}
				checkReplyMessage(t, msg, "echo: "+strings.TrimPrefix(input, "echo "))
				call := agentCallWithInput(input)
				if call == nil {
					t.Fatalf("the agent got no call with input %q", input)
				}
				// The agent is told an id of the module's own for the
				// reply's context, never the caller's.
				if call.Req.TaskID != "" || call.Req.ContextID == msg.ContextID || len(call.Req.ContextID) != 36 || len(call.Req.History) != 0 {
					t.Errorf("agent called with taskId %q contextId %q history %d; want none, an id of its own (not the reply's %q), none",
						call.Req.TaskID, call.Req.ContextID, len(call.Req.History), msg.ContextID)
				}
			}

			var evs []a2a.Event
			for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: userText("stream 3")}) {
				if err != nil {
					t.Fatalf("SendStreamingMessage after %d event(s): %v", len(evs), err)
				}
				evs = append(evs, ev)
			}
			if len(evs) != 1 {
				t.Fatalf("SendStreamingMessage gave %d events, want exactly one message: %v", len(evs), evs)
			}
			msg, ok := evs[0].(*a2a.Message)
			if !ok {
				t.Fatalf("the stream's event is %T, want *a2a.Message", evs[0])
			}
			// The progress note is not part of the reply; the chunks are, merged.
			checkReplyMessage(t, msg, "chunk-1;chunk-2;chunk-3;")
			if len(msg.Parts) != 1 {
				t.Errorf("reply has %d parts, want the chunks merged into 1", len(msg.Parts))
			}

			// There is no task to get, and none to continue.
			if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(msg.ContextID)}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("GetTask: error %v, want %v", err, a2a.ErrTaskNotFound)
			}
			m := userText("echo again")
			m.TaskID = "00000000-0000-4000-8000-000000000000"
			if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("SendMessage with a taskId: error %v, want %v", err, a2a.ErrTaskNotFound)
			}
			w.requireDialect(t, s.version, s.methods("send", "stream", "get")...)
			requireSSE(t, w, s.method["stream"])
		})
	}
}

// checkReplyMessage checks what every message reply carries.
func checkReplyMessage(t *testing.T, msg *a2a.Message, text string) {
	t.Helper()
	if got := partsText(msg.Parts); got != text {
		t.Errorf("reply text %q, want %q", got, text)
	}
	if msg.Role != a2a.MessageRoleAgent || msg.TaskID != "" || msg.ContextID == "" || msg.ID == "" {
		t.Errorf("reply role %q taskId %q contextId %q messageId %q; want agent, none, set, set",
			msg.Role, msg.TaskID, msg.ContextID, msg.ID)
	}
}

// agentCallWithInput returns the agent call whose input was input.
func agentCallWithInput(input string) *agentCall {
	agent.mu.Lock()
	defer agent.mu.Unlock()
	for _, c := range agent.calls {
		if in, ok := c.Req.inputText(); ok && in == input {
			return c
		}
	}
	return nil
}

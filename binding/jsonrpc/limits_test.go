package jsonrpc

import (
	"context"
	"encoding/base64"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/memory"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// countingAgent counts the runs it is asked for.
type countingAgent struct {
	upstream.Agent
	runs atomic.Int32
}

func (a *countingAgent) Run(ctx context.Context, r *upstream.RunRequest) (upstream.Stream, error) {
	a.runs.Add(1)
	return a.Agent.Run(ctx, r)
}

// testLimits are small enough for short test bodies.
var testLimits = protocol.Limits{MaxParts: 2, MaxTextBytes: 8, MaxFileBytes: 6, MaxMetadataBytes: 16}

const testMaxDepth = 12

// snapshot is everything the store holds about one task.
type snapshot struct {
	rec    *store.Record
	events []store.StoredEvent
}

func (h *harness) snapshot(owner, id string) snapshot {
	h.t.Helper()
	ctx := context.Background()
	rec, err := h.store.Get(ctx, owner, id)
	if err != nil {
		h.t.Fatal(err)
	}
	evs, err := h.store.Events(ctx, id, "", false)
	if err != nil {
		h.t.Fatal(err)
	}
	return snapshot{rec: rec, events: evs}
}

// wantLimitError checks a -32602 (or -32600 for depth) answer that names
// limit: 1.0 with an ErrorInfo carrying limit/max and, for -32602, a
// BadRequest naming field; 0.3 (whose errors carry no data) with the
// field named in the message.
func wantLimitError(t *testing.T, resp map[string]any, v10 bool, code int64, field, limit, max string) {
	t.Helper()
	if has(resp, "result") {
		t.Fatalf("want error, got %v", resp)
	}
	if got := num(t, resp, "error", "code"); got != code {
		t.Fatalf("code %d, want %d: %v", got, code, resp["error"])
	}
	if msg := str(t, resp, "error", "message"); !strings.Contains(msg, limit) {
		t.Fatalf("message %q does not name %s", msg, limit)
	}
	if !v10 {
		if has(resp, "error", "data") || !strings.Contains(str(t, resp, "error", "message"), field) {
			t.Fatalf("0.3 error %v", resp["error"])
		}
		return
	}
	data := at(t, resp, "error", "data")
	reason := "INVALID_PARAMS"
	if code == protocol.CodeInvalidRequest {
		reason = "INVALID_REQUEST"
	}
	if str(t, data, 0, "@type") != "type.googleapis.com/google.rpc.ErrorInfo" || str(t, data, 0, "reason") != reason ||
		str(t, data, 0, "domain") != protocol.ErrorDomain ||
		str(t, data, 0, "metadata", "limit") != limit || str(t, data, 0, "metadata", "max") != max {
		t.Fatalf("1.0 ErrorInfo %v", data)
	}
	if field == "" {
		if has(data, 1) {
			t.Fatalf("unexpected detail %v", data)
		}
		return
	}
	if str(t, data, 1, "@type") != "type.googleapis.com/google.rpc.BadRequest" ||
		str(t, data, 1, "fieldViolations", 0, "field") != field ||
		!strings.Contains(str(t, data, 1, "fieldViolations", 0, "description"), limit) {
		t.Fatalf("1.0 BadRequest %v", data)
	}
}

func TestLimitsRefuseAndLoseNothing(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString
	deep := strings.Repeat("[", testMaxDepth) + strings.Repeat("]", testMaxDepth)
	type tc struct {
		name              string
		v10Parts, v03Part string // parts JSON; extra message members follow
		extra             string
		code              int64
		field             string
		limit, max        string
	}
	cases := []tc{
		{"parts", `{"text":"a"},{"text":"b"},{"text":"c"}`, `{"kind":"text","text":"a"},{"kind":"text","text":"b"},{"kind":"text","text":"c"}`, "",
			protocol.CodeInvalidParams, "message.parts", protocol.LimitMaxParts, "2"},
		{"text", `{"text":"123456789"}`, `{"kind":"text","text":"123456789"}`, "",
			protocol.CodeInvalidParams, "message.parts[0].text", protocol.LimitMaxTextBytes, "8"},
		{"file", `{"raw":"` + b64([]byte("1234567")) + `"}`, `{"kind":"file","file":{"bytes":"` + b64([]byte("1234567")) + `"}}`, "",
			protocol.CodeInvalidParams, "", protocol.LimitMaxFileBytes, "6"},
		{"metadata", `{"text":"a"}`, `{"kind":"text","text":"a"}`, `,"metadata":{"k":"1234567890"}`,
			protocol.CodeInvalidParams, "message.metadata", protocol.LimitMaxMetadataBytes, "16"},
		{"depth", `{"text":"a"}`, `{"kind":"text","text":"a"}`, `,"referenceTaskIds":` + deep,
			protocol.CodeInvalidRequest, "", protocol.LimitMaxJSONDepth, "12"},
	}
	for _, c := range cases {
		for _, v10 := range []bool{true, false} {
			for _, streaming := range []bool{false, true} {
				name := c.name + map[bool]string{true: " v10", false: " v03"}[v10] + map[bool]string{true: " stream", false: ""}[streaming]
				t.Run(name, func(t *testing.T) {
					agent := &countingAgent{Agent: scriptAgent(status(protocol.StateInputRequired, "more?"))}
					h := newHarness(t, agent, func(o *handler.Options) { o.Limits = testLimits; o.MaxJSONDepth = testMaxDepth })
					method, version, field := "SendMessage", "1.0", c.field
					body := func(extraMsg string) string {
						return rpcCall(method, `{"message":{"messageId":"`+mid()+`","role":"ROLE_USER","parts":[`+c.v10Parts+`]`+c.extra+extraMsg+`}}`)
					}
					if streaming {
						method = "SendStreamingMessage"
					}
					if !v10 {
						method, version = "message/send", ""
						if streaming {
							method = "message/stream"
						}
						body = func(extraMsg string) string {
							return rpcCall(method, `{"message":{"kind":"message","messageId":"`+mid()+`","role":"user","parts":[`+c.v03Part+`]`+c.extra+extraMsg+`}}`)
						}
					}
					if c.name == "file" {
						field = "message.parts[0].raw"
						if !v10 {
							field = "message.parts[0].file.bytes"
						}
					}
					ask := func(extraMsg string) map[string]any {
						r := req{version: version, owner: "alice", body: body(extraMsg)}
						if streaming {
							return h.streamError(r)
						}
						return h.rpc(r)
					}

					// A new task: refused, nothing stored, the agent never called.
					wantLimitError(t, ask(""), v10, c.code, field, c.limit, c.max)
					if n := h.store.Len(); n != 0 {
						t.Fatalf("%d tasks stored after a refused send", n)
					}

					// A task waiting for input: a refused turn changes nothing.
					first := h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m-0", "", "")})
					id := str(t, first, "result", "task", "id")
					before := h.snapshot("alice", id)
					wantLimitError(t, ask(`,"taskId":"`+id+`"`), v10, c.code, field, c.limit, c.max)
					after := h.snapshot("alice", id)
					if !reflect.DeepEqual(before, after) {
						t.Fatalf("a refused turn changed the task:\nbefore %+v\nafter  %+v", before, after)
					}
					if n := agent.runs.Load(); n != 1 {
						t.Fatalf("agent ran %d times, want 1 (the setup)", n)
					}
				})
			}
		}
	}
}

// Within the limits the same requests go through: the limits are where
// they are configured, not one byte lower.
func TestLimitsAtTheLimitAccepted(t *testing.T) {
	agent := &countingAgent{Agent: scriptAgent(text("ok"))}
	h := newHarness(t, agent, func(o *handler.Options) { o.Limits = testLimits; o.MaxJSONDepth = testMaxDepth })
	raw := base64.StdEncoding.EncodeToString([]byte("123456"))
	// Depth: envelope 1, params 2, message 3, parts 4, part 5, then the
	// data value: the body below nests exactly testMaxDepth levels.
	deep := strings.Repeat("[", testMaxDepth-5) + strings.Repeat("]", testMaxDepth-5)
	for _, msg := range []string{
		`"parts":[{"text":"12345678"},{"raw":"` + raw + `","metadata":{"k":"12345678"}}],"metadata":{"k":"12345678"}`,
		`"parts":[{"data":` + deep + `}]`,
	} {
		resp := h.rpc(req{version: "1.0", body: rpcCall("SendMessage", `{"message":{"messageId":"`+mid()+`","role":"ROLE_USER",`+msg+`}}`)})
		if str(t, resp, "result", "task", "status", "state") != "TASK_STATE_COMPLETED" {
			t.Fatalf("refused at the limit: %v", resp)
		}
	}
}

func TestLimitsCancelMetadata(t *testing.T) {
	agent := controlledAgent()
	h := newHarness(t, agent, func(o *handler.Options) { o.Limits = testLimits })
	resp := h.rpc(req{version: "1.0", body: sendV10("SendMessage", mid(), "", `{"returnImmediately":true}`)})
	id := str(t, resp, "result", "task", "id")
	run := agent.Next(t)
	before := h.snapshot("", id)
	resp = h.rpc(req{version: "1.0", body: rpcCall("CancelTask", `{"id":"`+id+`","metadata":{"k":"1234567890"}}`)})
	wantLimitError(t, resp, true, protocol.CodeInvalidParams, "metadata", protocol.LimitMaxMetadataBytes, "16")
	if after := h.snapshot("", id); !reflect.DeepEqual(before, after) {
		t.Fatalf("refused cancel changed the task")
	}
	select {
	case <-run.Ctx.Done():
		t.Fatal("a refused cancel aborted the run")
	default:
	}
	run.Send(t, text("done"))
	close(run.Steps)
}

func TestLimitsOptionsChecked(t *testing.T) {
	for _, o := range []handler.Options{
		{Limits: protocol.Limits{MaxParts: -1}},
		{MaxJSONDepth: -1},
		{Extensions: []protocol.Extension{{URI: ""}}},
		{Extensions: []protocol.Extension{{URI: "urn:a"}, {URI: "urn:a"}}},
		{Extensions: []protocol.Extension{{URI: "urn:a,urn:b"}}},
	} {
		o.Store, o.Agent, o.Runner = newHarnessStore(t), scriptAgent(), handler.NewRunner(nil)
		if _, err := handler.New(o); err == nil {
			t.Errorf("accepted %+v", o)
		}
	}
}

func newHarnessStore(t *testing.T) store.Store {
	s := memory.New(memory.Options{})
	t.Cleanup(func() { s.Close() })
	return s
}

package integration

import (
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
)

// directAgent answers the contract's way, choosing per turn: input
// "direct …" with a plain body marked A2A-Reply: message, "stream …" with
// a marked NDJSON stream, "ask" with input-required, anything else a
// plain task answer. A continued turn it answers marked, which the
// contract forbids.
func directAgent(t *testing.T) *agent {
	return newAgent(t, func(w http.ResponseWriter, _ *http.Request, c agentCall) {
		in := c.inputText()
		switch {
		case len(c.History) > 0 || strings.HasPrefix(in, "direct"):
			w.Header().Set("A2A-Reply", "message")
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "Direct: "+in)
		case strings.HasPrefix(in, "stream"):
			w.Header().Set("A2A-Reply", "message")
			w.Header().Set("Content-Type", "application/x-ndjson")
			io.WriteString(w, `{"status":"working","message":"thinking"}`+"\n"+`{"text":"Direct: "}`+"\n"+`{"text":"`+in+`"}`+"\n")
		case in == "ask":
			w.Header().Set("A2A-Task-State", "input-required")
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "Which one?")
		default:
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "A task: "+in)
		}
	})
}

// keys is the sorted member names of a JSON object.
func keys(t *testing.T, raw []byte) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

// checkDirect10 checks a 1.0 result (JSON-RPC's or HTTP+JSON's body, a
// stream frame's StreamResponse) that is exactly {"message":…} with the
// agent's words, in the context ctxID ("" for any).
func checkDirect10(t *testing.T, what string, result []byte, text, ctxID string) {
	t.Helper()
	if k := keys(t, result); k != "message" {
		t.Fatalf("%s: result members %s, want message only: %s", what, k, result)
	}
	var r struct{ Message json.RawMessage }
	json.Unmarshal(result, &r)
	if k := keys(t, r.Message); k != "contextId,messageId,parts,role" {
		t.Errorf("%s: message members %s: %s", what, k, r.Message)
	}
	var m wireMessage
	json.Unmarshal(r.Message, &m)
	if m.Role != "ROLE_AGENT" || m.Kind != "" || m.TaskID != "" || m.MessageID == "" || (ctxID != "" && m.ContextID != ctxID) ||
		!strings.Contains(string(r.Message), `"parts":[{"text":"`+text+`"}]`) {
		t.Errorf("%s: message %s", what, r.Message)
	}
}

// checkDirect03 checks a 0.3 result that is a bare Message, kind message.
func checkDirect03(t *testing.T, what string, result []byte, text string) {
	t.Helper()
	if k := keys(t, result); k != "contextId,kind,messageId,parts,role" {
		t.Errorf("%s: message members %s: %s", what, k, result)
	}
	var m wireMessage
	json.Unmarshal(result, &m)
	if m.Kind != "message" || m.Role != "agent" || m.TaskID != "" || m.MessageID == "" ||
		!strings.Contains(string(result), `"parts":[{"kind":"text","text":"`+text+`"}]`) {
		t.Errorf("%s: message %s", what, result)
	}
}

// TestDirectAnswers: with reply auto, a turn the agent marks
// A2A-Reply: message is answered with one Message on every binding and
// both versions, blocking, non-blocking and streaming (one frame, then the
// end), and no task is stored; a turn it does not mark is a task, on the
// same mount.
func TestDirectAnswers(t *testing.T) {
	a := directAgent(t)
	loadGlobal(t, h2cGlobal, restConfig("reply auto", "grpc on"), map[string]any{"Agent": a.URL()})
	gus := withHeader("X-Caller", "gus")

	for _, tc := range []struct {
		what   string
		config map[string]any
	}{{"SendMessage", nil}, {"SendMessage returnImmediately", map[string]any{"returnImmediately": true}}} {
		params := map[string]any{"message": msg10("direct one", "", "ctx-d")}
		if tc.config != nil {
			params["configuration"] = tc.config
		}
		r := call(t, rpcURL, "1.0", "SendMessage", params, gus)
		r.ok(t, nil)
		checkDirect10(t, tc.what, r.Result, "Direct: direct one", "ctx-d")
	}
	for _, tc := range []struct {
		what   string
		config map[string]any
	}{{"message/send", nil}, {"message/send blocking:false", map[string]any{"blocking": false}}} {
		params := map[string]any{"message": msg03("direct two", "")}
		if tc.config != nil {
			params["configuration"] = tc.config
		}
		r := call(t, rpcURL, "", "message/send", params, gus)
		r.ok(t, nil)
		checkDirect03(t, tc.what, r.Result, "Direct: direct two")
	}

	// Streams: the message is the one frame, with no resume id, whether
	// the agent answered plainly or streamed it.
	for _, in := range []string{"direct three", "stream three"} {
		s := openStream(t, rpcURL, "1.0", "SendStreamingMessage", map[string]any{"message": msg10(in, "", "")}, gus)
		f, _ := s.next(t)
		var env struct{ Result json.RawMessage }
		json.Unmarshal(f.Data, &env)
		checkDirect10(t, "SendStreamingMessage "+in, env.Result, "Direct: "+in, "")
		if f.ID != "" {
			t.Errorf("the message frame has SSE id %q", f.ID)
		}
		s.ended(t)
		s = openStream(t, rpcURL, "", "message/stream", map[string]any{"message": msg03(in, "")}, gus)
		f, _ = s.next(t)
		json.Unmarshal(f.Data, &env)
		checkDirect03(t, "message/stream "+in, env.Result, "Direct: "+in)
		s.ended(t)
	}

	// HTTP+JSON.
	rr := restDo(t, "POST", restURL+"/message:send", `{"message":{"messageId":"r-1","role":"ROLE_USER","parts":[{"text":"direct four"}]},"configuration":{"returnImmediately":true}}`, gus)
	rr.ok(t, nil)
	checkDirect10(t, "REST message:send", rr.Body, "Direct: direct four", "")
	req, _ := http.NewRequest("POST", restURL+"/message:stream", strings.NewReader(`{"message":{"messageId":"r-2","role":"ROLE_USER","parts":[{"text":"stream five"}]}}`))
	req.Header.Set("Content-Type", "application/json")
	gus(req)
	rs := openSSE(t, req)
	f, _ := rs.next(t)
	checkDirect10(t, "REST message:stream", f.Data, "Direct: stream five", "")
	rs.ended(t)

	// gRPC.
	c := grpcClient(t)
	gctx := grpcCtx(t, "x-caller", "gus")
	msg := func(id, text string) *a2apb.SendMessageRequest {
		return &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: id, Role: a2apb.Role_ROLE_USER,
			Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: text}}}}}
	}
	res, err := c.SendMessage(gctx, msg("g-1", "direct six"))
	if err != nil || res.GetTask() != nil || res.GetMessage().GetParts()[0].GetText() != "Direct: direct six" ||
		res.GetMessage().GetRole() != a2apb.Role_ROLE_AGENT {
		t.Fatalf("gRPC SendMessage: %v %v", res, err)
	}
	gs, err := c.SendStreamingMessage(gctx, msg("g-2", "stream seven"))
	if err != nil {
		t.Fatal(err)
	}
	first, err := gs.Recv()
	if err != nil || first.GetMessage().GetParts()[0].GetText() != "Direct: stream seven" {
		t.Fatalf("gRPC stream: %v %v", first, err)
	}
	if m, err := gs.Recv(); err != io.EOF {
		t.Fatalf("gRPC stream goes on: %v %v", m, err)
	}

	// Nothing of those turns was stored.
	var list struct {
		Tasks []wireTask `json:"tasks"`
	}
	call(t, rpcURL, "1.0", "ListTasks", map[string]any{}, gus).ok(t, &list)
	if len(list.Tasks) != 0 {
		t.Fatalf("direct answers left %d tasks", len(list.Tasks))
	}

	// A turn the agent does not mark is a task, as on any mount.
	var r10 struct {
		Task *wireTask `json:"task"`
	}
	call(t, rpcURL, "1.0", "SendMessage", map[string]any{"message": msg10("plain", "", "")}, gus).ok(t, &r10)
	if r10.Task == nil || r10.Task.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("unmarked turn: %+v", r10.Task)
	}
	call(t, rpcURL, "1.0", "GetTask", map[string]any{"id": r10.Task.ID}, gus).ok(t, nil)

	// A continued task's turn cannot be a message: the task fails, with
	// the generic message.
	r10.Task = nil
	call(t, rpcURL, "1.0", "SendMessage", map[string]any{"message": msg10("ask", "", "")}, gus).ok(t, &r10)
	if r10.Task == nil || r10.Task.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("ask: %+v", r10.Task)
	}
	id := r10.Task.ID
	r10.Task = nil
	call(t, rpcURL, "1.0", "SendMessage", map[string]any{"message": msg10("this one", id, "")}, gus).ok(t, &r10)
	if r10.Task == nil || r10.Task.ID != id || r10.Task.Status.State != "TASK_STATE_FAILED" {
		t.Fatalf("continued turn answered %+v", r10.Task)
	}
}

// TestDirectMarkerOnTaskMount: without reply auto, a marked answer is the
// answer of the task the send made, as an A2A agent's Message answer is.
func TestDirectMarkerOnTaskMount(t *testing.T) {
	a := directAgent(t)
	load(t, minimal(), map[string]any{"Agent": a.URL()})
	var r10 struct {
		Task    *wireTask       `json:"task"`
		Message json.RawMessage `json:"message"`
	}
	call(t, rpcURL, "1.0", "SendMessage", map[string]any{"message": msg10("direct one", "", "")}).ok(t, &r10)
	if r10.Message != nil || r10.Task == nil || r10.Task.Status.State != "TASK_STATE_COMPLETED" ||
		len(r10.Task.Artifacts) != 1 || r10.Task.Artifacts[0].Parts[0].Text != "Direct: direct one" {
		t.Fatalf("answer %+v %s", r10.Task, r10.Message)
	}
}

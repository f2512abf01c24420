package interop

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	a2a03 "github.com/a2aproject/a2a-go/a2a"
	a2aclient03 "github.com/a2aproject/a2a-go/a2aclient"
	agentcard03 "github.com/a2aproject/a2a-go/a2aclient/agentcard"
)

// v03Methods is the 0.3 JSON-RPC dialect; the v0.3 client sends no A2A-Version.
var v03Methods = map[string]string{
	"send": "message/send", "stream": "message/stream", "get": "tasks/get",
	"cancel": "tasks/cancel", "subscribe": "tasks/resubscribe",
}

func v03MethodList(ops ...string) []string {
	var out []string
	for _, op := range ops {
		out = append(out, v03Methods[op])
	}
	return out
}

// TestA2AGoV03 runs the scenarios with the a2a-go v0.3.15 client, which only
// reads the card's 0.3 fields (url, preferredTransport, additionalInterfaces).
func TestA2AGoV03(t *testing.T) {
	t.Run("SendBlocking", v03SendBlocking)
	t.Run("SendNonBlockingThenGet", v03NonBlocking)
	t.Run("InputRequired", v03InputRequired)
	t.Run("Cancel", v03Cancel)
	t.Run("Stream", v03Stream)
	t.Run("Resubscribe", v03Resubscribe)
	t.Run("StreamInputRequired", v03StreamInputRequired)
	t.Run("Errors", v03Errors)
}

// v03Errors: the v0.3 client decodes error.data only when it is an object or
// absent; an array there would turn every error below into a decode failure.
func v03Errors(t *testing.T) {
	ctx, w := testCtx(t), newWire(t)
	c := v03Connect(t, ctx, w)
	missing := a2a03.TaskID("00000000-0000-4000-8000-000000000000")
	if _, err := c.GetTask(ctx, &a2a03.TaskQueryParams{ID: missing}); !errors.Is(err, a2a03.ErrTaskNotFound) {
		t.Errorf("tasks/get(unknown): error %v, want %v", err, a2a03.ErrTaskNotFound)
	}
	res, err := c.SendMessage(ctx, &a2a03.MessageSendParams{Message: text03("echo done")})
	if err != nil {
		t.Fatalf("message/send: %v", err)
	}
	done := asTask03(t, res)
	if _, err := c.CancelTask(ctx, &a2a03.TaskIDParams{ID: done.ID}); !errors.Is(err, a2a03.ErrTaskNotCancelable) {
		t.Errorf("tasks/cancel(completed): error %v, want %v", err, a2a03.ErrTaskNotCancelable)
	}
	var subErr error
	n := 0
	for _, err := range c.ResubscribeToTask(ctx, &a2a03.TaskIDParams{ID: missing}) {
		if err != nil {
			subErr = err
			break
		}
		n++
	}
	if !errors.Is(subErr, a2a03.ErrTaskNotFound) {
		t.Errorf("tasks/resubscribe(unknown): %d event(s), error %v; want %v", n, subErr, a2a03.ErrTaskNotFound)
	}
}

func v03Connect(t *testing.T, ctx context.Context, w *wire) *a2aclient03.Client {
	t.Helper()
	card, err := (&agentcard03.Resolver{Client: w.client()}).Resolve(ctx, dualURL)
	if err != nil {
		t.Fatalf("resolving the card with the v0.3 client: %v", err)
	}
	if card.Name != "Interop Agent" || card.URL != dualURL+rpcPath {
		t.Errorf("v0.3 card name %q url %q, want %q %q", card.Name, card.URL, "Interop Agent", dualURL+rpcPath)
	}
	c, err := a2aclient03.NewFromCard(ctx, card,
		a2aclient03.WithDefaultsDisabled(),
		a2aclient03.WithJSONRPCTransport(w.client()))
	if err != nil {
		t.Fatalf("a2aclient.NewFromCard (v0.3): %v (url %q preferredTransport %q additional %v)",
			err, card.URL, card.PreferredTransport, card.AdditionalInterfaces)
	}
	return c
}

func text03(s string) *a2a03.Message {
	return a2a03.NewMessage(a2a03.MessageRoleUser, a2a03.TextPart{Text: s})
}

func parts03Text(parts a2a03.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		switch tp := p.(type) {
		case a2a03.TextPart:
			b.WriteString(tp.Text)
		case *a2a03.TextPart:
			b.WriteString(tp.Text)
		}
	}
	return b.String()
}

func artifacts03Text(task *a2a03.Task) string {
	var b strings.Builder
	for _, a := range task.Artifacts {
		b.WriteString(parts03Text(a.Parts))
	}
	return b.String()
}

func status03Text(task *a2a03.Task) string {
	if task.Status.Message == nil {
		return ""
	}
	return parts03Text(task.Status.Message.Parts)
}

func asTask03(t *testing.T, res a2a03.SendMessageResult) *a2a03.Task {
	t.Helper()
	task, ok := res.(*a2a03.Task)
	if !ok {
		t.Fatalf("message/send returned %T, want *a2a.Task", res)
	}
	if task.ID == "" || task.ContextID == "" {
		t.Fatalf("task has id %q contextId %q, want both set", task.ID, task.ContextID)
	}
	return task
}

func v03Event(ev a2a03.Event) event {
	switch e := ev.(type) {
	case *a2a03.Task:
		return event{Kind: "task", TaskID: string(e.ID), ContextID: e.ContextID, State: normState(string(e.Status.State)), Text: artifacts03Text(e)}
	case *a2a03.Message:
		return event{Kind: "message", TaskID: string(e.TaskID), ContextID: e.ContextID, Text: parts03Text(e.Parts)}
	case *a2a03.TaskStatusUpdateEvent:
		ne := event{Kind: "status", TaskID: string(e.TaskID), ContextID: e.ContextID,
			State: normState(string(e.Status.State)), Final: e.Final}
		if e.Status.Message != nil {
			ne.Text = parts03Text(e.Status.Message.Parts)
		}
		return ne
	case *a2a03.TaskArtifactUpdateEvent:
		ne := event{Kind: "artifact", TaskID: string(e.TaskID), ContextID: e.ContextID, Append: e.Append}
		if e.Artifact != nil {
			ne.ArtifactID = string(e.Artifact.ID)
			ne.Text = parts03Text(e.Artifact.Parts)
		}
		return ne
	}
	return event{Kind: "unknown"}
}

func v03WaitState(t *testing.T, ctx context.Context, c *a2aclient03.Client, id a2a03.TaskID, state a2a03.TaskState) *a2a03.Task {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		task, err := c.GetTask(ctx, &a2a03.TaskQueryParams{ID: id})
		if err != nil {
			t.Fatalf("tasks/get(%s): %v", id, err)
		}
		if task.Status.State == state {
			return task
		}
		if task.Status.State.Terminal() || time.Now().After(deadline) {
			t.Fatalf("task %s is %s (status message %q), want %s", id, task.Status.State, status03Text(task), state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func nonBlocking03() *a2a03.MessageSendConfig {
	blocking := false
	return &a2a03.MessageSendConfig{Blocking: &blocking}
}

func v03SendBlocking(t *testing.T) {
	ctx, w := testCtx(t), newWire(t)
	c := v03Connect(t, ctx, w)
	word := uniq(t)
	// No configuration at all: a 0.3 server must treat an unset blocking as true.
	res, err := c.SendMessage(ctx, &a2a03.MessageSendParams{Message: text03("echo " + word)})
	if err != nil {
		t.Fatalf("message/send: %v", err)
	}
	task := asTask03(t, res)
	if task.Status.State != a2a03.TaskStateCompleted {
		t.Errorf("state %s, want completed", task.Status.State)
	}
	if got, want := artifacts03Text(task), "echo: "+word; got != want {
		t.Errorf("artifact text %q, want %q", got, want)
	}
	if calls := agent.callsFor(string(task.ID)); len(calls) != 1 {
		t.Errorf("agent got %d call(s) for task %s, want 1", len(calls), task.ID)
	} else if in, _ := calls[0].Req.inputText(); in != "echo "+word {
		t.Errorf("agent saw input %q, want %q", in, "echo "+word)
	}
	w.requireDialect(t, "", v03MethodList("send")...)
}

func v03NonBlocking(t *testing.T) {
	ctx, w := testCtx(t), newWire(t)
	c := v03Connect(t, ctx, w)
	g := uniq(t)
	defer agent.releaseGate(g)
	res, err := c.SendMessage(ctx, &a2a03.MessageSendParams{Message: text03("gated " + g), Config: nonBlocking03()})
	if err != nil {
		t.Fatalf("message/send(blocking:false): %v", err)
	}
	task := asTask03(t, res)
	if st := task.Status.State; st != a2a03.TaskStateSubmitted && st != a2a03.TaskStateWorking {
		t.Fatalf("non-blocking send returned state %s while the agent is held, want submitted or working", st)
	}
	if !agent.awaitGate(g, 10*time.Second) {
		t.Fatalf("the agent run never reached its gate")
	}
	mid, err := c.GetTask(ctx, &a2a03.TaskQueryParams{ID: task.ID})
	if err != nil {
		t.Fatalf("tasks/get while running: %v", err)
	}
	if mid.Status.State != a2a03.TaskStateWorking {
		t.Errorf("tasks/get while the agent is held: state %s, want working", mid.Status.State)
	}
	agent.releaseGate(g)
	done := v03WaitState(t, ctx, c, task.ID, a2a03.TaskStateCompleted)
	if got := artifacts03Text(done); got != "part-1;part-2;" {
		t.Errorf("completed artifact text %q, want %q", got, "part-1;part-2;")
	}
	w.requireDialect(t, "", v03MethodList("send", "get")...)
}

func v03InputRequired(t *testing.T) {
	ctx, w := testCtx(t), newWire(t)
	c := v03Connect(t, ctx, w)
	res, err := c.SendMessage(ctx, &a2a03.MessageSendParams{Message: text03("ask")})
	if err != nil {
		t.Fatalf("message/send(ask): %v", err)
	}
	task := asTask03(t, res)
	if task.Status.State != a2a03.TaskStateInputRequired {
		t.Fatalf("state %s, want input-required", task.Status.State)
	}
	if got := status03Text(task); got != "What is your name?" {
		t.Errorf("input-required status message %q, want %q", got, "What is your name?")
	}
	res, err = c.SendMessage(ctx, &a2a03.MessageSendParams{
		Message: a2a03.NewMessageForTask(a2a03.MessageRoleUser, task, a2a03.TextPart{Text: "Ada"}),
	})
	if err != nil {
		t.Fatalf("message/send(continuation): %v", err)
	}
	final := asTask03(t, res)
	if final.ID != task.ID || final.Status.State != a2a03.TaskStateCompleted {
		t.Errorf("continuation: task %s state %s, want %s completed", final.ID, final.Status.State, task.ID)
	}
	if got := artifacts03Text(final); got != "Hello, Ada!" {
		t.Errorf("final artifact text %q, want %q", got, "Hello, Ada!")
	}
	calls := agent.callsFor(string(task.ID))
	if len(calls) != 2 {
		t.Fatalf("agent got %d call(s) for the task, want 2", len(calls))
	}
	want := []string{"user: ask", "agent: What is your name?"}
	if got := calls[1].Req.historyText(); !slices.Equal(got, want) {
		t.Errorf("second turn history %q, want %q", got, want)
	}
	w.requireDialect(t, "", v03MethodList("send")...)
}

func v03Cancel(t *testing.T) {
	ctx, w := testCtx(t), newWire(t)
	c := v03Connect(t, ctx, w)
	res, err := c.SendMessage(ctx, &a2a03.MessageSendParams{Message: text03("slow"), Config: nonBlocking03()})
	if err != nil {
		t.Fatalf("message/send(slow, blocking:false): %v", err)
	}
	task := asTask03(t, res)
	if len(agent.waitCalls(string(task.ID), 1, 10*time.Second)) == 0 {
		t.Fatalf("the agent never got the slow task %s", task.ID)
	}
	canceled, err := c.CancelTask(ctx, &a2a03.TaskIDParams{ID: task.ID})
	if err != nil {
		t.Fatalf("tasks/cancel: %v", err)
	}
	if canceled.ID != task.ID || canceled.Status.State != a2a03.TaskStateCanceled {
		t.Errorf("tasks/cancel returned %s in state %s, want %s canceled", canceled.ID, canceled.Status.State, task.ID)
	}
	if !agent.waitCancelled(string(task.ID), 5*time.Second) {
		t.Errorf("the agent's request context was not cancelled")
	}
	got, err := c.GetTask(ctx, &a2a03.TaskQueryParams{ID: task.ID})
	if err != nil {
		t.Fatalf("tasks/get after cancel: %v", err)
	}
	if got.Status.State != a2a03.TaskStateCanceled {
		t.Errorf("tasks/get after cancel: state %s, want canceled", got.Status.State)
	}
	w.requireDialect(t, "", v03MethodList("send", "cancel", "get")...)
}

func v03Stream(t *testing.T) {
	ctx, w := testCtx(t), newWire(t)
	c := v03Connect(t, ctx, w)
	var evs []event
	for ev, err := range c.SendStreamingMessage(ctx, &a2a03.MessageSendParams{Message: text03("stream 3")}) {
		if err != nil {
			t.Fatalf("message/stream after %v: %v", evs, err)
		}
		evs = append(evs, v03Event(ev))
	}
	checkStream(t, evs, streamWant{
		firstStates: []string{"submitted", "working"}, text: "chunk-1;chunk-2;chunk-3;",
		workingFirst: true, final: "completed", legacy: true,
	})
	w.requireDialect(t, "", v03MethodList("stream")...)
	requireSSE(t, w, "message/stream")
}

func v03Resubscribe(t *testing.T) {
	ctx, w := testCtx(t), newWire(t)
	c := v03Connect(t, ctx, w)
	g := uniq(t)
	defer agent.releaseGate(g)
	res, err := c.SendMessage(ctx, &a2a03.MessageSendParams{Message: text03("gated " + g), Config: nonBlocking03()})
	if err != nil {
		t.Fatalf("message/send(gated, blocking:false): %v", err)
	}
	task := asTask03(t, res)
	if !agent.awaitGate(g, 10*time.Second) {
		t.Fatalf("the agent run never reached its gate")
	}
	var evs []event
	for ev, err := range c.ResubscribeToTask(ctx, &a2a03.TaskIDParams{ID: task.ID}) {
		if err != nil {
			t.Fatalf("tasks/resubscribe after %v: %v", evs, err)
		}
		if len(evs) == 0 {
			agent.releaseGate(g)
		}
		evs = append(evs, v03Event(ev))
	}
	checkStream(t, evs, streamWant{
		firstStates: []string{"working"}, text: "part-1;part-2;", liveTail: "part-2;", final: "completed", legacy: true,
	})
	if len(evs) > 0 && evs[0].TaskID != string(task.ID) {
		t.Errorf("resubscribe stream is for task %s, want %s", evs[0].TaskID, task.ID)
	}
	w.requireDialect(t, "", v03MethodList("send", "subscribe")...)
	requireSSE(t, w, "tasks/resubscribe")
}

// v03StreamInputRequired: the 0.3 stream ends at input-required with a
// final:true status update, and the task continues over a second stream.
func v03StreamInputRequired(t *testing.T) {
	ctx, w := testCtx(t), newWire(t)
	c := v03Connect(t, ctx, w)
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var evs []event
	for ev, err := range c.SendStreamingMessage(sctx, &a2a03.MessageSendParams{Message: text03("ask")}) {
		if err != nil {
			t.Fatalf("message/stream(ask) after %v: %v (a stream left open at input-required ends in a timeout)", evs, err)
		}
		evs = append(evs, v03Event(ev))
	}
	checkStream(t, evs, streamWant{firstStates: []string{"submitted", "working"}, final: "input-required", legacy: true})
	if t.Failed() {
		return
	}
	if q := evs[len(evs)-1]; q.Kind == "status" && q.Text != "What is your name?" {
		t.Errorf("input-required status update text %q, want the agent's question", q.Text)
	}
	next := a2a03.NewMessage(a2a03.MessageRoleUser, a2a03.TextPart{Text: "Ada"})
	next.TaskID, next.ContextID = a2a03.TaskID(evs[0].TaskID), evs[0].ContextID
	taskID := evs[0].TaskID
	evs = nil
	for ev, err := range c.SendStreamingMessage(sctx, &a2a03.MessageSendParams{Message: next}) {
		if err != nil {
			t.Fatalf("message/stream(continuation) after %v: %v", evs, err)
		}
		evs = append(evs, v03Event(ev))
	}
	checkStream(t, evs, streamWant{firstStates: []string{"submitted", "working"}, text: "Hello, Ada!", final: "completed", legacy: true})
	if len(evs) > 0 && evs[0].TaskID != taskID {
		t.Errorf("continuation stream is for task %s, want %s", evs[0].TaskID, taskID)
	}
	w.requireDialect(t, "", v03MethodList("stream")...)
}

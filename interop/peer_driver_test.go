package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	a2a03 "github.com/a2aproject/a2a-go/a2a"
	a2aclient03 "github.com/a2aproject/a2a-go/a2aclient"
	agentcard03 "github.com/a2aproject/a2a-go/a2aclient/agentcard"
)

// pResult is a send/get/cancel result of any client, reduced so one set of
// expectations covers the three Go client flavours.
type pResult struct {
	Kind      string // task | message
	TaskID    string
	ContextID string
	State     string // 0.3 spelling (normState)
	Status    string // text of the status message
	Artifacts []pArtifact
	// Text and Seen belong to a message result.
	Text string
	Seen *peerSeen
}

// pArtifact is an artifact; Parts are described by pPart.
type pArtifact struct {
	ID    string
	Parts []string
	Seen  *peerSeen
}

// text concatenates the artifacts' text parts.
func (r pResult) text() string {
	var b strings.Builder
	for _, a := range r.Artifacts {
		for _, p := range a.Parts {
			if s, ok := strings.CutPrefix(p, "text:"); ok {
				b.WriteString(s)
			}
		}
	}
	return b.String()
}

// pEvent is one stream event.
type pEvent struct {
	Kind       string // task | message | status | artifact
	TaskID     string
	State      string
	Text       string
	ArtifactID string
	Append     bool
	LastChunk  bool
	Seen       *peerSeen
}

func (e pEvent) String() string {
	switch e.Kind {
	case "artifact":
		return fmt.Sprintf("artifact(%q append=%v last=%v)", e.Text, e.Append, e.LastChunk)
	case "status":
		if e.Text != "" {
			return fmt.Sprintf("status(%s %q)", e.State, e.Text)
		}
		return fmt.Sprintf("status(%s)", e.State)
	case "task":
		return fmt.Sprintf("task(%s)", e.State)
	default:
		return fmt.Sprintf("message(%q)", e.Text)
	}
}

func seenPtr(meta map[string]any) *peerSeen {
	if s, ok := seenFromMeta(meta); ok {
		return &s
	}
	return nil
}

// peerDriver drives one agent through one client flavour.
type peerDriver struct {
	// name is the client flavour: "v2-1.0", "v2-0.3-compat", "v0.3".
	name string
	// sentVersion is the A2A-Version header this client sends on RPCs.
	sentVersion string
	// op maps send, stream, get, cancel, subscribe to the dialect's method.
	op map[string]string
	// send sends text, continuing task when it is not nil; nonBlocking asks
	// the server to answer before the task finishes.
	send   func(ctx context.Context, text string, task *pResult, nonBlocking bool) (pResult, error)
	stream func(ctx context.Context, text string, task *pResult) ([]pEvent, error)
	// streamEach is stream with each event also handed to each as it comes.
	streamEach func(ctx context.Context, text string, each func(pEvent)) ([]pEvent, error)
	get        func(ctx context.Context, id string) (pResult, error)
	cancel     func(ctx context.Context, id string) (pResult, error)
	subscribe  func(ctx context.Context, id string) ([]pEvent, error)
	// is reports whether err is the client's sentinel error for a JSON-RPC
	// error code (the code* constants).
	is func(err error, code int) bool
}

var (
	ops10 = map[string]string{"send": "SendMessage", "stream": "SendStreamingMessage", "get": "GetTask", "cancel": "CancelTask", "subscribe": "SubscribeToTask"}
	ops03 = map[string]string{"send": "message/send", "stream": "message/stream", "get": "tasks/get", "cancel": "tasks/cancel", "subscribe": "tasks/resubscribe"}
)

func (d peerDriver) methods(ops ...string) []string {
	out := make([]string, len(ops))
	for i, o := range ops {
		out[i] = d.op[o]
	}
	return out
}

// --- a2a-go v2 ---

func v2Part(p *a2a.Part) string {
	switch c := p.Content.(type) {
	case a2a.Text:
		return "text:" + string(c)
	case a2a.Raw:
		return fmt.Sprintf("raw:%s:%s:%s", p.Filename, p.MediaType, []byte(c))
	case a2a.URL:
		return fmt.Sprintf("url:%s:%s:%s", p.Filename, p.MediaType, string(c))
	case a2a.Data:
		b, _ := json.Marshal(c.Value)
		return "data:" + string(b)
	}
	return fmt.Sprintf("unknown:%T", p.Content)
}

func v2Parts(ps a2a.ContentParts) []string {
	var out []string
	for _, p := range ps {
		out = append(out, v2Part(p))
	}
	return out
}

func v2Result(res a2a.SendMessageResult) pResult {
	switch r := res.(type) {
	case *a2a.Task:
		out := pResult{Kind: "task", TaskID: string(r.ID), ContextID: r.ContextID, State: normState(string(r.Status.State))}
		if r.Status.Message != nil {
			out.Status = partsText(r.Status.Message.Parts)
		}
		for _, a := range r.Artifacts {
			out.Artifacts = append(out.Artifacts, pArtifact{ID: string(a.ID), Parts: v2Parts(a.Parts), Seen: seenPtr(a.Metadata)})
		}
		return out
	case *a2a.Message:
		return pResult{Kind: "message", TaskID: string(r.TaskID), ContextID: r.ContextID, Text: partsText(r.Parts), Seen: seenPtr(r.Metadata)}
	}
	return pResult{Kind: fmt.Sprintf("%T", res)}
}

func v2PEvent(ev a2a.Event) pEvent {
	switch e := ev.(type) {
	case *a2a.Task:
		return pEvent{Kind: "task", TaskID: string(e.ID), State: normState(string(e.Status.State))}
	case *a2a.Message:
		return pEvent{Kind: "message", TaskID: string(e.TaskID), Text: partsText(e.Parts), Seen: seenPtr(e.Metadata)}
	case *a2a.TaskStatusUpdateEvent:
		ne := pEvent{Kind: "status", TaskID: string(e.TaskID), State: normState(string(e.Status.State))}
		if e.Status.Message != nil {
			ne.Text = partsText(e.Status.Message.Parts)
		}
		return ne
	case *a2a.TaskArtifactUpdateEvent:
		ne := pEvent{Kind: "artifact", TaskID: string(e.TaskID), Append: e.Append, LastChunk: e.LastChunk}
		if e.Artifact != nil {
			ne.ArtifactID, ne.Text, ne.Seen = string(e.Artifact.ID), partsText(e.Artifact.Parts), seenPtr(e.Artifact.Metadata)
		}
		return ne
	}
	return pEvent{Kind: fmt.Sprintf("%T", ev)}
}

func v2Collect(seq func(yield func(a2a.Event, error) bool), each func(pEvent)) ([]pEvent, error) {
	var out []pEvent
	for ev, err := range seq {
		if err != nil {
			return out, err
		}
		pe := v2PEvent(ev)
		if each != nil {
			each(pe)
		}
		out = append(out, pe)
	}
	return out, nil
}

// v2Driver connects the a2a-go v2 client to p: over its 1.0 transport, or
// (compat) the card read by the 0.3 parser and only the 0.3 transport.
func v2Driver(t *testing.T, ctx context.Context, p *peer, w *wire, compat bool) peerDriver {
	t.Helper()
	var c *a2aclient.Client
	var err error
	if compat {
		resolver := &agentcard.Resolver{Client: w.client(), CardParser: a2av0.NewAgentCardParser()}
		card, rerr := resolver.Resolve(ctx, p.URL)
		if rerr != nil {
			t.Fatalf("resolving %s's card with the 0.3 parser: %v", p.Name, rerr)
		}
		c, err = a2aclient.NewFromCard(ctx, card, a2aclient.WithDefaultsDisabled(),
			a2aclient.WithCompatTransport(a2av0.Version, a2a.TransportProtocolJSONRPC,
				a2av0.NewJSONRPCTransportFactory(a2av0.JSONRPCTransportConfig{Client: w.client()})))
		if err != nil {
			t.Fatalf("v2 client on %s with the 0.3 compat transport: %v (interfaces %v)", p.Name, err, ifaces(card))
		}
	} else {
		card, rerr := (&agentcard.Resolver{Client: w.client()}).Resolve(ctx, p.URL)
		if rerr != nil {
			t.Fatalf("resolving %s's card: %v", p.Name, rerr)
		}
		c, err = a2aclient.NewFromCard(ctx, card, a2aclient.WithDefaultsDisabled(), a2aclient.WithJSONRPCTransport(w.client()))
		if err != nil {
			t.Fatalf("v2 client on %s: %v (interfaces %v)", p.Name, err, ifaces(card))
		}
	}
	d := peerDriver{name: "v2-1.0", sentVersion: "1.0", op: ops10, is: func(err error, code int) bool {
		sentinel, ok := map[int]error{
			codeInvalidParams: a2a.ErrInvalidParams, codeTaskNotFound: a2a.ErrTaskNotFound,
			codeTaskNotCancelable: a2a.ErrTaskNotCancelable, codeUnsupportedOperation: a2a.ErrUnsupportedOperation,
		}[code]
		return ok && errors.Is(err, sentinel)
	}}
	if compat {
		d.name, d.sentVersion, d.op = "v2-0.3-compat", "0.3", ops03
	}
	msgFor := func(text string, task *pResult) *a2a.Message {
		if task == nil {
			return userText(text)
		}
		return a2a.NewMessageForTask(a2a.MessageRoleUser, a2a.TaskInfo{TaskID: a2a.TaskID(task.TaskID), ContextID: task.ContextID}, a2a.NewTextPart(text))
	}
	d.send = func(ctx context.Context, text string, task *pResult, nonBlocking bool) (pResult, error) {
		req := &a2a.SendMessageRequest{Message: msgFor(text, task)}
		if nonBlocking {
			req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
		}
		res, err := c.SendMessage(ctx, req)
		if err != nil {
			return pResult{}, err
		}
		return v2Result(res), nil
	}
	d.stream = func(ctx context.Context, text string, task *pResult) ([]pEvent, error) {
		return v2Collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msgFor(text, task)}), nil)
	}
	d.streamEach = func(ctx context.Context, text string, each func(pEvent)) ([]pEvent, error) {
		return v2Collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msgFor(text, nil)}), each)
	}
	d.get = func(ctx context.Context, id string) (pResult, error) {
		task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(id)})
		if err != nil {
			return pResult{}, err
		}
		return v2Result(task), nil
	}
	d.cancel = func(ctx context.Context, id string) (pResult, error) {
		task, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: a2a.TaskID(id)})
		if err != nil {
			return pResult{}, err
		}
		return v2Result(task), nil
	}
	d.subscribe = func(ctx context.Context, id string) ([]pEvent, error) {
		return v2Collect(c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: a2a.TaskID(id)}), nil)
	}
	return d
}

// --- a2a-go v0.3 ---

func v03Part(p a2a03.Part) string {
	switch c := p.(type) {
	case a2a03.TextPart:
		return "text:" + c.Text
	case a2a03.DataPart:
		b, _ := json.Marshal(c.Data)
		return "data:" + string(b)
	case a2a03.FilePart:
		switch f := c.File.(type) {
		case a2a03.FileBytes:
			return fmt.Sprintf("raw:%s:%s:%s", f.Name, f.MimeType, decodeB64(f.Bytes))
		case a2a03.FileURI:
			return fmt.Sprintf("url:%s:%s:%s", f.Name, f.MimeType, f.URI)
		}
	}
	return fmt.Sprintf("unknown:%T", p)
}

func v03Result(res a2a03.SendMessageResult) pResult {
	switch r := res.(type) {
	case *a2a03.Task:
		out := pResult{Kind: "task", TaskID: string(r.ID), ContextID: r.ContextID, State: normState(string(r.Status.State)), Status: status03Text(r)}
		for _, a := range r.Artifacts {
			var parts []string
			for _, p := range a.Parts {
				parts = append(parts, v03Part(p))
			}
			out.Artifacts = append(out.Artifacts, pArtifact{ID: string(a.ID), Parts: parts, Seen: seenPtr(a.Metadata)})
		}
		return out
	case *a2a03.Message:
		return pResult{Kind: "message", TaskID: string(r.TaskID), ContextID: r.ContextID, Text: parts03Text(r.Parts), Seen: seenPtr(r.Metadata)}
	}
	return pResult{Kind: fmt.Sprintf("%T", res)}
}

func v03PEvent(ev a2a03.Event) pEvent {
	switch e := ev.(type) {
	case *a2a03.Task:
		return pEvent{Kind: "task", TaskID: string(e.ID), State: normState(string(e.Status.State))}
	case *a2a03.Message:
		return pEvent{Kind: "message", TaskID: string(e.TaskID), Text: parts03Text(e.Parts), Seen: seenPtr(e.Metadata)}
	case *a2a03.TaskStatusUpdateEvent:
		ne := pEvent{Kind: "status", TaskID: string(e.TaskID), State: normState(string(e.Status.State))}
		if e.Status.Message != nil {
			ne.Text = parts03Text(e.Status.Message.Parts)
		}
		return ne
	case *a2a03.TaskArtifactUpdateEvent:
		return pEvent{Kind: "artifact", TaskID: string(e.TaskID), Append: e.Append, LastChunk: e.LastChunk,
			ArtifactID: string(e.Artifact.ID), Text: parts03Text(e.Artifact.Parts), Seen: seenPtr(e.Artifact.Metadata)}
	}
	return pEvent{Kind: fmt.Sprintf("%T", ev)}
}

func v03Collect(seq func(yield func(a2a03.Event, error) bool), each func(pEvent)) ([]pEvent, error) {
	var out []pEvent
	for ev, err := range seq {
		if err != nil {
			return out, err
		}
		pe := v03PEvent(ev)
		if each != nil {
			each(pe)
		}
		out = append(out, pe)
	}
	return out, nil
}

// v03DriverFor connects the a2a-go v0.3 client to p from its card.
func v03DriverFor(t *testing.T, ctx context.Context, p *peer, w *wire) peerDriver {
	t.Helper()
	card, err := (&agentcard03.Resolver{Client: w.client()}).Resolve(ctx, p.URL)
	if err != nil {
		t.Fatalf("resolving %s's card with the v0.3 client: %v", p.Name, err)
	}
	c, err := a2aclient03.NewFromCard(ctx, card, a2aclient03.WithDefaultsDisabled(), a2aclient03.WithJSONRPCTransport(w.client()))
	if err != nil {
		t.Fatalf("v0.3 client on %s: %v (url %q preferredTransport %q)", p.Name, err, card.URL, card.PreferredTransport)
	}
	msgFor := func(text string, task *pResult) *a2a03.Message {
		m := text03(text)
		if task != nil {
			m.TaskID, m.ContextID = a2a03.TaskID(task.TaskID), task.ContextID
		}
		return m
	}
	d := peerDriver{name: "v0.3", sentVersion: "", op: ops03, is: func(err error, code int) bool {
		sentinel, ok := map[int]error{
			codeInvalidParams: a2a03.ErrInvalidParams, codeTaskNotFound: a2a03.ErrTaskNotFound,
			codeTaskNotCancelable: a2a03.ErrTaskNotCancelable, codeUnsupportedOperation: a2a03.ErrUnsupportedOperation,
		}[code]
		return ok && errors.Is(err, sentinel)
	}}
	d.send = func(ctx context.Context, text string, task *pResult, nonBlocking bool) (pResult, error) {
		params := &a2a03.MessageSendParams{Message: msgFor(text, task)}
		if nonBlocking {
			params.Config = nonBlocking03()
		}
		res, err := c.SendMessage(ctx, params)
		if err != nil {
			return pResult{}, err
		}
		return v03Result(res), nil
	}
	d.stream = func(ctx context.Context, text string, task *pResult) ([]pEvent, error) {
		return v03Collect(c.SendStreamingMessage(ctx, &a2a03.MessageSendParams{Message: msgFor(text, task)}), nil)
	}
	d.streamEach = func(ctx context.Context, text string, each func(pEvent)) ([]pEvent, error) {
		return v03Collect(c.SendStreamingMessage(ctx, &a2a03.MessageSendParams{Message: msgFor(text, nil)}), each)
	}
	d.get = func(ctx context.Context, id string) (pResult, error) {
		task, err := c.GetTask(ctx, &a2a03.TaskQueryParams{ID: a2a03.TaskID(id)})
		if err != nil {
			return pResult{}, err
		}
		return v03Result(task), nil
	}
	d.cancel = func(ctx context.Context, id string) (pResult, error) {
		task, err := c.CancelTask(ctx, &a2a03.TaskIDParams{ID: a2a03.TaskID(id)})
		if err != nil {
			return pResult{}, err
		}
		return v03Result(task), nil
	}
	d.subscribe = func(ctx context.Context, id string) ([]pEvent, error) {
		return v03Collect(c.ResubscribeToTask(ctx, &a2a03.TaskIDParams{ID: a2a03.TaskID(id)}), nil)
	}
	return d
}

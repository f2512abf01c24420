package interop

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	a2a03 "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// TestClientCodecA2AGo holds the protocol package's client side to a2a-go's
// own JSON types, the way an a2a-go agent writes and reads them: every
// result a2a-go marshals decodes, and re-encodes to what a2a-go unmarshals
// back; the params the client writes are what a2a-go's server types read;
// the cards a2a-go marshals parse. No network: the types are the wire.
func TestClientCodecA2AGo(t *testing.T) {
	t.Run("1.0", clientCodecV10)
	t.Run("0.3", clientCodecV03)
	t.Run("cards", clientCodecCards)
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func clientCodecV10(t *testing.T) {
	c := protocol.NewCodec(protocol.V10, protocol.Limits{})
	now := time.Date(2026, 3, 12, 10, 30, 0, 123456789, time.UTC)
	msg := &a2a.Message{ID: "m1", ContextID: "c", TaskID: "t", Role: a2a.MessageRoleAgent, Metadata: map[string]any{"k": "v"},
		Parts: a2a.ContentParts{a2a.NewTextPart("hi"), a2a.NewRawPart([]byte{0, 1, 2}),
			a2a.NewFileURLPart("https://files.example.com/a.png", "image/png"),
			a2a.NewDataPart(map[string]any{"a": 1.0}), a2a.NewDataPart([]any{1.0, "x"})}}
	task := &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: msg, Timestamp: &now},
		Artifacts: []*a2a.Artifact{{ID: "a1", Name: "n", Parts: a2a.ContentParts{a2a.NewTextPart("x")}}}, History: []*a2a.Message{msg}}
	chunk := a2a.NewArtifactUpdateEvent(task, "a1", a2a.NewTextPart("more"))
	chunk.LastChunk = true
	done := a2a.NewStatusUpdateEvent(task, a2a.TaskStateCompleted, nil)

	for _, ev := range []a2a.Event{task, msg, chunk, done} {
		b := mustMarshal(t, a2a.StreamResponse{Event: ev})
		got, err := c.DecodeStreamResult(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		var back a2a.StreamResponse
		enc := c.AppendStreamResult(nil, got)
		if err := json.Unmarshal(enc, &back); err != nil {
			t.Fatalf("a2a-go refuses %s: %v", enc, err)
		}
		if again := mustMarshal(t, back); !bytes.Equal(again, b) && ev != task && ev != done {
			// Tasks and status updates differ only in the timestamp's
			// precision (milliseconds on the way back).
			t.Errorf("a2a-go reads back\n%s\nnot\n%s", again, b)
		}
	}
	ev, err := c.DecodeStreamResult(mustMarshal(t, a2a.StreamResponse{Event: task}))
	if err != nil {
		t.Fatal(err)
	}
	got := ev.Task
	if got.ID != "t" || got.ContextID != "c" || got.Status.State != protocol.StateWorking || !got.Status.Timestamp.Equal(now) ||
		len(got.History) != 1 || len(got.Status.Message.Parts) != 5 || got.Artifacts[0].Name != "n" {
		t.Fatalf("task %+v", got)
	}
	parts := got.Status.Message.Parts
	if parts[0].Text != "hi" || !bytes.Equal(parts[1].Raw, []byte{0, 1, 2}) || parts[2].URL != "https://files.example.com/a.png" ||
		parts[2].MediaType != "image/png" || string(parts[3].Data) != `{"a":1}` || string(parts[4].Data) != `[1,"x"]` {
		t.Fatalf("parts %+v", parts)
	}
	ev, err = c.DecodeStreamResult(mustMarshal(t, a2a.StreamResponse{Event: chunk}))
	if err != nil || !ev.Artifact.Append || !ev.Artifact.LastChunk || ev.Artifact.Artifact.ID != "a1" {
		t.Fatalf("%v %+v", err, ev)
	}
	if tk, err := c.DecodeTask(mustMarshal(t, task)); err != nil || tk.ID != "t" {
		t.Fatalf("%v %+v", err, tk)
	}

	hl := 2
	p := protocol.SendParams{Tenant: "acme", HistoryLength: &hl, AcceptedOutputModes: []string{"text/plain"},
		Message: protocol.Message{ID: "m", Role: protocol.RoleUser, Parts: []protocol.Part{{Kind: protocol.PartText, Text: "hi"},
			{Kind: protocol.PartFile, Raw: []byte{1, 2}, Filename: "f.bin"}, {Kind: protocol.PartFile, URL: "https://x.example/y"},
			{Kind: protocol.PartData, Data: json.RawMessage(`{"a":1}`)}}}}
	var req a2a.SendMessageRequest
	b := c.AppendSendParams(nil, &p)
	if err := json.Unmarshal(b, &req); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if req.Tenant != "acme" || req.Config == nil || !req.Config.ReturnImmediately || *req.Config.HistoryLength != 2 ||
		req.Message.Role != a2a.MessageRoleUser || len(req.Message.Parts) != 4 || req.Message.Parts[0].Text() != "hi" {
		t.Fatalf("%s read as %+v", b, req)
	}
	var get a2a.GetTaskRequest
	if err := json.Unmarshal(c.AppendGetTaskParams(nil, &protocol.GetTaskParams{Tenant: "acme", ID: "t", HistoryLength: &hl}), &get); err != nil ||
		get.ID != "t" || get.Tenant != "acme" || *get.HistoryLength != 2 {
		t.Fatalf("%v %+v", err, get)
	}
	var cancel a2a.CancelTaskRequest
	if err := json.Unmarshal(c.AppendTaskIDParams(nil, &protocol.TaskIDParams{ID: "t"}), &cancel); err != nil || cancel.ID != "t" {
		t.Fatalf("%v %+v", err, cancel)
	}
}

func clientCodecV03(t *testing.T) {
	c := protocol.NewCodec(protocol.V03, protocol.Limits{})
	msg := a2a03.NewMessage(a2a03.MessageRoleAgent, a2a03.TextPart{Text: "hi"},
		a2a03.FilePart{File: a2a03.FileBytes{FileMeta: a2a03.FileMeta{Name: "f"}, Bytes: "AAEC"}},
		a2a03.FilePart{File: a2a03.FileURI{URI: "https://x.example/y"}}, a2a03.DataPart{Data: map[string]any{"a": 1}})
	task := &a2a03.Task{ID: "t", ContextID: "c", Status: a2a03.TaskStatus{State: a2a03.TaskStateInputRequired, Message: msg}, History: []*a2a03.Message{msg}}
	chunk := &a2a03.TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Append: true, LastChunk: true,
		Artifact: &a2a03.Artifact{ID: "a", Parts: a2a03.ContentParts{a2a03.TextPart{Text: "x"}}}}
	done := &a2a03.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Final: true, Status: a2a03.TaskStatus{State: a2a03.TaskStateCompleted}}

	for _, ev := range []a2a03.Event{task, msg, chunk, done} {
		b := mustMarshal(t, ev)
		got, err := c.DecodeStreamResult(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		back, err := a2a03.UnmarshalEventJSON(c.AppendStreamResult(nil, got))
		if err != nil {
			t.Fatalf("a2a-go 0.3 refuses %s: %v", c.AppendStreamResult(nil, got), err)
		}
		if again := mustMarshal(t, back); !bytes.Equal(again, b) {
			t.Errorf("a2a-go 0.3 reads back\n%s\nnot\n%s", again, b)
		}
	}
	if ev, err := c.DecodeStreamResult(mustMarshal(t, done)); err != nil || !ev.Status.Final || ev.Status.Status.State != protocol.StateCompleted {
		t.Fatalf("%v %+v", err, ev)
	}
	if ev, err := c.DecodeSendResult(mustMarshal(t, task)); err != nil || ev.Task == nil || ev.Task.Status.State != protocol.StateInputRequired ||
		len(ev.Task.Status.Message.Parts) != 4 || !bytes.Equal(ev.Task.Status.Message.Parts[1].Raw, []byte{0, 1, 2}) {
		t.Fatalf("%v %+v", err, ev)
	}

	p := protocol.SendParams{Message: protocol.Message{ID: "m", Role: protocol.RoleUser, Parts: []protocol.Part{
		{Kind: protocol.PartText, Text: "hi"}, {Kind: protocol.PartFile, Raw: []byte{1}}, {Kind: protocol.PartData, Data: json.RawMessage(`[1]`)}}}}
	for _, blocking := range []bool{false, true} {
		p.Blocking = blocking
		var sp a2a03.MessageSendParams
		b := c.AppendSendParams(nil, &p)
		if err := json.Unmarshal(b, &sp); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if sp.Config == nil || sp.Config.Blocking == nil || *sp.Config.Blocking != blocking || len(sp.Message.Parts) != 3 {
			t.Fatalf("%s read as %+v", b, sp)
		}
	}
}

func clientCodecCards(t *testing.T) {
	skills2 := []a2a.AgentSkill{{ID: "s", Name: "s", Description: "d", Tags: []string{"t"}}}
	v2 := a2a.AgentCard{Name: "n", Description: "d", Version: "1",
		SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface("http://127.0.0.1:1/x", a2a.TransportProtocolJSONRPC)},
		Capabilities:        a2a.AgentCapabilities{Streaming: true}, DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: skills2}
	card, err := protocol.ParseCard(mustMarshal(t, v2))
	if err != nil || len(card.Interfaces) != 1 || card.Interfaces[0] != (protocol.Interface{URL: "http://127.0.0.1:1/x", Binding: "JSONRPC", Version: protocol.V10}) || !card.Streaming {
		t.Fatalf("%v %+v", err, card)
	}
	v03 := a2a03.AgentCard{Name: "n", Description: "d", Version: "1", URL: "http://127.0.0.1:1/x", PreferredTransport: a2a03.TransportProtocolJSONRPC,
		ProtocolVersion: "0.3.0", DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a03.AgentSkill{{ID: "s", Name: "s", Description: "d", Tags: []string{"t"}}}}
	card, err = protocol.ParseCard(mustMarshal(t, v03))
	if err != nil || len(card.Interfaces) != 1 || card.Interfaces[0] != (protocol.Interface{URL: "http://127.0.0.1:1/x", Binding: "JSONRPC", Version: protocol.V03}) {
		t.Fatalf("%v %+v", err, card)
	}
}

package protocol

import (
	"strings"
	"testing"
	"time"
)

// TestV03ProtoDecode: the bodies 0.3's REST clients send, and what is
// refused in them.
func TestV03ProtoDecode(t *testing.T) {
	c := NewRESTCodecV03(Limits{})
	p, err := c.DecodeSend([]byte(`{"message":{"messageId":"m","role":"ROLE_USER","content":[` +
		`{"text":"hi","metadata":{"k":1}},{"file":{"fileWithUri":"https://x/a.pdf","mimeType":"application/pdf","name":"a.pdf"}},` +
		`{"file":{"fileWithBytes":"aGk=","mimeType":"text/plain"}},{"data":{"data":{"n":1}}}]},"configuration":{"blocking":true,"historyLength":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	m := p.Message
	if !p.Blocking || *p.HistoryLength != 2 || m.Role != RoleUser || len(m.Parts) != 4 ||
		m.Parts[0].Text != "hi" || string(m.Parts[0].Metadata) != `{"k":1}` ||
		m.Parts[1].Kind != PartFile || m.Parts[1].URL != "https://x/a.pdf" || m.Parts[1].MediaType != "application/pdf" || m.Parts[1].Filename != "a.pdf" ||
		string(m.Parts[2].Raw) != "hi" || m.Parts[3].Kind != PartData || string(m.Parts[3].Data) != `{"n":1}` {
		t.Fatalf("decoded %+v", p)
	}
	// The proto's bool: no blocking, no wait.
	for _, body := range []string{
		`{"message":{"messageId":"m","role":"ROLE_USER","content":[{"text":"x"}]}}`,
		`{"message":{"messageId":"m","role":"ROLE_USER","content":[{"text":"x"}]},"configuration":{}}`,
	} {
		if p, err := c.DecodeSend([]byte(body)); err != nil || p.Blocking {
			t.Errorf("%s: blocking %v %v, want false", body, p != nil && p.Blocking, err)
		}
	}
	for _, tc := range []struct{ body, field string }{
		{`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}`, "message.content"},
		{`{"message":{"messageId":"m","role":"user","content":[{"text":"x"}]}}`, "message.role"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","content":[{"kind":"text","text":"x","data":{"data":{}}}]}}`, "message.content[0]"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","content":[{"file":{"fileWithUri":"u","fileWithBytes":"aGk="}}]}}`, "message.content[0].file"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","content":[{"data":{"value":1}}]}}`, "message.content[0].data.data"},
		{`{"message":{"messageId":"m","role":"ROLE_USER","content":[{"data":{"data":[1]}}]}}`, "message.content[0].data.data"},
	} {
		_, err := c.DecodeSend([]byte(tc.body))
		pe, ok := err.(*Error)
		if !ok || pe.Code != CodeInvalidParams || len(pe.Violations) == 0 || pe.Violations[0].Field != tc.field {
			t.Errorf("%s: %v, want -32602 on %s", tc.body, err, tc.field)
		}
	}
}

// TestV03ProtoEncode: the exact bytes of a task and of each stream event.
func TestV03ProtoEncode(t *testing.T) {
	c := NewRESTCodecV03(Limits{})
	ts := time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC)
	task := &Task{ID: "t", ContextID: "c", Status: TaskStatus{State: StateCanceled, Timestamp: ts},
		History:   []Message{{ID: "m", Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "hi"}}}},
		Artifacts: []Artifact{{ID: "a", Parts: []Part{{Kind: PartData, Data: []byte(`[1]`)}, {Kind: PartFile, URL: "u", MediaType: "text/plain"}}}}}
	for _, tc := range []struct {
		ev   Event
		want string
	}{
		{Event{Task: task}, `{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_CANCELLED","timestamp":"2026-12-03T14:00:00.000Z"},` +
			`"artifacts":[{"artifactId":"a","parts":[{"data":{"data":{"value":[1]}}},{"file":{"fileWithUri":"u","mimeType":"text/plain"}}]}],` +
			`"history":[{"messageId":"m","role":"ROLE_USER","content":[{"text":"hi"}]}]}}`},
		{Event{Status: &StatusUpdate{TaskID: "t", ContextID: "c", Status: TaskStatus{State: StateCompleted}, Final: true}},
			`{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"},"final":true}}`},
		{Event{Artifact: &ArtifactUpdate{TaskID: "t", ContextID: "c", Artifact: Artifact{ID: "a", Parts: []Part{{Kind: PartText, Text: "x"}}}, Append: true, LastChunk: true}},
			`{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"x"}]},"append":true,"lastChunk":true}}`},
		{Event{Message: &Message{ID: "r", Role: RoleAgent, ContextID: "c", Parts: []Part{{Kind: PartText, Text: "ok"}}}},
			`{"message":{"messageId":"r","contextId":"c","role":"ROLE_AGENT","content":[{"text":"ok"}]}}`},
	} {
		if got := string(c.AppendStreamResult(nil, &tc.ev)); got != tc.want {
			t.Errorf("got\n%s\nwant\n%s", got, tc.want)
		}
	}
	if got := string(c.AppendTask(nil, task)); !strings.HasPrefix(got, `{"id":"t","contextId":"c","status":{"state":"TASK_STATE_CANCELLED"`) {
		t.Errorf("task: %s", got)
	}
}

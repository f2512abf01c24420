package pack

import (
	"errors"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// A reply's answer reads back as written: pending, a task, a message;
// an unknown kind or a body that is no message is ErrCorrupt.
func TestReplyRoundTrip(t *testing.T) {
	msg := &protocol.Message{ID: "a1", ContextID: "c1", Role: protocol.RoleAgent, Parts: []protocol.Part{{Kind: protocol.PartText, Text: "hi"}}}
	for _, r := range []*store.Reply{{Digest: "d"}, {Digest: "d", TaskID: "t1"}, {Digest: "d", Message: msg}} {
		kind, body := EncodeReply(r)
		got, err := DecodeReply(kind, "d", body)
		if err != nil {
			t.Fatal(err)
		}
		if got.Digest != "d" || got.TaskID != r.TaskID || (r.Message == nil) != (got.Message == nil) ||
			(r.Message != nil && (got.Message.ID != "a1" || got.Message.ContextID != "c1" || got.Message.Parts[0].Text != "hi")) {
			t.Fatalf("%c: %+v, want %+v", kind, got, r)
		}
	}
	if _, err := DecodeReply('x', "d", nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("an unknown kind: %v", err)
	}
	_, task := EncodeReply(&store.Reply{TaskID: "t1"})
	if _, err := DecodeReply(ReplyMessage, "d", task); err == nil {
		t.Fatal("a task id read as a message")
	}
}

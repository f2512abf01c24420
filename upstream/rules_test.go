package upstream

import (
	"errors"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// TestRules: the rules every kind holds an agent's answer to, on their
// own (the HTTP kind's tests hold whole answers to them on the wire).
func TestRules(t *testing.T) {
	r := NewRules(protocol.Limits{MaxParts: 2, MaxTextBytes: 4}, 8)
	text := func(s string) protocol.Part { return protocol.Part{Kind: protocol.PartText, Text: s} }
	for _, tc := range []struct {
		name string
		err  error
		want string // "" : accepted
	}{
		{"text at the limit", r.CheckText("abcd", ""), ""},
		{"text over the limit", r.CheckText("abcde", "message"), "max_text_size"},
		{"part over the limit", r.CheckPart(new(text("abcde")), "artifact"), "max_text_size"},
		{"parts at the limit", r.CheckParts([]protocol.Part{text("a"), text("b")}, "parts"), ""},
		{"parts over the limit", r.CheckParts([]protocol.Part{text("a"), text("b"), text("c")}, "parts"), "max_parts"},
		{"a whole answer is not held to the part size", r.CheckOutputPart(new(text("a whole answer")), "answer"), ""},
		{"a whole answer is held to what a client may take",
			r.CheckOutputPart(&protocol.Part{Kind: protocol.PartFile, URL: "javascript:alert(1)"}, "answer"), "answer"},
	} {
		switch {
		case tc.want == "" && tc.err != nil:
			t.Errorf("%s: %v", tc.name, tc.err)
		case tc.want != "" && (tc.err == nil || !errors.Is(tc.err, ErrBadOutput) || !strings.Contains(tc.err.Error(), tc.want)):
			t.Errorf("%s: %v, want ErrBadOutput naming %q", tc.name, tc.err, tc.want)
		}
	}
	if valid, err := r.CheckDepth([]byte("[[[[[[[[]]]]]]]]"), "event"); !valid || err != nil {
		t.Errorf("depth 8 of 8: %v %v", valid, err)
	}
	if _, err := r.CheckDepth([]byte("[[[[[[[[[]]]]]]]]]"), "event"); err == nil || !strings.Contains(err.Error(), "event nests 9 levels deep, over the max_json_depth limit of 8") {
		t.Errorf("depth 9 of 8: %v", err)
	}
	if valid, _ := r.CheckDepth([]byte("{"), "event"); valid {
		t.Error("invalid JSON reported valid")
	}
}

package handler

import (
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// step is one event of a test agent.
type step struct{ ev upstream.Event }

func text(s string) step { return step{ev: upstream.Event{Kind: upstream.EventText, Text: s}} }

func status(st protocol.TaskState, msg string) step {
	return step{ev: upstream.Event{Kind: upstream.EventStatus, State: st,
		Parts: []protocol.Part{{Kind: protocol.PartText, Text: msg}}}}
}

// unbounded are run limits no test here reaches: the merging alone is
// under test (the limits are, through the JSON-RPC binding's tests).
var unbounded = runLimits{events: 1 << 30, output: 1 << 40, artifacts: 1 << 20}

// buildReply feeds steps through the interpreter to a replyBuilder and
// returns the reply's parts.
func buildReply(t testing.TB, steps ...step) []protocol.Part {
	t.Helper()
	var b replyBuilder
	in := interpreter{limits: &unbounded}
	for i := range steps {
		if _, err := in.apply(&steps[i].ev, &b); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	return b.parts()
}

func TestReplyBuilderMerges(t *testing.T) {
	txt := func(s string) protocol.Part { return protocol.Part{Kind: protocol.PartText, Text: s} }
	data := protocol.Part{Kind: protocol.PartData, Data: []byte(`{"k":1}`)}
	noted := protocol.Part{Kind: protocol.PartText, Text: "n", Metadata: []byte(`{"m":1}`)}
	parts := func(ps ...protocol.Part) step {
		return step{ev: upstream.Event{Kind: upstream.EventParts, Parts: ps}}
	}
	artifact := step{ev: upstream.Event{Kind: upstream.EventArtifact, Artifact: &protocol.Artifact{Parts: []protocol.Part{txt("art")}}}}
	tests := []struct {
		name  string
		steps []step
		want  []protocol.Part
	}{
		{"nothing", nil, []protocol.Part{txt("")}},
		{"chunks merge", []step{text("a"), text("b"), text("c")}, []protocol.Part{txt("abc")}},
		{"empty chunks skipped", []step{text(""), text("a"), text(""), text("b")}, []protocol.Part{txt("ab")}},
		{"a data part splits", []step{text("a"), parts(data), text("b"), text("c")}, []protocol.Part{txt("a"), data, txt("bc")}},
		{"into a plain text part sent as parts", []step{parts(txt("x")), text("y"), text("z")}, []protocol.Part{txt("xyz")}},
		{"not into a part with metadata", []step{parts(noted), text("y")}, []protocol.Part{noted, txt("y")}},
		{"across an artifact and a note", []step{text("a"), artifact, status(protocol.StateWorking, "hm"), text("b")},
			[]protocol.Part{txt("ab"), txt("art")}},
		{"then the final status", []step{text("a"), text("b"), status(protocol.StateInputRequired, "more?")},
			[]protocol.Part{txt("ab"), txt("more?")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := buildReply(t, tt.steps...); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("parts\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestReplyBuilderLinear: merging 4,000 chunks of 1.6 KB costs a few
// dozen allocations and a small multiple of the text's size (append grows
// large buffers by a quarter, so about five times), not one copy of the
// whole text per chunk (quadratic: ~13 GB for these 6.4 MB).
func TestReplyBuilderLinear(t *testing.T) {
	const chunks, size = 4000, 1600
	steps := make([]step, chunks)
	for i := range steps {
		steps[i] = text(strings.Repeat(string(rune('a'+i%26)), size))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ps := buildReply(t, steps...)
	runtime.ReadMemStats(&after)
	if len(ps) != 1 || len(ps[0].Text) != chunks*size {
		t.Fatalf("got %d parts, text of %d bytes", len(ps), len(ps[0].Text))
	}
	if n := after.Mallocs - before.Mallocs; n > 200 {
		t.Errorf("%d allocations to merge %d chunks, want at most 200", n, chunks)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 8*chunks*size {
		t.Errorf("%d bytes allocated to merge %d bytes, want at most %d", n, chunks*size, 8*chunks*size)
	}
}

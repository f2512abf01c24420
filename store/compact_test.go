package store

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

func chunk(id, text string, appendTo, last bool) protocol.Event {
	return protocol.Event{Artifact: &protocol.ArtifactUpdate{
		TaskID: "t", Artifact: protocol.Artifact{ID: id, Parts: []protocol.Part{{Kind: protocol.PartText, Text: text}}},
		Append: appendTo, LastChunk: last,
	}}
}

func working() protocol.Event {
	return protocol.Event{Status: &protocol.StatusUpdate{TaskID: "t", Status: protocol.TaskStatus{State: protocol.StateWorking}}}
}

// describe renders an event compactly: a:<id>:<append>:<last>:<parts>, or
// status / task.
func describe(ev protocol.Event) string {
	switch {
	case ev.Artifact != nil:
		var parts []string
		for _, p := range ev.Artifact.Artifact.Parts {
			switch p.Kind {
			case protocol.PartText:
				parts = append(parts, "t="+p.Text)
			default:
				parts = append(parts, "d="+string(p.Data))
			}
		}
		return fmt.Sprintf("a:%s:%v:%v:%s", ev.Artifact.Artifact.ID, ev.Artifact.Append, ev.Artifact.LastChunk, strings.Join(parts, "|"))
	case ev.Status != nil:
		return "status"
	case ev.Task != nil:
		return "task"
	}
	return "?"
}

func TestCompact(t *testing.T) {
	data := protocol.Event{Artifact: &protocol.ArtifactUpdate{TaskID: "t", Append: true, Artifact: protocol.Artifact{
		ID: "m", Parts: []protocol.Part{{Kind: protocol.PartData, Data: json.RawMessage(`{"k":1}`)}},
	}}}
	for _, c := range []struct {
		name string
		in   []protocol.Event
		want []string
		at   []int // nil: nothing merged
	}{
		{
			name: "nothing to merge",
			in:   []protocol.Event{{Task: &protocol.Task{ID: "t"}}, working(), chunk("a", "whole", false, true)},
		},
		{
			name: "a run's chunks become one update at the last chunk's place",
			in: []protocol.Event{
				{Task: &protocol.Task{ID: "t"}}, working(),
				chunk("m", "Hel", false, false), chunk("m", "lo", true, false), working(),
				chunk("m", ", world", true, false), chunk("m", "", true, true), working(),
			},
			want: []string{"task", "status", "status", "a:m:false:true:t=Hello, world", "status"},
			at:   []int{0, 1, 4, 6, 7},
		},
		{
			name: "a separate artifact in between stays where it was",
			in: []protocol.Event{
				chunk("m", "a", false, false), chunk("x", "sep", false, true), chunk("m", "b", true, false),
			},
			want: []string{"a:x:false:true:t=sep", "a:m:false:false:t=ab"},
			at:   []int{1, 2},
		},
		{
			name: "text around a data part merges on each side, in order",
			in:   []protocol.Event{chunk("m", "a", false, false), chunk("m", "b", true, false), data, chunk("m", "c", true, true)},
			want: []string{`a:m:false:true:t=ab|d={"k":1}|t=c`},
			at:   []int{3},
		},
		{
			name: "a group opened by an append keeps appending to what came before",
			in:   []protocol.Event{chunk("m", "b", true, false), chunk("m", "c", true, false)},
			want: []string{"a:m:true:false:t=bc"},
			at:   []int{1},
		},
		{
			name: "an update that replaces (append false) starts a new group",
			in:   []protocol.Event{chunk("m", "a", false, false), chunk("m", "b", true, false), chunk("m", "new", false, false), chunk("m", "er", true, true)},
			want: []string{"a:m:false:false:t=ab", "a:m:false:true:t=newer"},
			at:   []int{1, 3},
		},
		{
			name: "empty chunks alone still make a part",
			in:   []protocol.Event{chunk("m", "", false, false), chunk("m", "", true, true)},
			want: []string{"a:m:false:true:t="},
			at:   []int{1},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := make([]string, len(c.in))
			for i := range c.in {
				before[i] = describe(c.in[i])
			}
			out, at := Compact(c.in)
			if c.at == nil {
				if out != nil || at != nil {
					t.Fatalf("merged %v at %v, want nothing", out, at)
				}
				return
			}
			var got []string
			for _, ev := range out {
				got = append(got, describe(ev))
			}
			if !reflect.DeepEqual(got, c.want) || !reflect.DeepEqual(at, c.at) {
				t.Errorf("got %q at %v\nwant %q at %v", got, at, c.want, c.at)
			}
			for i := range c.in {
				if describe(c.in[i]) != before[i] {
					t.Errorf("input event %d changed: %s, was %s", i, describe(c.in[i]), before[i])
				}
			}
		})
	}
}

package store

import (
	"strings"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// Compact merges the chunks of each streamed artifact in a stretch of a
// task's log into one artifact update, so that a settled turn costs a
// handful of events instead of one per chunk the agent sent. Stores call
// it on a task's earlier turns when the task takes a new one: by then no
// stream that keeps up is relaying them any more, and a turn's chunks are
// final.
//
// A chunk is an artifact update with Append set; it merges into the
// latest earlier update of the same artifact in evs (its group), and the
// merged update takes the place of the group's LAST chunk: at[i] is the
// index in evs of the event whose position (event id) out[i] keeps. So
// the ids stay those of the original log, and a reader that resumes after
// any id gets a correct view: after an id inside a group it receives the
// whole artifact with Append false, which replaces the chunks it saw
// (A2A's artifact update semantics), and after the group's last id it
// receives nothing of it again. Events between a group's first and last
// chunk keep their order and come before the merged update.
//
// Consecutive plain text parts (no media type, no metadata) merge into
// one, as they do in the task snapshot; other parts are kept in order.
// evs is not changed; events that merge nothing are returned as they are.
// out is nil when there is nothing to merge (at then too): the caller
// keeps evs.
func Compact(evs []protocol.Event) (out []protocol.Event, at []int) {
	// groups maps an artifact id to the group its next chunk joins.
	type group struct {
		first int // index in evs of the group's opening update
		last  int // index in evs of its newest chunk
		n     int // updates in the group
	}
	groups := map[string]*group{}
	var opened []*group // in order of opening, for the merge pass
	merges := 0
	for i := range evs {
		a := evs[i].Artifact
		if a == nil {
			continue
		}
		g := groups[a.Artifact.ID]
		if a.Append && g != nil {
			g.last = i
			g.n++
			merges++
			continue
		}
		g = &group{first: i, last: i, n: 1}
		groups[a.Artifact.ID] = g
		opened = append(opened, g)
	}
	if merges == 0 {
		return nil, nil
	}
	// lastOf[i] is the group whose merged update goes where evs[i] was;
	// member marks the other updates of merged groups, which are dropped.
	lastOf := make(map[int]*group, len(opened))
	member := make(map[int]bool, merges)
	for _, g := range opened {
		if g.n == 1 {
			continue
		}
		lastOf[g.last] = g
		for i := g.first; i < g.last; i++ {
			if a := evs[i].Artifact; a != nil && a.Artifact.ID == evs[g.first].Artifact.Artifact.ID {
				member[i] = true
			}
		}
	}
	out = make([]protocol.Event, 0, len(evs)-merges)
	at = make([]int, 0, len(evs)-merges)
	for i := range evs {
		switch g := lastOf[i]; {
		case g != nil:
			out = append(out, protocol.Event{Artifact: mergeGroup(evs, g.first, g.last)})
		case member[i]:
			continue
		default:
			out = append(out, evs[i])
		}
		at = append(at, i)
	}
	return out, at
}

// mergeGroup builds the one update that stands for the updates of the
// artifact evs[first] opens, up to evs[last].
func mergeGroup(evs []protocol.Event, first, last int) *protocol.ArtifactUpdate {
	head := evs[first].Artifact
	id := head.Artifact.ID
	merged := *head
	merged.Artifact.Parts = nil
	merged.LastChunk = evs[last].Artifact.LastChunk
	var text strings.Builder
	textOpen := false
	flush := func() {
		if textOpen {
			merged.Artifact.Parts = append(merged.Artifact.Parts, protocol.Part{Kind: protocol.PartText, Text: text.String()})
			text.Reset()
			textOpen = false
		}
	}
	for i := first; i <= last; i++ {
		a := evs[i].Artifact
		if a == nil || a.Artifact.ID != id {
			continue
		}
		for j := range a.Artifact.Parts {
			p := &a.Artifact.Parts[j]
			if p.Kind == protocol.PartText && p.MediaType == "" && len(p.Metadata) == 0 {
				text.WriteString(p.Text)
				textOpen = true
				continue
			}
			flush()
			merged.Artifact.Parts = append(merged.Artifact.Parts, *p)
		}
	}
	flush()
	if merged.Artifact.Parts == nil {
		// A group of empty chunks still stands for an artifact, which has
		// at least one part on the wire.
		merged.Artifact.Parts = []protocol.Part{{Kind: protocol.PartText}}
	}
	return &merged
}

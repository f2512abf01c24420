package memory

import (
	"encoding/json"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// The store deep-copies every value on the way in and out so that a caller
// mutating a task it got (or gave) can never change what other readers see.
// nil stays nil and empty stays empty, so copies compare equal with
// reflect.DeepEqual.

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	out := make([]byte, len(b))
	copy(out, b)
	return out
}

func cloneRaw(b json.RawMessage) json.RawMessage { return json.RawMessage(cloneBytes(b)) }

func cloneStrings(s []string) []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s))
	copy(out, s)
	return out
}

func cloneParts(ps []protocol.Part) []protocol.Part {
	if ps == nil {
		return nil
	}
	out := make([]protocol.Part, len(ps))
	for i := range ps {
		out[i] = ps[i]
		out[i].Data = cloneRaw(ps[i].Data)
		out[i].Raw = cloneBytes(ps[i].Raw)
		out[i].Metadata = cloneRaw(ps[i].Metadata)
	}
	return out
}

func cloneMessageInto(dst, src *protocol.Message) {
	*dst = *src
	dst.Parts = cloneParts(src.Parts)
	dst.Metadata = cloneRaw(src.Metadata)
	dst.Extensions = cloneStrings(src.Extensions)
	dst.ReferenceTaskIDs = cloneStrings(src.ReferenceTaskIDs)
}

func cloneMessage(m *protocol.Message) *protocol.Message {
	if m == nil {
		return nil
	}
	out := new(protocol.Message)
	cloneMessageInto(out, m)
	return out
}

func cloneStatus(s protocol.TaskStatus) protocol.TaskStatus {
	s.Message = cloneMessage(s.Message)
	return s
}

func cloneArtifactInto(dst, src *protocol.Artifact) {
	*dst = *src
	dst.Parts = cloneParts(src.Parts)
	dst.Metadata = cloneRaw(src.Metadata)
	dst.Extensions = cloneStrings(src.Extensions)
}

func cloneTask(t *protocol.Task) *protocol.Task {
	if t == nil {
		return nil
	}
	out := &protocol.Task{
		ID:        t.ID,
		ContextID: t.ContextID,
		Status:    cloneStatus(t.Status),
		Metadata:  cloneRaw(t.Metadata),
	}
	if t.Artifacts != nil {
		out.Artifacts = make([]protocol.Artifact, len(t.Artifacts))
		for i := range t.Artifacts {
			cloneArtifactInto(&out.Artifacts[i], &t.Artifacts[i])
		}
	}
	if t.History != nil {
		out.History = make([]protocol.Message, len(t.History))
		for i := range t.History {
			cloneMessageInto(&out.History[i], &t.History[i])
		}
	}
	return out
}

func cloneEvent(e protocol.Event) protocol.Event {
	out := protocol.Event{
		Task:    cloneTask(e.Task),
		Message: cloneMessage(e.Message),
	}
	if e.Status != nil {
		s := *e.Status
		s.Status = cloneStatus(s.Status)
		s.Metadata = cloneRaw(s.Metadata)
		out.Status = &s
	}
	if e.Artifact != nil {
		a := *e.Artifact
		cloneArtifactInto(&a.Artifact, &e.Artifact.Artifact)
		a.Metadata = cloneRaw(a.Metadata)
		out.Artifact = &a
	}
	return out
}

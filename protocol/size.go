package protocol

// The sizes below count the bytes of content a value carries: its
// strings, raw JSON and file bytes. They are what byte limits (a task's
// output, the history re-sent to an agent, a store's budget) measure, the
// same way for caller input and agent output; a store adds its own
// overhead per value. They walk parts and messages, never bytes, so they
// cost O(number of parts).

// Size is the content bytes of p.
func (p *Part) Size() int {
	return len(p.Text) + len(p.Data) + len(p.URL) + len(p.Raw) + len(p.Filename) + len(p.MediaType) + len(p.Metadata)
}

// PartsSize is the content bytes of ps.
func PartsSize(ps []Part) int {
	n := 0
	for i := range ps {
		n += ps[i].Size()
	}
	return n
}

// Size is the content bytes of m.
func (m *Message) Size() int {
	if m == nil {
		return 0
	}
	n := len(m.ID) + len(m.ContextID) + len(m.TaskID) + len(m.Metadata) + PartsSize(m.Parts)
	return n + stringsSize(m.Extensions) + stringsSize(m.ReferenceTaskIDs)
}

// MessagesSize is the content bytes of ms.
func MessagesSize(ms []Message) int {
	n := 0
	for i := range ms {
		n += ms[i].Size()
	}
	return n
}

// Size is the content bytes of a.
func (a *Artifact) Size() int {
	return len(a.ID) + len(a.Name) + len(a.Description) + len(a.Metadata) + PartsSize(a.Parts) + stringsSize(a.Extensions)
}

// ArtifactsSize is the content bytes of as.
func ArtifactsSize(as []Artifact) int {
	n := 0
	for i := range as {
		n += as[i].Size()
	}
	return n
}

// Size is the content bytes of t.
func (t *Task) Size() int {
	if t == nil {
		return 0
	}
	return len(t.ID) + len(t.ContextID) + len(t.Metadata) + len(t.Upstream) + t.Status.Message.Size() +
		ArtifactsSize(t.Artifacts) + MessagesSize(t.History)
}

// Size is the content bytes of ev.
func (ev *Event) Size() int {
	n := ev.Task.Size() + ev.Message.Size()
	if s := ev.Status; s != nil {
		n += len(s.TaskID) + len(s.ContextID) + len(s.Metadata) + s.Status.Message.Size()
	}
	if a := ev.Artifact; a != nil {
		n += len(a.TaskID) + len(a.ContextID) + len(a.Metadata) + a.Artifact.Size()
	}
	return n
}

func stringsSize(ss []string) int {
	n := 0
	for _, s := range ss {
		n += len(s)
	}
	return n
}

package handler

import "github.com/caddy-a2a/caddy-a2a/protocol"

// cloneTask copies what a run mutates in place (history, artifacts and
// their parts) so that a request can encode its snapshot while the run
// goes on with its own. Parts' byte fields are never mutated and are
// shared.
func cloneTask(t *protocol.Task) *protocol.Task {
	c := *t
	c.History = append([]protocol.Message(nil), t.History...)
	if t.Artifacts != nil {
		c.Artifacts = make([]protocol.Artifact, len(t.Artifacts))
		for i, a := range t.Artifacts {
			a.Parts = append([]protocol.Part(nil), a.Parts...)
			c.Artifacts[i] = a
		}
	}
	return &c
}

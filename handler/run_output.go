package handler

import (
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// The run is the output of a task's turn: what the agent's events say
// (interpret.go) becomes the task's artifacts, status and messages here,
// held to the run's limits.

func (ru *run) mainText(text string, whole bool) error {
	return ru.appendMain([]protocol.Part{{Kind: protocol.PartText, Text: text}}, true, whole)
}

func (ru *run) mainParts(parts []protocol.Part, whole bool) error {
	return ru.appendMain(parts, false, whole)
}

func (ru *run) artifact(a *protocol.Artifact) error { return ru.addArtifact(a) }

// progress sets the task working with the agent's note as its status
// message.
func (ru *run) progress(parts []protocol.Part) error {
	msg := ru.agentMessage(parts)
	return ru.commit(func(t *protocol.Task) []protocol.Event {
		return []protocol.Event{ru.setStatus(t, protocol.StateWorking, msg)}
	})
}

func (ru *run) end(state protocol.TaskState, parts []protocol.Part, detail string) error {
	ru.finish(state, parts, detail)
	return nil
}

// overLimit ends the run failed with a status message that names the
// limit: the event is not written, and what the task held before stays.
func (ru *run) overLimit(limit string, max int) error {
	ru.logger().Warn("a2a: agent output over a limit; the task is failed", zap.String("limit", limit), zap.Int("max", max))
	ru.finish(protocol.StateFailed, []protocol.Part{{Kind: protocol.PartText, Text: overLimitText(limit, max)}}, "")
	return nil
}

// artifacts counts the task's artifacts, every turn's: the main artifact
// is added by the run's first main output.
func (ru *run) artifacts(main bool) (int, bool) {
	n := len(ru.task.Artifacts)
	if main && ru.mainAt >= 0 {
		return n, false
	}
	return n + 1, true
}

// outputSize is the content size of t's output: its artifacts and the
// agent's messages it keeps.
func outputSize(t *protocol.Task) int {
	n := protocol.ArtifactsSize(t.Artifacts)
	for i := range t.History {
		if t.History[i].Role == protocol.RoleAgent {
			n += t.History[i].Size()
		}
	}
	return n
}

// appendMain adds parts to the run's main artifact. In the snapshot,
// consecutive text chunks merge into one text part so a task read later
// holds the answer, not thousands of fragments; the event carries only
// the chunk. whole says the parts are the entire artifact: the update is
// then also its last chunk, and no closer follows.
func (ru *run) appendMain(parts []protocol.Part, mergeText, whole bool) error {
	// The merged text grows in ru.text, outside commit (which may run its
	// mutation again after a conflict): appending a chunk costs the chunk,
	// where `Text += chunk` copied the whole answer so far on every chunk.
	// A Builder never rewrites bytes it handed out, so earlier snapshots
	// keep their text.
	var merged string
	extend := mergeText && ru.textOpen
	if mergeText {
		if !ru.textOpen {
			ru.text.Reset()
		}
		for _, p := range parts {
			ru.text.WriteString(p.Text)
		}
		merged = ru.text.String()
	}
	// Read before commit, which may hold the change back and apply it
	// again after the chunks that follow it were counted.
	appending := ru.chunks > 0
	err := ru.commit(func(t *protocol.Task) []protocol.Event {
		// t's slices are the stored snapshot's (commit): the artifact
		// list is copied before an artifact in it changes, and a merged
		// part is changed in a copied part list. Appending parts past the
		// end of a stored list is safe without a copy: readers of a
		// snapshot never look past its length, and only this run appends
		// to its main artifact.
		i := ru.mainAt
		if i < 0 || i >= len(t.Artifacts) || t.Artifacts[i].ID != ru.mainID {
			i = artifactIndex(t, ru.mainID)
		}
		if i < 0 {
			// Appended in place, as addArtifact does.
			t.Artifacts = append(t.Artifacts, protocol.Artifact{ID: ru.mainID})
			i = len(t.Artifacts) - 1
		} else {
			// The artifact changes: a copy of the list, so the stored
			// snapshots sharing it keep theirs. This costs the number of
			// artifacts per chunk, which MaxArtifacts bounds.
			t.Artifacts = slices.Clone(t.Artifacts)
		}
		ru.mainAt = i
		a := &t.Artifacts[i]
		switch n := len(a.Parts); {
		case !mergeText:
			a.Parts = append(a.Parts, parts...)
		case extend && n > 0 && plainText(&a.Parts[n-1]):
			a.Parts = slices.Clone(a.Parts)
			a.Parts[n-1].Text = merged
		default:
			a.Parts = append(a.Parts, protocol.Part{Kind: protocol.PartText, Text: merged})
		}
		return []protocol.Event{{Artifact: &protocol.ArtifactUpdate{
			TaskID:    t.ID,
			ContextID: t.ContextID,
			Artifact:  protocol.Artifact{ID: ru.mainID, Parts: append([]protocol.Part(nil), parts...)},
			Append:    appending,
			LastChunk: whole,
		}}}
	})
	if err == nil {
		ru.chunks++
		ru.mainClosed = ru.mainClosed || whole
		ru.textOpen = mergeText
		if last := &parts[len(parts)-1]; !mergeText && plainText(last) {
			// Text that follows extends this plain text part, as before.
			ru.text.Reset()
			ru.text.WriteString(last.Text)
			ru.textOpen = true
		}
	}
	return err
}

// addArtifact records a separate, complete artifact. Its id is always
// ours: ids must be unique within the task, which an agent cannot know.
func (ru *run) addArtifact(src *protocol.Artifact) error {
	a := *src
	a.ID = newID()
	a.Parts = append([]protocol.Part(nil), src.Parts...)
	return ru.commit(func(t *protocol.Task) []protocol.Event {
		// Appended in place, not to a copy: readers of earlier snapshots
		// never look past their length, and only this run appends to the
		// list while it runs, so an agent that sends thousands of
		// artifacts costs linear time, not a copy of the list per artifact.
		t.Artifacts = append(t.Artifacts, a)
		return []protocol.Event{{Artifact: &protocol.ArtifactUpdate{
			TaskID:    t.ID,
			ContextID: t.ContextID,
			Artifact:  a,
			LastChunk: true,
		}}}
	})
}

func (ru *run) hasChunk(id string) bool {
	_, ok := ru.chunkIDs[id]
	return ok
}

// chunk records a piece of the agent's artifact src.ID in the task's
// artifact for that id (a new one on its first piece; appendTo false on
// a later one replaces it, as an A2A artifact update without append
// does). The agent's id is not the task's: ids must be unique within the
// task across its turns, which an agent cannot know.
func (ru *run) chunk(src *protocol.Artifact, appendTo, last bool) error {
	id, known := ru.chunkIDs[src.ID]
	if !known {
		if ru.chunkIDs == nil {
			ru.chunkIDs = map[string]string{}
		}
		id = newID()
	}
	a := *src
	a.ID = id
	a.Parts = append([]protocol.Part(nil), src.Parts...)
	err := ru.commit(func(t *protocol.Task) []protocol.Event {
		i := artifactIndex(t, id)
		switch {
		case i < 0:
			// Appended in place, as addArtifact does.
			t.Artifacts = append(t.Artifacts, a)
		case appendTo:
			t.Artifacts = slices.Clone(t.Artifacts)
			t.Artifacts[i].Parts = append(slices.Clip(t.Artifacts[i].Parts), a.Parts...)
		default:
			t.Artifacts = slices.Clone(t.Artifacts)
			t.Artifacts[i] = a
		}
		return []protocol.Event{{Artifact: &protocol.ArtifactUpdate{
			TaskID:    t.ID,
			ContextID: t.ContextID,
			Artifact:  a,
			Append:    known && appendTo,
			LastChunk: last,
		}}}
	})
	if err == nil && !known {
		ru.chunkIDs[src.ID] = id
	}
	return err
}

// ref records the agent's reference for the task. It is written with the
// run's next write, which every run makes (its outcome at the latest):
// no write of its own, and no caller sees it.
func (ru *run) ref(ref string) error {
	ru.upstreamRef = ref
	return nil
}

// setStatus moves t to state and returns the status event. Final is set
// for the states that end a 0.3 stream: terminal and input-required, not
// auth-required (streams stay open while credentials arrive out of band).
func (ru *run) setStatus(t *protocol.Task, state protocol.TaskState, msg *protocol.Message) protocol.Event {
	t.Status = protocol.TaskStatus{State: state, Message: msg, Timestamp: time.Now().UTC()}
	return protocol.Event{Status: &protocol.StatusUpdate{
		TaskID:    t.ID,
		ContextID: t.ContextID,
		Status:    t.Status,
		Final:     closesStream(state),
	}}
}

// agentMessage wraps parts as an agent message of this task (nil if none).
func (ru *run) agentMessage(parts []protocol.Part) *protocol.Message {
	if len(parts) == 0 {
		return nil
	}
	return &protocol.Message{
		ID:        newID(),
		ContextID: ru.task.ContextID,
		TaskID:    ru.task.ID,
		Role:      protocol.RoleAgent,
		Parts:     append([]protocol.Part(nil), parts...),
	}
}

func artifactIndex(t *protocol.Task, id string) int {
	for i := range t.Artifacts {
		if t.Artifacts[i].ID == id {
			return i
		}
	}
	return -1
}

// plainText reports whether p is a text part that a following text chunk
// may extend without changing its meaning.
func plainText(p *protocol.Part) bool {
	return p.Kind == protocol.PartText && p.MediaType == "" && len(p.Metadata) == 0
}

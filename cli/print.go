package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// stateName is a task state as the spec's prose and 0.3 wire spell it
// ("input-required"), for a person.
func stateName(s a2a.TaskState) string {
	if s == a2a.TaskStateUnspecified {
		return "unspecified"
	}
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(string(s), "TASK_STATE_")), "_", "-")
}

// parseState reads --state: either spelling ("input-required",
// "TASK_STATE_INPUT_REQUIRED"), any case.
func parseState(s string) (a2a.TaskState, error) {
	up := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), "-", "_"))
	up = "TASK_STATE_" + strings.TrimPrefix(up, "TASK_STATE_")
	switch st := a2a.TaskState(up); st {
	case a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired,
		a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateCanceled, a2a.TaskStateRejected:
		return st, nil
	}
	return "", fmt.Errorf("--state %q: want submitted, working, input-required, auth-required, completed, failed, canceled or rejected", s)
}

// partsText is what a person reads of a message's or an artifact's
// parts: text as it is, adjacent text parts joined (an answer streamed
// a token at a time comes back as one part per token), data as compact
// JSON and a file by its name, type and size or URL, each on its own
// line.
func partsText(parts a2a.ContentParts) string {
	var b strings.Builder
	wasText := false
	for _, p := range parts {
		s, isText, ok := partText(p)
		if !ok {
			continue
		}
		if b.Len() > 0 && !(isText && wasText) {
			b.WriteByte('\n')
		}
		b.WriteString(s)
		wasText = isText
	}
	return b.String()
}

// partText is one part as partsText shows it, whether it is text, and
// whether it is shown at all.
func partText(p *a2a.Part) (s string, isText, ok bool) {
	if p == nil {
		return "", false, false
	}
	switch c := p.Content.(type) {
	case a2a.Text:
		return string(c), true, true
	case a2a.Data:
		j, _ := json.Marshal(c.Value)
		return string(j), false, true
	case a2a.Raw:
		return fmt.Sprintf("[file %s (%s, %d bytes)]", orDash(p.Filename), orDash(p.MediaType), len(c)), false, true
	case a2a.URL:
		return fmt.Sprintf("[file %s (%s) at %s]", orDash(p.Filename), orDash(p.MediaType), sanitize(string(c), false)), false, true
	}
	return "", false, false
}

// orDash is a one-line field of a part (a file's name or type): it
// ends up inside multi-line text, where a newline would start a line of
// the server's choosing.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return sanitize(s, false)
}

// messageText is a status message's text, or "".
func messageText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	return partsText(m.Parts)
}

// printEvent is one streamed event on a line (or a few, for multi-line
// text): the task, each status change, each artifact chunk but an
// empty one (the last chunk often only says it is the last), a
// message.
func printEvent(o *Options, ev a2a.Event) {
	switch e := ev.(type) {
	case *a2a.Task:
		o.printf("task %s (context %s): %s%s\n", e.ID, e.ContextID, stateName(e.Status.State), suffix(messageText(e.Status.Message)))
		for _, a := range e.Artifacts {
			printChunk(o, a)
		}
	case *a2a.TaskStatusUpdateEvent:
		o.printf("status: %s%s\n", stateName(e.Status.State), suffix(messageText(e.Status.Message)))
	case *a2a.TaskArtifactUpdateEvent:
		printChunk(o, e.Artifact)
	case *a2a.Message:
		o.printf("agent: %s\n", text(partsText(e.Parts)))
	}
}

func printChunk(o *Options, a *a2a.Artifact) {
	if a == nil {
		return
	}
	if s := partsText(a.Parts); s != "" {
		o.printf("artifact %s: %s\n", artifactName(a), text(s))
	}
}

func artifactName(a *a2a.Artifact) string {
	if a == nil {
		return "-"
	}
	if a.Name != "" {
		return a.Name
	}
	return string(a.ID)
}

// suffix is ": " and a status message's text (multi-line agent text),
// or nothing.
func suffix(s string) text {
	if s == "" {
		return ""
	}
	return text(": " + s)
}

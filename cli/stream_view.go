package cli

import (
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// streamView prints a stream for a person to read as it arrives: the
// artifacts' text run on, chunk after chunk (a model's answer comes a
// token per event: a line each could not be read), and the task, each
// status change and a message each on a line of its own. A second
// artifact is headed by its name; a file or data part starts a line.
type streamView struct {
	o        *Options
	artifact a2a.ArtifactID // the artifact whose text is being printed
	named    bool           // an artifact was printed: the next one is headed
	midLine  bool           // the text printed last did not end its line
	cr       bool           // the last chunk ended in \r, held back in case a \n follows
}

// event prints one event of the stream.
func (v *streamView) event(ev a2a.Event) {
	switch e := ev.(type) {
	case *a2a.Task:
		v.line("task %s (context %s): %s%s\n", e.ID, e.ContextID, stateName(e.Status.State), suffix(messageText(e.Status.Message)))
		for _, a := range e.Artifacts {
			v.chunk(a)
		}
	case *a2a.TaskStatusUpdateEvent:
		v.line("status: %s%s\n", stateName(e.Status.State), suffix(messageText(e.Status.Message)))
	case *a2a.TaskArtifactUpdateEvent:
		v.chunk(e.Artifact)
	case *a2a.Message:
		v.line("agent: %s\n", text(partsText(e.Parts)))
	}
}

// end finishes the line the text left open, when the stream ends.
func (v *streamView) end() { v.endLine() }

// line prints a line of its own: after the text's, never within it.
func (v *streamView) line(format string, args ...any) {
	v.endLine()
	v.o.printf(format, args...)
}

func (v *streamView) endLine() {
	if v.cr {
		v.o.printf("%s", text("\r"))
		v.cr, v.midLine = false, true
	}
	if v.midLine {
		v.o.printf("\n")
		v.midLine = false
	}
}

// chunk prints an artifact's chunk where its text left off.
func (v *streamView) chunk(a *a2a.Artifact) {
	if a == nil || partsText(a.Parts) == "" {
		return
	}
	if a.ID != v.artifact {
		if v.named {
			v.line("[%s]\n", artifactName(a))
		}
		v.artifact, v.named = a.ID, true
	}
	for _, p := range a.Parts {
		s, isText, ok := partText(p)
		if !ok {
			continue
		}
		if !isText {
			v.line("%s\n", text(s))
			continue
		}
		if s == "" {
			continue
		}
		// A CRLF split between two chunks is still one line end.
		if v.cr {
			s, v.cr = "\r"+s, false
		}
		if strings.HasSuffix(s, "\r") {
			s, v.cr = s[:len(s)-1], true
		}
		v.o.printf("%s", text(s))
		if s != "" {
			v.midLine = !strings.HasSuffix(s, "\n")
		}
	}
}

package interop

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// event is a stream event reduced to what the tests assert, so one checker
// serves the three Go clients, whose event types differ.
type event struct {
	Kind       string // task | message | status | artifact
	TaskID     string
	ContextID  string
	State      string // 0.3 spelling: working, completed, input-required, …
	Text       string // concatenated text parts of the artifact or status message
	ArtifactID string
	Append     bool
	Final      bool // 0.3 only
}

func (e event) String() string {
	switch e.Kind {
	case "artifact":
		return fmt.Sprintf("artifact(%s append=%v %q)", e.ArtifactID, e.Append, e.Text)
	case "status":
		return fmt.Sprintf("status(%s final=%v %q)", e.State, e.Final, e.Text)
	case "task":
		return fmt.Sprintf("task(%s artifacts=%q)", e.State, e.Text)
	default:
		return fmt.Sprintf("%s(%s)", e.Kind, e.State)
	}
}

// normState maps v1.0 enum names (TASK_STATE_INPUT_REQUIRED) and 0.3 names
// (input-required) to the 0.3 spelling, so expectations are written once.
func normState(s string) string {
	s = strings.TrimPrefix(s, "TASK_STATE_")
	return strings.ReplaceAll(strings.ToLower(s), "_", "-")
}

// streamWant says what a task stream must look like.
type streamWant struct {
	// firstStates are the states the leading Task event may carry.
	firstStates []string
	// text is the artifact text a client ends with: the leading Task's
	// artifacts followed by every artifact update's text, in order. A
	// subscribe may start from a snapshot that already holds some chunks, or
	// from an older one followed by the events after it; both must add up.
	text string
	// liveTail, if set, must end the updates' text: chunks the agent produced
	// only after the subscription started, so they cannot be in the snapshot.
	liveTail string
	// workingFirst requires a working status update before the first artifact.
	workingFirst bool
	// final is the state of the last status update.
	final string
	// legacy expects 0.3 semantics: the last status update has final=true.
	legacy bool
}

// checkStream asserts the order and content of a task stream: Task first, then
// status/artifact updates of that same task, artifact chunks appended to one
// artifact, and the final status last (a trailing Task snapshot in that same
// state is allowed, as the spec permits one before closing).
func checkStream(t *testing.T, evs []event, want streamWant) {
	t.Helper()
	t.Logf("stream: %v", evs)
	if len(evs) < 2 {
		t.Fatalf("stream had %d event(s), want a Task and at least a final status: %v", len(evs), evs)
	}
	first := evs[0]
	if first.Kind != "task" {
		t.Fatalf("first stream event is %s, want the Task", first)
	}
	if first.TaskID == "" || first.ContextID == "" {
		t.Fatalf("first Task has taskId %q contextId %q, want both set", first.TaskID, first.ContextID)
	}
	if !slices.Contains(want.firstStates, first.State) {
		t.Errorf("first Task state %q, want one of %v", first.State, want.firstStates)
	}
	body := evs[1:]
	if last := body[len(body)-1]; last.Kind == "task" && len(body) >= 2 {
		if last.State != want.final {
			t.Errorf("trailing Task snapshot in state %q, want %q", last.State, want.final)
		}
		body = body[:len(body)-1]
	}
	last := body[len(body)-1]
	if last.Kind != "status" || last.State != want.final {
		t.Errorf("last update is %s, want status %q", last, want.final)
	}
	if want.legacy && !last.Final {
		t.Errorf("last 0.3 status update has final=false, want true")
	}

	var text strings.Builder
	text.WriteString(first.Text)
	// The first update creates the artifact unless the snapshot already has it.
	firstAppend := first.Text != ""
	var updates strings.Builder
	var artifactID string
	sawWorking, sawArtifact := false, false
	for i, e := range body {
		if e.TaskID != first.TaskID || e.ContextID != first.ContextID {
			t.Errorf("event %d %s belongs to task %q context %q, want %q %q",
				i+1, e, e.TaskID, e.ContextID, first.TaskID, first.ContextID)
		}
		switch e.Kind {
		case "status":
			if i < len(body)-1 {
				if e.State != "working" && e.State != "submitted" {
					t.Errorf("event %d is %s before the end of the stream", i+1, e)
				}
				if want.legacy && e.Final {
					t.Errorf("event %d %s has final=true but is not the last", i+1, e)
				}
			}
			if e.State == "working" && !sawArtifact {
				sawWorking = true
			}
		case "artifact":
			if !sawArtifact {
				if e.Append != firstAppend {
					t.Errorf("first artifact update append=%v, want %v (leading Task has artifact text %q)", e.Append, firstAppend, first.Text)
				}
				artifactID = e.ArtifactID
			} else {
				if !e.Append {
					t.Errorf("artifact update %d has append=false, want true (chunks go to one artifact)", i+1)
				}
				if e.ArtifactID != artifactID {
					t.Errorf("artifact update %d has artifactId %q, want %q", i+1, e.ArtifactID, artifactID)
				}
			}
			sawArtifact = true
			text.WriteString(e.Text)
			updates.WriteString(e.Text)
		default:
			t.Errorf("event %d is %s: only status and artifact updates may follow the Task", i+1, e)
		}
	}
	if want.workingFirst && !sawWorking {
		t.Errorf("no working status update before the first artifact update")
	}
	if got := text.String(); got != want.text {
		t.Errorf("leading Task %q + artifact updates %q = %q, want %q", first.Text, updates.String(), got, want.text)
	}
	if !strings.HasSuffix(updates.String(), want.liveTail) {
		t.Errorf("artifact updates carried %q, want them to end with the live chunk %q", updates.String(), want.liveTail)
	}
}

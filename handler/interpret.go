package handler

import (
	"strconv"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// The agent's events are read in one place, whatever the send answers
// with: a task's run writes what they mean to the store (run), a message
// reply gathers it into one Message (replyBuilder). Both are an output;
// the interpreter decides what each event means and holds the output to
// the run limits, so the two reply modes cannot drift apart.

// output is what an agent's events become.
type output interface {
	// mainText adds a text chunk to the main output, merged with the text
	// before it; whole: it is the entire main output (a plain answer).
	mainText(text string, whole bool) error
	// mainParts adds parts to the main output; whole as for mainText.
	mainParts(parts []protocol.Part, whole bool) error
	// artifact adds a separate, complete artifact.
	artifact(a *protocol.Artifact) error
	// chunk adds a piece of the agent's own artifact a.ID (see
	// upstream.EventChunk); hasChunk reports whether that id has one yet.
	chunk(a *protocol.Artifact, appendTo, last bool) error
	hasChunk(id string) bool
	// ref records the task's upstream reference.
	ref(ref string) error
	// direct takes an answer marked as a direct message
	// (upstream.EventMessage) where it did not decide the turn (a run that
	// waits for it reads it before the output exists); done reports that
	// it ended the output.
	direct() (done bool, err error)
	// progress records a status note while the agent works.
	progress(parts []protocol.Part) error
	// end records the agent's outcome: a terminal or interrupted state,
	// with the parts of its message. detail is log-only text the agent
	// gave with it.
	end(state protocol.TaskState, parts []protocol.Part, detail string) error
	// overLimit ends the output because the next event would take it over
	// limit (max); the event is not recorded.
	overLimit(limit string, max int) error
	// artifacts is how many artifacts the output holds once an event
	// adds to its main output (main) or adds a separate one (!main), and
	// whether that event adds one.
	artifacts(main bool) (n int, adds bool)
	// logger is where a dropped event is reported.
	logger() *zap.Logger
}

// interpreter holds one run's count of what its agent sent against the
// run limits.
type interpreter struct {
	limits *runLimits
	// output is the content size of the output so far (a task's earlier
	// turns included), events the events this run added.
	output, events int
}

// apply records one agent event on out; done reports that it ended the
// output (the agent's outcome, or a limit).
func (in *interpreter) apply(ev *upstream.Event, out output) (done bool, err error) {
	switch ev.Kind {
	case upstream.EventText:
		if ev.Text == "" {
			return false, nil
		}
		if limit, max := in.over(out, len(ev.Text), true, true); limit != "" {
			return true, out.overLimit(limit, max)
		}
		return false, out.mainText(ev.Text, ev.Whole)
	case upstream.EventParts:
		if len(ev.Parts) == 0 {
			return false, nil
		}
		if limit, max := in.over(out, protocol.PartsSize(ev.Parts), true, true); limit != "" {
			return true, out.overLimit(limit, max)
		}
		return false, out.mainParts(ev.Parts, ev.Whole)
	case upstream.EventArtifact:
		if ev.Artifact == nil || len(ev.Artifact.Parts) == 0 {
			out.logger().Warn("a2a: agent sent an artifact without parts; dropped")
			return false, nil
		}
		if limit, max := in.over(out, ev.Artifact.Size(), true, false); limit != "" {
			return true, out.overLimit(limit, max)
		}
		return false, out.artifact(ev.Artifact)
	case upstream.EventChunk:
		if ev.Artifact == nil || (len(ev.Artifact.Parts) == 0 && !ev.LastChunk) {
			out.logger().Warn("a2a: agent sent an artifact chunk without parts; dropped")
			return false, nil
		}
		if limit, max := in.over(out, ev.Artifact.Size(), !out.hasChunk(ev.Artifact.ID), false); limit != "" {
			return true, out.overLimit(limit, max)
		}
		return false, out.chunk(ev.Artifact, ev.Append, ev.LastChunk)
	case upstream.EventRef:
		// Not output: no limit counts it (the kind bounds it, from ids
		// that are bounded as a caller's are).
		return false, out.ref(ev.Ref)
	case upstream.EventMessage:
		// Not output: the marker says what the events after it are.
		return out.direct()
	case upstream.EventStatus:
		if limit, max := in.over(out, protocol.PartsSize(ev.Parts), false, false); limit != "" {
			return true, out.overLimit(limit, max)
		}
		if ev.State.Terminal() || ev.State.Interrupted() {
			return true, out.end(ev.State, ev.Parts, ev.Detail)
		}
		return false, out.progress(ev.Parts)
	}
	out.logger().Warn("a2a: unknown agent event kind; dropped", zap.Int("kind", int(ev.Kind)))
	return false, nil
}

// over counts an event of size content bytes (one that may add an
// artifact: its main output's if main, else a separate one) against the
// limits. Over one, it returns that limit and its value and counts
// nothing; "" otherwise.
func (in *interpreter) over(out output, size int, mayAdd, main bool) (limit string, max int) {
	l := in.limits
	switch {
	case in.events+1 > l.events:
		return "max_run_events", l.events
	case in.output+size > l.output:
		return "max_task_output", l.output
	}
	if mayAdd {
		if n, adds := out.artifacts(main); adds && n > l.artifacts {
			return "max_artifacts", l.artifacts
		}
	}
	in.events++
	in.output += size
	return "", 0
}

// overLimitText is the status message of a task stopped by a limit.
func overLimitText(limit string, max int) string {
	return "The agent's output went over a limit of this server (" + limit + " " + strconv.Itoa(max) + "); the task was stopped."
}

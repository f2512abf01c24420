// Package upstream is what every kind of agent behind an A2A endpoint has
// in common: an Agent turns one run request into a stream of agent events
// (the kind-neutral Event model), and Rules are what those events are held
// to before anything of them is relayed or stored. Each kind lives in a
// package of its own below this one (upstream/http: the agent contract the
// README describes, plain answers and NDJSON/SSE event streams).
package upstream

import (
	"context"
	"encoding/json"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// RunRequest is what the handler asks the agent to do: answer message in
// the task taskID.
type RunRequest struct {
	TaskID    string
	ContextID string
	// Message is the new user message.
	Message protocol.Message
	// History holds the earlier turns of this task, oldest first, without
	// Message itself.
	History []protocol.Message
	// User is the caller identity ("" when anonymous).
	User string
	// Metadata is the request metadata (send params metadata).
	Metadata json.RawMessage
	// Extensions are the activated extension URIs.
	Extensions []string
}

// EventKind tells what an agent event means.
type EventKind int

// The agent event kinds.
const (
	// EventText appends Text to the task's main artifact.
	EventText EventKind = iota + 1
	// EventParts appends Parts to the task's main artifact.
	EventParts
	// EventArtifact emits Artifact as a separate artifact.
	EventArtifact
	// EventStatus changes the task's state to State with an optional status
	// message made of Parts. A terminal or interrupted State ends the run.
	EventStatus
)

// Event is one thing the agent produced.
type Event struct {
	Kind     EventKind
	Text     string
	Parts    []protocol.Part
	Artifact *protocol.Artifact
	State    protocol.TaskState
	// Detail is text for the log only (e.g. an agent's {"error":…}); it
	// never reaches an A2A caller.
	Detail string
	// Whole marks an EventText or EventParts that is the entire main
	// artifact (a plain answer): no chunk follows, so it is streamed as one
	// artifact update with lastChunk set instead of a chunk and a closer.
	Whole bool
}

// Stream yields the events of one run.
type Stream interface {
	// Next returns the next event; io.EOF when the agent ended cleanly.
	// Any other error means the run broke (the task fails, the error is
	// logged, the caller sees a generic message).
	Next() (Event, error)
	// Close aborts the run if it is still going and releases it.
	Close() error
}

// Agent runs requests. Run's ctx bounds the whole run: cancelling it aborts
// the upstream call.
type Agent interface {
	Run(ctx context.Context, req *RunRequest) (Stream, error)
}

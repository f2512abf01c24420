// Package upstream is what every kind of agent behind an A2A endpoint has
// in common: an Agent turns one run request into a stream of agent events
// (the kind-neutral Event model), and Rules are what those events are held
// to before anything of them is relayed or stored. Each kind lives in a
// package of its own below this one (upstream/httpagent: the agent contract the
// docs/contract.md describes, plain answers and NDJSON/SSE event streams).
package upstream

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

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
	// Upstream is the reference this task's agent gave it on an earlier
	// turn (an EventRef): for an A2A agent, its own task and context ids.
	// "" on a task's first turn.
	Upstream string
	// Headers are added to the agent's requests for this run: the
	// upstream's header_up values that use request placeholders, resolved
	// with the caller's request that started the run.
	Headers http.Header
	// Context is the conversation of the context's earlier tasks, oldest
	// first: each task's history and then its artifacts as one agent
	// message. Filled only for a ContextReader, at most its number of
	// messages (the newest ones), and only the caller's own tasks.
	Context []protocol.Message
}

// ContextReader is an Agent that answers each task from the whole
// conversation of its context (a chat model, whose tasks each end with
// the answer): the handler fills RunRequest.Context for it.
type ContextReader interface {
	Agent
	// ContextMessages is how many of the context's earlier messages a run
	// is given at most (> 0).
	ContextMessages() int
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
	// EventChunk is a piece of one of the agent's own artifacts, named by
	// Artifact.ID (the agent's id, not the task's): Append extends the
	// earlier pieces of that id, LastChunk closes it. An A2A agent streams
	// its artifacts this way; the task gets one artifact of its own per
	// agent id.
	EventChunk
	// EventRef records Ref as the task's upstream reference, handed back
	// in RunRequest.Upstream on the task's next turn and to a Canceler. It
	// is not an A2A event: no caller sees it.
	EventRef
	// EventMessage marks the turn's answer as a direct message rather
	// than a task's output: the events after it are the message's
	// content, read as a message reply's are. It carries nothing and comes
	// first, since what the turn is must be known before anything of it is
	// stored. Only a turn that starts a task may be answered so; on one
	// that continues a task it is the agent's error.
	EventMessage
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
	// Append and LastChunk are an EventChunk's flags.
	Append, LastChunk bool
	// Ref is an EventRef's reference.
	Ref string
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

// Ready is a Stream that can tell whether its next event is already in
// hand. The handler writes what a run produces as it comes, but while the
// agent's next event is ready it holds a write back to join it with the
// next one: a plain answer's artifact and the completed status become one
// store write instead of two, with no added latency, since nothing is
// waited for. A Stream that cannot tell need not implement it.
type Ready interface {
	// Ready reports whether Next would return without waiting for the
	// agent. A wrong true delays the run's last write until Next returns.
	Ready() bool
}

// Agent runs requests. Run's ctx bounds the whole run: cancelling it aborts
// the upstream call.
type Agent interface {
	Run(ctx context.Context, req *RunRequest) (Stream, error)
}

// Canceler is an Agent whose tasks outlive a run: an A2A agent keeps a
// task that asks for input open between turns, so canceling it means
// telling the agent. The handler calls Cancel for a task that is waiting
// for input when its caller cancels it (a running task's run is aborted
// through its context, and the kind tells the agent then).
type Canceler interface {
	Cancel(ctx context.Context, req *CancelRequest) error
}

// CancelRequest names the task to cancel at the agent.
type CancelRequest struct {
	TaskID string
	// Upstream is the task's reference (see RunRequest.Upstream).
	Upstream string
	// User is the caller identity.
	User string
	// Headers are as RunRequest's, resolved with the cancel's request.
	Headers http.Header
}

// Refuser is an Agent that can refuse a run outright, before any output,
// with an A2A error its caller should get as the answer to the send (an
// A2A agent's invalid params, say). A streaming send to it waits for the
// run's first event before the stream opens, so that a refusal is the
// stream's error rather than a task that failed.
type Refuser interface {
	Agent
	// Refuses reports whether this agent's runs may end in a *Refusal.
	Refuses() bool
}

// Refusal is the error a run ends with when the agent refused it with one
// of the A2A errors that reach the caller (PassesThrough). The handler
// answers the caller with that code and its own message; Detail, the
// agent's message, is for the log only.
type Refusal struct {
	Code   int
	Detail string
}

func (r *Refusal) Error() string {
	return "upstream: agent refused the request with A2A error " + strconv.Itoa(r.Code) + ": " + r.Detail
}

// PassesThrough reports whether an agent's A2A error code reaches the
// caller as itself: the task and parameter errors, which are about what
// the caller asked. Version, push and extended-card errors are the
// module's own concern (it negotiates versions and owns push and the
// card), and anything else is the generic failure.
func PassesThrough(code int) bool {
	switch code {
	case protocol.CodeTaskNotFound, protocol.CodeTaskNotCancelable, protocol.CodeUnsupportedOperation,
		protocol.CodeContentTypeNotSupported, protocol.CodeInvalidAgentResponse, protocol.CodeInvalidParams:
		return true
	}
	return false
}

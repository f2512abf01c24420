// Package protocol is the A2A wire layer: a neutral model of tasks, messages,
// parts and events that both protocol versions map onto, one codec per wire
// version (0.3 and 1.0), the JSON-RPC 2.0 envelope, SSE framing and Agent Card
// rendering. Each codec also has a client side (request params out, results
// in; ParseCard and DecodeResponse beside them) for calling an A2A agent,
// which holds the agent's output to the limits a caller's input meets. It
// never imports Caddy; everything above it works on the neutral model only,
// so a behaviour is written once and rendered twice.
package protocol

import (
	"encoding/json"
	"time"
)

// TaskState is the lifecycle state of a task. The numeric values follow the
// v1.0 proto enum so that 1.0's integer form decodes without a table.
type TaskState int

// The task states. StateUnspecified is the zero value and never stored.
const (
	StateUnspecified   TaskState = 0
	StateSubmitted     TaskState = 1
	StateWorking       TaskState = 2
	StateCompleted     TaskState = 3
	StateFailed        TaskState = 4
	StateCanceled      TaskState = 5
	StateInputRequired TaskState = 6
	StateRejected      TaskState = 7
	StateAuthRequired  TaskState = 8
)

// stateNames is the one table of the states' names, indexed by version
// (V03, V10) and value: the 0.3 spelling is also the agent contract's and
// the logs' (String, ParseTaskState), the 1.0 one is its proto enum name.
var stateNames = [V10 + 1][StateAuthRequired + 1]string{
	V03: {
		StateUnspecified:   "unknown",
		StateSubmitted:     "submitted",
		StateWorking:       "working",
		StateCompleted:     "completed",
		StateFailed:        "failed",
		StateCanceled:      "canceled",
		StateInputRequired: "input-required",
		StateRejected:      "rejected",
		StateAuthRequired:  "auth-required",
	},
	V10: {
		StateUnspecified:   "TASK_STATE_UNSPECIFIED",
		StateSubmitted:     "TASK_STATE_SUBMITTED",
		StateWorking:       "TASK_STATE_WORKING",
		StateCompleted:     "TASK_STATE_COMPLETED",
		StateFailed:        "TASK_STATE_FAILED",
		StateCanceled:      "TASK_STATE_CANCELED",
		StateInputRequired: "TASK_STATE_INPUT_REQUIRED",
		StateRejected:      "TASK_STATE_REJECTED",
		StateAuthRequired:  "TASK_STATE_AUTH_REQUIRED",
	},
}

// String is s's 0.3 spelling ("input-required"), the one logs and the
// agent contract use; "unknown" for a value out of range.
func (s TaskState) String() string {
	if s < 0 || s > StateAuthRequired {
		s = StateUnspecified
	}
	return stateNames[V03][s]
}

// ParseTaskState reads a state's 0.3 spelling, as String writes it.
func ParseTaskState(name string) (TaskState, bool) {
	for s, n := range stateNames[V03] {
		if n == name && TaskState(s) != StateUnspecified {
			return TaskState(s), true
		}
	}
	return StateUnspecified, false
}

// Terminal reports whether no further transition can leave s.
func (s TaskState) Terminal() bool {
	switch s {
	case StateCompleted, StateFailed, StateCanceled, StateRejected:
		return true
	}
	return false
}

// Interrupted reports whether s waits for the client (input or auth).
func (s TaskState) Interrupted() bool {
	return s == StateInputRequired || s == StateAuthRequired
}

// Role says who wrote a message.
type Role int

// The message roles; values follow the v1.0 proto enum.
const (
	RoleUnspecified Role = 0
	RoleUser        Role = 1
	RoleAgent       Role = 2
)

// PartKind tells which member of a Part is set.
type PartKind int

// The part kinds. A file part carries either URL or Raw bytes.
const (
	PartText PartKind = iota + 1
	PartData
	PartFile
)

// Part is one piece of content of a message or artifact.
type Part struct {
	Kind PartKind
	// Text is the content of a text part.
	Text string
	// Data is the JSON value of a data part (any JSON value; 0.3 wraps
	// non-objects when it encodes).
	Data json.RawMessage
	// URL is the location of a file part given by reference. It is passed
	// through and never fetched.
	URL string
	// Raw holds the decoded bytes of a file part given inline.
	Raw []byte
	// Filename is the optional name of a file part.
	Filename string
	// MediaType is the optional media type of the part (0.3 calls it mimeType).
	MediaType string
	// Metadata is an optional JSON object.
	Metadata json.RawMessage
}

// Message is one turn of a conversation.
type Message struct {
	ID               string
	ContextID        string
	TaskID           string
	Role             Role
	Parts            []Part
	Metadata         json.RawMessage
	Extensions       []string
	ReferenceTaskIDs []string
}

// TaskStatus is a task's current state with an optional status message.
type TaskStatus struct {
	State     TaskState
	Message   *Message
	Timestamp time.Time
}

// Artifact is an output of a task.
type Artifact struct {
	ID          string
	Name        string
	Description string
	Parts       []Part
	Metadata    json.RawMessage
	Extensions  []string
}

// Task is the unit of work the server tracks.
type Task struct {
	ID        string
	ContextID string
	Status    TaskStatus
	Artifacts []Artifact
	History   []Message
	Metadata  json.RawMessage
	// Upstream is the task's reference at the agent behind the module (an
	// A2A agent's own task and context ids), kept with the task so any
	// turn, on any replica, can find it again. It is never on the wire.
	Upstream string
}

// StatusUpdate is a streamed change of a task's status.
type StatusUpdate struct {
	TaskID    string
	ContextID string
	Status    TaskStatus
	// Final marks the last event of a stream. Only 0.3 puts it on the wire;
	// 1.0 signals the end by closing the stream.
	Final    bool
	Metadata json.RawMessage
}

// ArtifactUpdate is a streamed artifact, whole or as a chunk.
type ArtifactUpdate struct {
	TaskID    string
	ContextID string
	Artifact  Artifact
	// Append means the parts extend the earlier artifact with the same ID.
	Append bool
	// LastChunk marks the final chunk of the artifact.
	LastChunk bool
	Metadata  json.RawMessage
}

// Event is one item of a task's event log and of a stream: exactly one
// member is set.
type Event struct {
	Task     *Task
	Message  *Message
	Status   *StatusUpdate
	Artifact *ArtifactUpdate
}

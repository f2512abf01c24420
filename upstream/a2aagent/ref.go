package a2aagent

import (
	"encoding/json"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// ref is what the module keeps of an agent's task between turns (the
// task's upstream.RunRequest.Upstream): the agent's own task and context
// ids, and how many of the agent task's artifacts the module's task
// already holds, so that a later turn's answer (a Task holding every
// turn's artifacts) adds only the new ones. A turn that left the task
// interrupted also keeps that state and its status message's id: the
// next turn tells by them an agent's snapshot of the task as it was left
// (restates) from its answer.
type ref struct {
	Task      string             `json:"t"`
	Context   string             `json:"c,omitempty"`
	Artifacts int                `json:"n,omitempty"`
	State     protocol.TaskState `json:"s,omitempty"`
	Message   string             `json:"m,omitempty"`
}

// parseRef reads a reference written by encode; "" or anything else is
// no reference (a first turn).
func parseRef(s string) ref {
	var r ref
	if s != "" && json.Unmarshal([]byte(s), &r) != nil {
		return ref{}
	}
	return r
}

func (r ref) encode() string {
	b, _ := json.Marshal(r) // strings and an int: cannot fail
	return string(b)
}

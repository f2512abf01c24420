package a2aagent

import (
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// restates reports whether t, the first event of a continued turn, only
// restates the agent's task as the last turn left it: the same task,
// still in the interrupted state it was left in, no artifact the earlier
// turns did not bring, and no status message but the one it was left
// with. @a2a-js/sdk requires an executor to publish a Task first on every
// execution, and one written as its docs say publishes the stored task,
// so a follow-up's stream opens with the old question before the agent
// has read the answer; taken as the outcome, it would settle the turn
// with that question and lose what follows. The run reads on instead:
// the stream's next events, or, if it ends there, the task itself.
//
// A reference written before the state was kept in it (State 0) names
// neither state nor message: any interrupted state restates it. Reading
// on past a real outcome costs a task read, as the agent's task has
// settled; settling on a snapshot loses the turn.
func (s *runStream) restates(t *protocol.Task) bool {
	r := s.ref
	if r.Task == "" || t.ID != r.Task || !t.Status.State.Interrupted() || len(t.Artifacts) > s.baseArtifacts {
		return false
	}
	if r.State == protocol.StateUnspecified {
		return true
	}
	return t.Status.State == r.State && (t.Status.Message == nil || t.Status.Message.ID == r.Message)
}

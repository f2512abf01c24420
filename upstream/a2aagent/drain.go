package a2aagent

import (
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream/frames"
)

// The rest of an agent's stream after the turn settled is read for at
// most drainWait and drainFrames frames: a well-behaved agent closes it
// at once, and one that does not must not hold a connection for long.
const (
	drainWait   = 10 * time.Second
	drainFrames = 64
)

// drain reads the rest of the agent's stream after the turn settled in
// s.final. An agent whose task goes on to another state there (its
// stream did not end with the state the module settled the turn in) has
// a task that no longer says what the module's does, which nothing else
// would show: it is logged at Warn with both states and both task ids.
// Reading the stream to its end also lets its connection be reused. The
// run is released already (end): only drainWait or the stream's end stops
// the read.
func (s *runStream) drain(resp *http.Response, fr *frames.Reader) {
	t := time.AfterFunc(drainWait, s.reqCancel)
	defer func() {
		t.Stop()
		resp.Body.Close()
		fr.Release()
		s.reqCancel()
	}()
	agent := protocol.StateUnspecified
	for range drainFrames {
		b, err := fr.Next()
		if err != nil {
			break
		}
		raw, err := s.a.result(b)
		if err != nil {
			break
		}
		ev, err := s.codec.DecodeStreamResult(raw)
		if err != nil {
			break
		}
		switch {
		case ev.Task != nil && ev.Task.ID == s.ref.Task:
			agent = ev.Task.Status.State
		case ev.Status != nil && ev.Status.TaskID == s.ref.Task:
			agent = ev.Status.Status.State
		}
	}
	if agent != protocol.StateUnspecified && s.final != protocol.StateUnspecified && agent != s.final {
		s.a.log.Warn("a2a: the agent's task went on to another state after the module settled the turn",
			zap.String("task_id", s.req.TaskID), zap.String("agent_task_id", s.ref.Task),
			zap.Stringer("state", s.final), zap.Stringer("agent_state", agent))
	}
}

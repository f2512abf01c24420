package handler

import (
	"context"
	"errors"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// Observer is told what the service does, for metrics. Without one
// (Options.Observer nil) each event costs a nil check. Its methods are
// called from many goroutines at once and must not block.
type Observer interface {
	// TaskState is called for each status a stored write gave a task:
	// the transitions into each state.
	TaskState(state protocol.TaskState)
	// RunStarted and RunEnded bracket one call of the agent (a task's
	// turn or a message reply): d is its duration and outcome how the
	// agent's side of it ended.
	RunStarted()
	RunEnded(d time.Duration, outcome RunOutcome)
	// StreamOpened and StreamClosed bracket one stream served to a
	// caller.
	StreamOpened()
	StreamClosed()
}

// RunOutcome is how an agent call ended, as metrics label it: a bounded
// set, never an error's text.
type RunOutcome string

// The run outcomes.
const (
	// RunOK: the agent answered to the end (whatever state it gave).
	RunOK RunOutcome = "ok"
	// RunRefused: the agent refused the request with an A2A error.
	RunRefused RunOutcome = "refused"
	// RunTimeout: the upstream's timeout ended the call.
	RunTimeout RunOutcome = "timeout"
	// RunCanceled: a cancel or a shutdown aborted the call.
	RunCanceled RunOutcome = "canceled"
	// RunError: the call failed (a connection, a status, a broken or
	// invalid answer, a store write).
	RunError RunOutcome = "error"
)

// outcomeOf classifies the error a run ended with (nil: it ended well).
func outcomeOf(ctx context.Context, err error) RunOutcome {
	switch {
	case err == nil:
		return RunOK
	case errors.As(err, new(*upstream.Refusal)):
		return RunRefused
	case errors.Is(err, context.DeadlineExceeded):
		return RunTimeout
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return RunCanceled
	}
	return RunError
}

// observeStates tells o the states a stored write's events gave its
// task.
func observeStates(o Observer, evs []protocol.Event) {
	for i := range evs {
		switch ev := &evs[i]; {
		case ev.Task != nil: // a task created: its first state
			o.TaskState(ev.Task.Status.State)
		case ev.Status != nil:
			o.TaskState(ev.Status.Status.State)
		}
	}
}

package handler

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// A run is one turn of a task: the runner starts it, it calls the agent
// and reads its events (interpret.go) into the task, and it ends settled
// (a final state, or the input the agent asks for), failed or stopped.

// failedText is the only thing a caller learns about a broken run: the
// agent's own error text may hold internals and goes to the log instead.
const failedText = "The agent could not complete the task."

// failRetries and failRetryStart pace the attempts to record a run as
// failed after a store write failed (50ms, 100ms, … about 3s in all).
const (
	failRetries    = 6
	failRetryStart = 50 * time.Millisecond
)

// abandon tells a store that renews the leases of running tasks
// (store.Abandoner) that the run ended without settling its task: the
// task is left running only when the store kept failing the writes, and
// a lease renewed on would keep it so for good. Let lapse, it goes to the
// orphan pass (FailOrphans), which records it failed once the store
// answers. No store access: a map entry of the store's, at most.
func (ru *run) abandon() {
	if ru.final != nil {
		return
	}
	if a, ok := store.As[store.Abandoner](ru.st); ok {
		a.Abandon(ru.task.ID, ru.version)
	}
}

// runLimits bound what a run may add to its task (see the Options of the
// same names); one value per service, shared by its runs.
type runLimits struct {
	history, historyBytes int
	output, events        int
	artifacts             int
}

// run is one execution of the agent for one task turn. Only its goroutine
// touches it after start.
type run struct {
	st store.Store
	// obs is the service's Observer (nil: none).
	obs Observer
	// span is the trace span of the request that started the run (nil:
	// not traced).
	span   trace.Span
	agent  upstream.Agent
	owner  string
	req    upstream.RunRequest
	limits *runLimits
	// reserved: the run holds one of its owner's slots in slots
	// (Runner.reserve), given back when it settles or ends.
	reserved bool
	slots    *Runner
	// baseLog is the runner's logger; log, the run's child of it, is made
	// on first use: most runs log nothing.
	baseLog *zap.Logger
	log     *zap.Logger

	// task is the run's snapshot: as last written (or re-read), and the
	// changes held back in pending after it. written and version are the
	// snapshot as last written and its version.
	task    *protocol.Task
	written *protocol.Task
	version uint64
	// ready is the agent stream's upstream.Ready (nil: not known). While
	// it says the next event is in hand, commit holds changes back in
	// pending (their events) and redo (the changes, to apply again after
	// a lost compare-and-set), to be written with the next one.
	ready   func() bool
	pending []protocol.Event
	redo    []func(t *protocol.Task) []protocol.Event

	// mainID is the run's main artifact, mainAt its index in the task's
	// artifacts once it exists (-1 before); chunks counts the chunks
	// written to it, which decides the append flag of the next one.
	mainID string
	mainAt int
	chunks int
	// mainClosed: the main artifact came whole (a plain answer), with
	// lastChunk already set, so finish sends no closing chunk.
	mainClosed bool
	// text holds the main artifact's last part while it is merged text
	// (textOpen), so each chunk appends in O(chunk).
	text     strings.Builder
	textOpen bool
	// chunks maps the agent's own artifact ids (upstream.EventChunk) to
	// the task's.
	chunkIDs map[string]string
	// notify queues the push notifications of each write
	// (Service.notify); nil without push.
	notify func(owner string, t *protocol.Task, last string, evs []protocol.Event)
	// upstreamRef is the agent's latest reference for the task
	// (upstream.EventRef), written with each of the run's writes.
	upstreamRef string
	// ctxKey is the context key req.ContextID was derived under (rekey).
	ctxKey []byte
	// in reads the agent's events, holding them to runLimits.
	in interpreter
	// refused is set, before the run settles, when the agent refused the
	// run before any output (upstream.Refusal): a blocking or streaming
	// send answers it as its error.
	refused *upstream.Refusal
	// ack, made only for an upstream.Refuser, is closed once the agent's
	// first event is recorded or the run has settled or ended: a streaming
	// send waits on it (Service.awaitAccepted).
	ack     chan struct{}
	ackDone bool
	// deferred is set for a send whose run creates its task (ReplyAuto):
	// the run decides on the agent's first event. Nil on every other run.
	deferred *deferredCreate
	// continues: the turn continues a task that asked for input, which an
	// answer marked as a direct message cannot (direct).
	continues bool
	// failing is set once the run tries to record a failure after a store
	// error, so that attempt does not start another.
	failing bool
	// closing ends when the runner closes (the run's base context).
	closing <-chan struct{}

	// settled is closed once the run has written a settling state
	// (terminal or interrupted), with final set to that snapshot first, or
	// when the run ends without writing one (final stays nil). A blocking
	// send waits on it.
	settled     chan struct{}
	final       *protocol.Task
	settledDone bool
}

// logger returns the run's logger, naming its task.
func (ru *run) logger() *zap.Logger {
	if ru.log == nil {
		// The fields the request's placeholders and Caddy's access log
		// use, so a run's lines join its request's.
		fields := []zap.Field{zap.String("task_id", ru.task.ID), zap.String("context_id", ru.task.ContextID)}
		if ru.span != nil && ru.span.SpanContext().IsValid() {
			fields = append(fields, zap.String("traceID", ru.span.SpanContext().TraceID().String()))
		}
		ru.log = ru.baseLog.With(fields...)
	}
	return ru.log
}

// settle closes settled once, after setting final to t (nil: the run ends
// without having settled the task itself).
func (ru *run) settle(t *protocol.Task) {
	if ru.settledDone {
		return
	}
	// The run is done with the agent once it settles the task: its
	// owner's slot is free for the next send at once (commit gave it back
	// before the settling write), not only after the run's teardown has
	// been scheduled: a caller sending one blocking message after another
	// would otherwise outrun it.
	ru.releaseSlot()
	ru.settledDone = true
	ru.final = t
	close(ru.settled)
}

// releaseSlot gives back the owner's slot the run holds, once.
func (ru *run) releaseSlot() {
	if ru.reserved {
		ru.reserved = false
		ru.slots.release(ru.owner)
	}
}

// acked closes ack once (if the run has one).
func (ru *run) acked() {
	if ru.ack != nil && !ru.ackDone {
		ru.ackDone = true
		close(ru.ack)
	}
}

func (ru *run) execute(base context.Context) {
	defer ru.acked()
	defer ru.settle(nil)
	if d := ru.deferred; d != nil {
		// A turn that ended undecided (or its answer not kept) gives its
		// claim up; a decided one has settled it already.
		defer d.claim.drop()
	}
	ru.closing = base.Done()
	ctx, cancel := context.WithCancel(base)
	// A cancel signal (from this or another replica) aborts the upstream
	// call through ctx. The watcher ends with the run, on ctx: the signal's
	// channel may never close.
	sig := ru.st.CancelSignal(ctx, ru.task.ID)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-sig:
			cancel()
		case <-ctx.Done():
		}
	}()
	defer func() {
		cancel()
		<-watched
	}()

	ru.mainID, ru.mainAt = newID(), -1
	ru.in = interpreter{limits: ru.limits, output: outputSize(ru.task)}
	if ru.task.Status.State == protocol.StateSubmitted {
		err := ru.commit(func(t *protocol.Task) []protocol.Event {
			return []protocol.Event{ru.setStatus(t, protocol.StateWorking, nil)}
		})
		if err != nil {
			ru.stopped(err)
			return
		}
	}

	if cr, ok := ru.agent.(upstream.ContextReader); ok {
		ru.req.Context = contextHistory(ctx, ru.st, ru.owner, ru.task, cr.ContextMessages())
	}
	// The agent's call, as the observer times it and a trace spans it:
	// outcome is set on each way out.
	tctx, endTrace := traceRun(ctx, ru.span, &ru.req, ru.task.ID, ru.task.ContextID)
	outcome, obs := RunError, ru.obs
	defer func() { endTrace(outcome) }()
	var started time.Time
	if obs != nil {
		obs.RunStarted()
		started = time.Now()
		defer func() { obs.RunEnded(time.Since(started), outcome) }()
	}
	stream, err := ru.agent.Run(tctx, &ru.req)
	if err != nil {
		outcome = outcomeOf(ctx, err)
		if ru.undecided() && !ru.create() {
			return
		}
		ru.refuse(err)
		ru.fail(err, "")
		return
	}
	if r, ok := stream.(upstream.Ready); ok {
		ru.ready = r.Ready
	}
	// Only this goroutine touches the stream: the Stream contract does not
	// promise a Close concurrent with Next. A cancel reaches a blocked Next
	// through ctx, which per the Agent contract aborts the upstream call.
	defer stream.Close()

	for {
		ev, err := stream.Next()
		if ru.undecided() {
			// The turn's first event says what it is (ReplyAuto).
			if err == nil && ev.Kind == upstream.EventMessage {
				outcome = ru.answerDirect(ctx, cancel, stream)
				return
			}
			if !ru.create() {
				return
			}
		}
		if err == io.EOF {
			outcome = RunOK
			ru.finish(protocol.StateCompleted, nil, "")
			return
		}
		if err != nil {
			outcome = outcomeOf(ctx, err)
			ru.refuse(err)
			ru.fail(err, "")
			return
		}
		done, err := ru.in.apply(&ev, ru)
		// The agent has accepted the turn: a streaming send waiting on it
		// opens its stream.
		ru.acked()
		if errors.Is(err, store.ErrTooManyEvents) {
			// The store accepts the terminal write that records this.
			ru.fail(err, "")
			return
		}
		if err != nil {
			outcome = outcomeOf(ctx, err)
			ru.stopped(err)
			return
		}
		if done {
			outcome = RunOK
			return
		}
	}
}

// refuse notes a refusal by the agent that came before any output: the
// caller gets its code. One after output is only a failure of the run.
func (ru *run) refuse(err error) {
	if r, ok := errors.AsType[*upstream.Refusal](err); ok && ru.in.events == 0 {
		ru.refused = r
	}
}

// finish ends the run in state with an optional agent message. detail is
// log-only text the agent gave with the outcome.
func (ru *run) finish(state protocol.TaskState, parts []protocol.Part, detail string) {
	if detail != "" {
		ru.logger().Warn("a2a: agent reported a problem", zap.String("state", state.String()), zap.String("detail", detail))
	}
	if state == protocol.StateFailed && len(parts) == 0 {
		parts = []protocol.Part{{Kind: protocol.PartText, Text: failedText}}
	}
	msg := ru.agentMessage(parts)
	err := ru.commit(func(t *protocol.Task) []protocol.Event {
		var evs []protocol.Event
		if ru.chunks > 0 && !ru.mainClosed {
			// Tells streaming clients the main artifact is complete; the
			// empty text adds nothing to the merged snapshot.
			evs = append(evs, protocol.Event{Artifact: &protocol.ArtifactUpdate{
				TaskID:    t.ID,
				ContextID: t.ContextID,
				Artifact:  protocol.Artifact{ID: ru.mainID, Parts: []protocol.Part{{Kind: protocol.PartText}}},
				Append:    true,
				LastChunk: true,
			}})
		}
		if msg != nil {
			t.History = append(slices.Clip(t.History), *msg)
			ru.limits.keepHistory(&t.History)
		}
		return append(evs, ru.setStatus(t, state, msg))
	})
	if err != nil {
		ru.stopped(err)
	}
}

// fail ends the run as failed with the generic message; err is logged.
func (ru *run) fail(err error, detail string) {
	fields := []zap.Field{zap.Error(err)}
	if detail != "" {
		fields = append(fields, zap.String("detail", detail))
	}
	if errors.Is(err, context.Canceled) {
		// A cancel or a shutdown, not an agent fault; after a cancel the
		// write below loses to the canceled state and nothing is recorded.
		ru.logger().Debug("a2a: agent run aborted", fields...)
	} else {
		ru.logger().Warn("a2a: agent run failed", fields...)
	}
	ru.finish(protocol.StateFailed, nil, "")
}

// stopped handles a write the run could not make. A cancel that won the
// race (errStopped) ends the run quietly. Any other store failure would
// leave the task working forever (a blocking caller waiting on it, a TTL
// that never starts), so the run tries, with backoff, to record it as
// failed instead; only a store that stays broken keeps the task as it was.
func (ru *run) stopped(err error) {
	if errors.Is(err, errStopped) {
		ru.logger().Debug("a2a: run stopped, task ended elsewhere")
		return
	}
	ru.logger().Error("a2a: run could not record its progress", zap.Error(err))
	if ru.failing || errors.Is(err, store.ErrClosed) {
		return
	}
	ru.failing = true
	wait := failRetryStart
	for range failRetries {
		select {
		case <-time.After(wait):
		case <-ru.closing:
			// The runner is closing: no time left to wait the outage out.
			ru.logger().Error("a2a: task left unfinished at shutdown, the store is failing")
			return
		}
		wait *= 2
		err = ru.recordFailed()
		if err == nil || errors.Is(err, errStopped) || errors.Is(err, store.ErrClosed) {
			return
		}
	}
	ru.logger().Error("a2a: task left unfinished, the store keeps failing", zap.Error(err))
}

// recordFailed ends the task failed with the generic message, starting
// from what the store has: the run's snapshot may hold a change that was
// never written.
func (ru *run) recordFailed() error {
	if err := ru.reread(); err != nil {
		return err
	}
	msg := ru.agentMessage([]protocol.Part{{Kind: protocol.PartText, Text: failedText}})
	return ru.commit(func(t *protocol.Task) []protocol.Event {
		t.History = append(slices.Clip(t.History), *msg)
		ru.limits.keepHistory(&t.History)
		return []protocol.Event{ru.setStatus(t, protocol.StateFailed, msg)}
	})
}

package handler

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// failedText is the only thing a caller learns about a broken run: the
// agent's own error text may hold internals and goes to the log instead.
const failedText = "The agent could not complete the task."

const (
	// defaultCloseWait bounds how long Close waits for runs to end after
	// canceling them.
	defaultCloseWait = 10 * time.Second
)

// failRetries and failRetryStart pace the attempts to record a run as
// failed after a store write failed (50ms, 100ms, … about 3s in all).
const (
	failRetries    = 6
	failRetryStart = 50 * time.Millisecond
)

var (
	// errRunnerClosed refuses runs once Close has begun.
	errRunnerClosed = errors.New("handler: runner closed")
	// errStopped means the task reached a terminal state by another hand
	// (a cancel) while the run was going: the run stops without writing.
	errStopped = errors.New("handler: task left the run")
)

// Runner executes task runs in the background. It lives as long as the
// store it writes to (not a request or a config), so runs survive reloads.
type Runner struct {
	log       *zap.Logger
	ctx       context.Context
	cancel    context.CancelFunc
	closeWait time.Duration

	mu     sync.Mutex
	closed bool
	// wg counts runs; workers counts the goroutines that execute them.
	wg      sync.WaitGroup
	workers sync.WaitGroup
	// idle hands a run to a worker waiting for one (unbuffered: a send
	// succeeds only if one waits).
	idle chan *run
	// notify is the push hook of the newest service with push (set by
	// Backend.Attach through Service.notifyRunnerWrites),
	// for the writes the runner makes itself (orphans failed).
	notify atomic.Pointer[func(string, *protocol.Task, string, []protocol.Event)]
	// active counts each owner's reserved runs (reserve), under mu.
	active map[string]int
	// running counts the runs started and not yet ended.
	running atomic.Int64
}

// Running is the number of runs going now, in the background or waiting
// for a worker.
func (r *Runner) Running() int { return int(r.running.Load()) }

// NewRunner returns a runner whose runs log to logger (nil: no logging).
func NewRunner(logger *zap.Logger) *Runner {
	if logger == nil {
		logger = zap.NewNop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Runner{log: logger, ctx: ctx, cancel: cancel, closeWait: defaultCloseWait, idle: make(chan *run), active: map[string]int{}}
}

// reserve takes one of owner's max slots for a running task; false when
// all are taken. The anonymous owner "" is every caller without an
// identity, so it has no bound of its own; nor has any owner with max < 0.
func (r *Runner) reserve(owner string, max int) bool {
	if owner == "" || max < 0 {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.active[owner] >= max {
		return false
	}
	r.active[owner]++
	return true
}

// release gives back a slot reserve took.
func (r *Runner) release(owner string) {
	if owner == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := r.active[owner]; n > 1 {
		r.active[owner] = n - 1
	} else {
		delete(r.active, owner)
	}
}

// start runs ru in the background; it fails only once Close has begun.
// A worker left idle by an earlier run takes it, or a new one starts.
func (r *Runner) start(ru *run) error {
	ru.baseLog = r.log
	ru.slots = r
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errRunnerClosed
	}
	// Add under the lock so Close never waits on a group that can still grow.
	r.wg.Add(1)
	r.running.Add(1)
	select {
	case r.idle <- ru:
	default:
		r.workers.Add(1)
		go r.work(ru)
	}
	return nil
}

// workerIdle is how long a worker waits for another run before it ends.
const workerIdle = 10 * time.Second

// work executes ru, then every run handed to it while it waits, until it
// has waited workerIdle or the runner closes. A run used to be a goroutine
// of its own: creating it, growing its stack for the agent call (twice,
// each a copy of the whole call chain) and tearing it down cost 4 % of a
// loaded server's CPU; a worker pays for that once.
func (r *Runner) work(ru *run) {
	defer r.workers.Done()
	var wait *time.Timer
	defer func() {
		if wait != nil {
			wait.Stop()
		}
	}()
	for {
		// Each time: the collector may have shrunk the stack of a worker
		// that waited (it needs little then), and regrowing it here, not
		// mid-call, keeps the copy small.
		growStack()
		r.runOne(ru)
		if wait == nil {
			wait = time.NewTimer(workerIdle)
		} else {
			wait.Reset(workerIdle)
		}
		select {
		case ru = <-r.idle:
		case <-wait.C:
			return
		case <-r.ctx.Done():
			return
		}
	}
}

// runOne executes ru and accounts for it. A panic in a run (a bug, or a
// library it calls) must not take the server down with every other run
// and request: it is logged with its stack, loudly, and the task is
// recorded as failed; the worker goes on.
func (r *Runner) runOne(ru *run) {
	defer func() {
		if rec := recover(); rec != nil {
			ru.logger().Error("a2a: run panicked; the task is recorded as failed",
				zap.Any("panic", rec), zap.Stack("stack"))
			if err := ru.recordFailed(); err != nil && !errors.Is(err, errStopped) {
				ru.logger().Error("a2a: task left unfinished after a panic", zap.Error(err))
			}
		}
		ru.abandon()
		ru.releaseSlot()
		r.running.Add(-1)
		r.wg.Done()
	}()
	ru.execute(r.ctx)
}

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

// stackSink keeps growStack's frame from being optimised away.
var stackSink atomic.Uint32

// growStack grows a worker's stack to 8 KB in one step, while it is
// still nearly empty (and does nothing if it is that size already). A run's agent call goes deeper than 4 KB (the HTTP
// client's header checks), and Go grows a stack by copying it, twice from
// the starting size, each time with the whole call chain on it. Here the
// copy is of a frame or two. bench/run.sh's blocking-send step guards it
// (server CPU per send against reverse_proxy's, in BENCHMARKS.md), with
// BenchmarkSendMessageBlocking in binding/jsonrpc.
//
//go:noinline
func growStack() {
	var pad [5 << 10]byte
	i := stackSink.Load() % uint32(len(pad))
	pad[i] = 1
	if pad[(i+1)%uint32(len(pad))] != 0 { // never: only pad[i] is set
		stackSink.Store(0)
	}
}

// Close cancels every run still going and waits for them to end, up to a
// bound; a run canceled this way records the task as failed. Runs started
// after Close are refused.
func (r *Runner) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		r.workers.Wait()
		close(done)
	}()
	t := time.NewTimer(r.closeWait)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
		return errors.New("handler: runs still going after close timeout")
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

// The run is the output of a task's turn (interpret.go): what the agent
// sends is written to the task as it comes.

func (ru *run) mainText(text string, whole bool) error {
	return ru.appendMain([]protocol.Part{{Kind: protocol.PartText, Text: text}}, true, whole)
}

func (ru *run) mainParts(parts []protocol.Part, whole bool) error {
	return ru.appendMain(parts, false, whole)
}

func (ru *run) artifact(a *protocol.Artifact) error { return ru.addArtifact(a) }

// progress sets the task working with the agent's note as its status
// message.
func (ru *run) progress(parts []protocol.Part) error {
	msg := ru.agentMessage(parts)
	return ru.commit(func(t *protocol.Task) []protocol.Event {
		return []protocol.Event{ru.setStatus(t, protocol.StateWorking, msg)}
	})
}

func (ru *run) end(state protocol.TaskState, parts []protocol.Part, detail string) error {
	ru.finish(state, parts, detail)
	return nil
}

// overLimit ends the run failed with a status message that names the
// limit: the event is not written, and what the task held before stays.
func (ru *run) overLimit(limit string, max int) error {
	ru.logger().Warn("a2a: agent output over a limit; the task is failed", zap.String("limit", limit), zap.Int("max", max))
	ru.finish(protocol.StateFailed, []protocol.Part{{Kind: protocol.PartText, Text: overLimitText(limit, max)}}, "")
	return nil
}

// artifacts counts the task's artifacts, every turn's: the main artifact
// is added by the run's first main output.
func (ru *run) artifacts(main bool) (int, bool) {
	n := len(ru.task.Artifacts)
	if main && ru.mainAt >= 0 {
		return n, false
	}
	return n + 1, true
}

// outputSize is the content size of t's output: its artifacts and the
// agent's messages it keeps.
func outputSize(t *protocol.Task) int {
	n := protocol.ArtifactsSize(t.Artifacts)
	for i := range t.History {
		if t.History[i].Role == protocol.RoleAgent {
			n += t.History[i].Size()
		}
	}
	return n
}

// appendMain adds parts to the run's main artifact. In the snapshot,
// consecutive text chunks merge into one text part so a task read later
// holds the answer, not thousands of fragments; the event carries only
// the chunk. whole says the parts are the entire artifact: the update is
// then also its last chunk, and no closer follows.
func (ru *run) appendMain(parts []protocol.Part, mergeText, whole bool) error {
	// The merged text grows in ru.text, outside commit (which may run its
	// mutation again after a conflict): appending a chunk costs the chunk,
	// where `Text += chunk` copied the whole answer so far on every chunk.
	// A Builder never rewrites bytes it handed out, so earlier snapshots
	// keep their text.
	var merged string
	extend := mergeText && ru.textOpen
	if mergeText {
		if !ru.textOpen {
			ru.text.Reset()
		}
		for _, p := range parts {
			ru.text.WriteString(p.Text)
		}
		merged = ru.text.String()
	}
	// Read before commit, which may hold the change back and apply it
	// again after the chunks that follow it were counted.
	appending := ru.chunks > 0
	err := ru.commit(func(t *protocol.Task) []protocol.Event {
		// t's slices are the stored snapshot's (commit): the artifact
		// list is copied before an artifact in it changes, and a merged
		// part is changed in a copied part list. Appending parts past the
		// end of a stored list is safe without a copy: readers of a
		// snapshot never look past its length, and only this run appends
		// to its main artifact.
		i := ru.mainAt
		if i < 0 || i >= len(t.Artifacts) || t.Artifacts[i].ID != ru.mainID {
			i = artifactIndex(t, ru.mainID)
		}
		if i < 0 {
			// Appended in place, as addArtifact does.
			t.Artifacts = append(t.Artifacts, protocol.Artifact{ID: ru.mainID})
			i = len(t.Artifacts) - 1
		} else {
			// The artifact changes: a copy of the list, so the stored
			// snapshots sharing it keep theirs. This costs the number of
			// artifacts per chunk, which MaxArtifacts bounds.
			t.Artifacts = slices.Clone(t.Artifacts)
		}
		ru.mainAt = i
		a := &t.Artifacts[i]
		switch n := len(a.Parts); {
		case !mergeText:
			a.Parts = append(a.Parts, parts...)
		case extend && n > 0 && plainText(&a.Parts[n-1]):
			a.Parts = slices.Clone(a.Parts)
			a.Parts[n-1].Text = merged
		default:
			a.Parts = append(a.Parts, protocol.Part{Kind: protocol.PartText, Text: merged})
		}
		return []protocol.Event{{Artifact: &protocol.ArtifactUpdate{
			TaskID:    t.ID,
			ContextID: t.ContextID,
			Artifact:  protocol.Artifact{ID: ru.mainID, Parts: append([]protocol.Part(nil), parts...)},
			Append:    appending,
			LastChunk: whole,
		}}}
	})
	if err == nil {
		ru.chunks++
		ru.mainClosed = ru.mainClosed || whole
		ru.textOpen = mergeText
		if last := &parts[len(parts)-1]; !mergeText && plainText(last) {
			// Text that follows extends this plain text part, as before.
			ru.text.Reset()
			ru.text.WriteString(last.Text)
			ru.textOpen = true
		}
	}
	return err
}

// addArtifact records a separate, complete artifact. Its id is always
// ours: ids must be unique within the task, which an agent cannot know.
func (ru *run) addArtifact(src *protocol.Artifact) error {
	a := *src
	a.ID = newID()
	a.Parts = append([]protocol.Part(nil), src.Parts...)
	return ru.commit(func(t *protocol.Task) []protocol.Event {
		// Appended in place, not to a copy: readers of earlier snapshots
		// never look past their length, and only this run appends to the
		// list while it runs, so an agent that sends thousands of
		// artifacts costs linear time, not a copy of the list per artifact.
		t.Artifacts = append(t.Artifacts, a)
		return []protocol.Event{{Artifact: &protocol.ArtifactUpdate{
			TaskID:    t.ID,
			ContextID: t.ContextID,
			Artifact:  a,
			LastChunk: true,
		}}}
	})
}

func (ru *run) hasChunk(id string) bool {
	_, ok := ru.chunkIDs[id]
	return ok
}

// chunk records a piece of the agent's artifact src.ID in the task's
// artifact for that id (a new one on its first piece; appendTo false on
// a later one replaces it, as an A2A artifact update without append
// does). The agent's id is not the task's: ids must be unique within the
// task across its turns, which an agent cannot know.
func (ru *run) chunk(src *protocol.Artifact, appendTo, last bool) error {
	id, known := ru.chunkIDs[src.ID]
	if !known {
		if ru.chunkIDs == nil {
			ru.chunkIDs = map[string]string{}
		}
		id = newID()
	}
	a := *src
	a.ID = id
	a.Parts = append([]protocol.Part(nil), src.Parts...)
	err := ru.commit(func(t *protocol.Task) []protocol.Event {
		i := artifactIndex(t, id)
		switch {
		case i < 0:
			// Appended in place, as addArtifact does.
			t.Artifacts = append(t.Artifacts, a)
		case appendTo:
			t.Artifacts = slices.Clone(t.Artifacts)
			t.Artifacts[i].Parts = append(slices.Clip(t.Artifacts[i].Parts), a.Parts...)
		default:
			t.Artifacts = slices.Clone(t.Artifacts)
			t.Artifacts[i] = a
		}
		return []protocol.Event{{Artifact: &protocol.ArtifactUpdate{
			TaskID:    t.ID,
			ContextID: t.ContextID,
			Artifact:  a,
			Append:    known && appendTo,
			LastChunk: last,
		}}}
	})
	if err == nil && !known {
		ru.chunkIDs[src.ID] = id
	}
	return err
}

// ref records the agent's reference for the task. It is written with the
// run's next write, which every run makes (its outcome at the latest):
// no write of its own, and no caller sees it.
func (ru *run) ref(ref string) error {
	ru.upstreamRef = ref
	return nil
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

// setStatus moves t to state and returns the status event. Final is set
// for the states that end a 0.3 stream: terminal and input-required, not
// auth-required (streams stay open while credentials arrive out of band).
func (ru *run) setStatus(t *protocol.Task, state protocol.TaskState, msg *protocol.Message) protocol.Event {
	t.Status = protocol.TaskStatus{State: state, Message: msg, Timestamp: time.Now().UTC()}
	return protocol.Event{Status: &protocol.StatusUpdate{
		TaskID:    t.ID,
		ContextID: t.ContextID,
		Status:    t.Status,
		Final:     closesStream(state),
	}}
}

// agentMessage wraps parts as an agent message of this task (nil if none).
func (ru *run) agentMessage(parts []protocol.Part) *protocol.Message {
	if len(parts) == 0 {
		return nil
	}
	return &protocol.Message{
		ID:        newID(),
		ContextID: ru.task.ContextID,
		TaskID:    ru.task.ID,
		Role:      protocol.RoleAgent,
		Parts:     append([]protocol.Part(nil), parts...),
	}
}

// commit applies mutate to the run's snapshot and writes it with the
// events mutate returns. On a version conflict it re-reads the task: if it
// became terminal meanwhile (a cancel won the race) the run stops with
// errStopped; otherwise the changes are applied again to the fresh
// snapshot.
//
// A change that does not settle the task is held back while the agent's
// next event is already in hand (ready), up to maxHeld changes, and
// written with the next commit: nothing waits for it, and the store is
// written once instead of twice. bench/run.sh's blocking-send steps (both
// stores) measure it.
func (ru *run) commit(mutate func(t *protocol.Task) []protocol.Event) error {
	for {
		// The snapshot is shared with the store and its readers (see
		// store.Store): mutate changes a copy of the Task struct and must
		// replace, not write into, the slices it changes. Appends go
		// through slices.Clip except where only this run ever appends.
		t := *ru.task
		if ru.upstreamRef != "" {
			t.Upstream = ru.upstreamRef
		}
		evs := mutate(&t)
		settling := settles(t.Status.State)
		if !settling && len(ru.redo) < maxHeld && ru.ready != nil && ru.ready() {
			ru.task = &t
			ru.pending = append(ru.pending, evs...)
			ru.redo = append(ru.redo, mutate)
			return nil
		}
		if len(ru.pending) > 0 {
			evs = append(ru.pending, evs...)
		}
		// Writes do not use the run's context: a canceled run must still
		// record how it ended. The store bounds its own I/O.
		ctx := context.Background()
		if settling {
			// Before the write: a stream relays the settling event as soon
			// as it is stored, and its client may send the next message at
			// once.
			ru.releaseSlot()
		}
		v, last, err := ru.st.Update(ctx, t.ID, ru.version, &t, evs...)
		if err == nil {
			if ru.notify != nil {
				ru.notify(ru.owner, &t, last, evs)
			}
			ru.task, ru.written, ru.version = &t, &t, v
			ru.dropHeld()
			if settling {
				ru.settle(&t)
			}
			return nil
		}
		if !errors.Is(err, store.ErrConflict) {
			// What was held back went with the write that failed.
			ru.abandonHeld()
			return err
		}
		rec, err := ru.st.Get(ctx, ru.owner, t.ID)
		if err != nil {
			ru.abandonHeld()
			return err
		}
		if rec.Task.Status.State.Terminal() {
			ru.abandonHeld()
			return errStopped
		}
		ru.task, ru.written, ru.version = rec.Task, rec.Task, rec.Version
		// The held changes again, on the fresh snapshot; mutate follows
		// at the top of the loop.
		redo := ru.redo
		ru.pending = nil
		for _, m := range redo {
			t := *ru.task
			ru.pending = append(ru.pending, m(&t)...)
			ru.task = &t
		}
		ru.redo = redo
	}
}

// maxHeld bounds the changes commit holds back: the write that settles a
// task is taken past the store's event bound (store.Store), and this
// bounds by how much.
const maxHeld = 8

// dropHeld forgets the changes held back (written, or lost with the
// write).
func (ru *run) dropHeld() {
	// Not reused: a store may keep the events it was given.
	ru.pending, ru.redo = nil, nil
}

// abandonHeld goes back to the snapshot as last written: the held
// changes were not (the write that carried them failed or lost).
func (ru *run) abandonHeld() {
	ru.task = ru.written
	ru.dropHeld()
}

// reread replaces the run's snapshot with the stored task; errStopped if
// that is terminal.
func (ru *run) reread() error {
	rec, err := ru.st.Get(context.Background(), ru.owner, ru.task.ID)
	if err != nil {
		return err
	}
	ru.dropHeld()
	if rec.Task.Status.State.Terminal() {
		return errStopped
	}
	ru.task, ru.written, ru.version = rec.Task, rec.Task, rec.Version
	return nil
}

func artifactIndex(t *protocol.Task, id string) int {
	for i := range t.Artifacts {
		if t.Artifacts[i].ID == id {
			return i
		}
	}
	return -1
}

// plainText reports whether p is a text part that a following text chunk
// may extend without changing its meaning.
func plainText(p *protocol.Part) bool {
	return p.Kind == protocol.PartText && p.MediaType == "" && len(p.Metadata) == 0
}

package handler

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

var (
	// errRunnerClosed refuses runs once Close has begun.
	errRunnerClosed = errors.New("handler: runner closed")
	// errStopped means the task reached a terminal state by another hand
	// (a cancel) while the run was going: the run stops without writing.
	errStopped = errors.New("handler: task left the run")
)

const (
	// defaultCloseWait bounds how long Close waits for runs to end after
	// canceling them.
	defaultCloseWait = 10 * time.Second
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

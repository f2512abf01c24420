package handler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/push"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// Backend is a store with everything whose lifetime is the store's: the
// runner whose runs write to it, the key the agent's context ids are
// derived under, and the dispatcher of its tasks' push notifications.
// Runs outlive requests and configs, not the store. It is the state that
// survives a reload: the services of successive configs are built over
// one backend while their store settings stay the same.
type Backend struct {
	store  store.Store
	runner *Runner
	// log is where the runs and the dispatcher log: the logger of the
	// newest config over this backend (SetLogger), so that logs follow
	// reloads of the logging config.
	log *atomic.Pointer[zap.Logger]
	// mount names the newest mount over the backend, for Close's warning.
	mount atomic.Pointer[string]
	// contextKey keys the context ids the agent sees (Options.ContextKey):
	// it lives as long as the tasks whose contexts it names. A shared
	// store's (store.Secrets) is asked of it by every send instead
	// (contextKeyFunc; the store keeps it), nil here.
	contextKey     []byte
	contextKeyFunc func(context.Context) ([]byte, error)
	push           backendPush
}

// NewBackend gives st a runner and a context key. A store shared by
// several processes brings its own: its context key is the store's
// secret (store.Secrets), the same in every process, so that a task
// continued on another replica keeps its context at the agent; and its
// runs' orphans (store.Orphans) are looked for every half lease and
// recorded failed.
func NewBackend(st store.Store) *Backend {
	cur := new(atomic.Pointer[zap.Logger])
	cur.Store(zap.NewNop())
	b := &Backend{
		store:  st,
		runner: NewRunner(zap.New(&liveCore{cur: cur})),
		log:    cur,
	}
	if s, ok := st.(store.Secrets); ok {
		// Asked of the store by every send, not read here: Caddy starts
		// while the store's server is down, and only the sends made
		// before it is back fail; and a store that lost the key (Redis
		// restarted without persistence) gives the one its processes
		// agreed on since.
		b.contextKeyFunc = func(ctx context.Context) ([]byte, error) {
			key, err := s.Secret(ctx, "context-key", ContextKeySize)
			if err != nil {
				return nil, fmt.Errorf("the store's shared context key: %w", err)
			}
			return key, nil
		}
	} else {
		b.contextKey = NewContextKey()
	}
	if o, ok := st.(store.Orphans); ok {
		b.runner.FailOrphans(st, o, o.Lease()/2)
	}
	return b
}

// Store is the backend's store.
func (b *Backend) Store() store.Store { return b.store }

// SetLogger makes l, the newest config's logger, the one the runs and
// the dispatcher log through.
func (b *Backend) SetLogger(l *zap.Logger) { b.log.Store(l) }

// SetMount names the newest mount over the backend (for Close's warning).
func (b *Backend) SetMount(desc string) { b.mount.Store(&desc) }

// Fill sets o's store, runner and context key to the backend's.
func (b *Backend) Fill(o *Options) {
	o.Store, o.Runner = b.store, b.runner
	o.ContextKey, o.ContextKeyFunc = b.contextKey, b.contextKeyFunc
}

// heldCounter is a store that can say what closing it drops (the memory
// store's Held).
type heldCounter interface {
	Held() (total, waiting, running int)
}

// Close ends the runs, then the push dispatcher (their last writes queue
// notices too), then closes the store. The last config over the backend
// has let go of it: unless the process is exiting (where the tasks of a
// process-local store go with it, as an operator expects), a reload
// changed what the store's key is made of, so the tasks it holds are
// lost, and a store that can count them says how many in a warning.
func (b *Backend) Close(exiting bool) error {
	if c, ok := b.store.(heldCounter); ok && !exiting {
		if total, waiting, running := c.Held(); total > 0 {
			var mount string
			if m := b.mount.Load(); m != nil {
				mount = *m
			}
			b.log.Load().Warn("a2a: config change dropped a task store with its tasks (a new store starts empty); "+
				"to keep tasks across a change of upstream or rpc_path, name the store's share (store memory { share <name> })",
				zap.Int("tasks", total), zap.Int("waiting", waiting), zap.Int("running", running), zap.String("last_mount", mount))
		}
	}
	err := b.runner.Close()
	b.closePush()
	return errors.Join(err, b.store.Close())
}

// backendPush is a backend's dispatcher, made when a config with push
// first uses the backend: it delivers for every config sharing the
// store, across reloads, and ends with the store. With a store that
// hands work over (store.Handoffs, Redis), what the dispatcher still
// holds when it ends is left in the store, and a taker loop delivers
// what other processes left there.
type backendPush struct {
	once sync.Once
	d    *push.Dispatcher
	// resume is the newest push config's resumeNotice: handed-over
	// notices are delivered with its settings.
	resume atomic.Pointer[func([]byte) error]
	// observe counts the deliveries (the newest config's metrics).
	observe atomic.Pointer[func(push.Outcome)]
	stop    context.CancelFunc
	done    chan struct{}
}

// handoffKind names the push notices among a store's handoffs.
const handoffKind = "push"

// handoffPoll is how often a process looks for notices a stopped one left.
const handoffPoll = 2 * time.Second

// Dispatcher is the backend's push dispatcher, made on first use.
func (b *Backend) Dispatcher() *push.Dispatcher {
	b.push.once.Do(func() {
		b.push.d = push.New(push.Options{Logger: zap.New(&liveCore{cur: b.log}), Observe: func(o push.Outcome) {
			if fn := b.push.observe.Load(); fn != nil {
				(*fn)(o)
			}
		}})
		if h, ok := b.store.(store.Handoffs); ok {
			ctx, cancel := context.WithCancel(context.Background())
			b.push.stop, b.push.done = cancel, make(chan struct{})
			go b.takeHandoffs(ctx, h)
		}
	})
	return b.push.d
}

// HandsOff reports whether the backend's store takes handoffs: what the
// dispatcher holds when it ends goes to the other processes.
func (b *Backend) HandsOff() bool {
	_, ok := b.store.(store.Handoffs)
	return ok
}

// Attach makes svc, the newest service with push over the backend, the
// one whose settings deliver what other processes hand over and what the
// runner writes on its own (a stopped replica's running task recorded
// failed); observe (nil: none) counts the deliveries.
func (b *Backend) Attach(svc *Service, observe func(push.Outcome)) {
	resume := svc.resumeNotice
	b.push.resume.Store(&resume)
	if observe != nil {
		b.push.observe.Store(&observe)
	}
	svc.notifyRunnerWrites()
}

// takeHandoffs delivers, from here, the notices other processes left
// when they stopped.
func (b *Backend) takeHandoffs(ctx context.Context, h store.Handoffs) {
	defer close(b.push.done)
	t := time.NewTicker(handoffPoll)
	defer t.Stop()
	for {
		for {
			resume := b.push.resume.Load()
			if resume == nil {
				break
			}
			item, err := h.TakeHandoff(ctx, handoffKind)
			if err != nil || item == nil {
				break
			}
			if err := (*resume)(item); err != nil {
				b.log.Load().Warn("a2a: a push notification handed over by a stopped process could not be read", zap.Error(err))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// closePush stops the dispatcher: what it still holds is handed to the
// other processes when the store takes handoffs, else dropped; either
// way one log line says how many notifications that was.
func (b *Backend) closePush() {
	if b.push.d == nil {
		return
	}
	if b.push.stop != nil {
		b.push.stop()
		<-b.push.done
	}
	n, items := b.push.d.Close()
	if h, ok := b.store.(store.Handoffs); ok && len(items) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := h.PutHandoffs(ctx, handoffKind, items)
		cancel()
		if err == nil {
			b.log.Load().Info("a2a: push notifications not yet delivered are left for the other replicas", zap.Int("notifications", len(items)))
			n -= len(items)
		} else {
			b.log.Load().Warn("a2a: push notifications could not be handed to the other replicas", zap.Int("notifications", len(items)), zap.Error(err))
		}
	}
	if n > 0 {
		b.log.Load().Warn("a2a: push notifications not delivered: the store they belong to was closed", zap.Int("notifications", n))
	}
}

// Package memory is the embedded, in-process store.Store: bounded in task
// count, in bytes, in tasks per owner and in per-task log length, with a
// TTL on finished tasks and another on tasks waiting for the client
// (input-required, auth-required).
//
// Locking: s.mu guards the task and owner maps and the parking lots (the
// finished and the idle list); each task has its own mutex for its snapshot
// and event log; each owner has an index with its own mutex. The order is
// always s.mu, then a task's mutex, then an owner index's mutex, so that
// reads and updates of different tasks only share s.mu in read mode. Only
// a change of a parking lot (a task parked, moved to its back, or taken
// out) takes s.mu for writing, so the updates of running tasks never do.
package memory

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddy-a2a/caddy-a2a/store"
)

// Defaults of Options.
const (
	DefaultMaxTasks         = 10000
	DefaultTTL              = store.DefaultTTL
	DefaultIdleTTL          = store.DefaultIdleTTL
	DefaultMaxEventsPerTask = store.DefaultMaxEventsPerTask
	DefaultMaxBytes         = 256 << 20
	DefaultMaxTasksPerOwner = store.DefaultMaxTasksPerOwner
)

// Options bound a Store. Zero values select the defaults.
type Options struct {
	// MaxTasks is how many tasks the store holds (default 10000). Creating
	// one more evicts the finished task updated longest ago (any owner's),
	// or when none is finished the creating owner's own interrupted task
	// updated longest ago; another owner's interrupted task is never
	// evicted to make room, so when only running tasks and other owners'
	// waiting ones are left Create fails with store.ErrFull.
	MaxTasks int
	// MaxBytes bounds what the tasks hold, snapshots and logs, counted as
	// content bytes plus a small overhead per task and event (default
	// 256 MiB; negative: no bound). Going over it evicts finished tasks,
	// oldest first; a Create that still does not fit evicts the creating
	// owner's interrupted tasks, then fails with store.ErrFull. An Update
	// is never refused for bytes: a running task is bounded by its writer.
	MaxBytes int64
	// MaxTasksPerOwner bounds the tasks one owner holds (default 1000;
	// negative: no bound). Creating one more evicts that owner's finished
	// task updated longest ago, then its interrupted one; when all of them
	// are running Create fails with store.ErrQuota. The anonymous owner ""
	// stands for every caller without an identity, so it is not bounded
	// per owner.
	MaxTasksPerOwner int
	// TTL is how long a finished (terminal) task is kept after its last
	// update (default 1h; negative: until evicted by MaxTasks).
	TTL time.Duration
	// IdleTTL is how long an interrupted task (input-required,
	// auth-required) is kept after its last update (default 24h; negative:
	// until evicted by MaxTasks). Without it a client that walks away from
	// a conversation holds its task forever. Submitted and working tasks
	// never expire: a run owns them.
	IdleTTL time.Duration
	// MaxEventsPerTask bounds a task's event log (default 20000). A log is
	// compacted each time the task settles (store.Compact), so it holds
	// the events of the current run plus a few per earlier turn. An Update
	// that would exceed it fails with store.ErrTooManyEvents, except the
	// one that moves the task into a terminal state, which is always
	// recorded.
	MaxEventsPerTask int
	// SweepInterval is how often the janitor drops expired tasks (default
	// the shorter of TTL and IdleTTL over 4, within [1s, 1m]). Expired tasks
	// are invisible at once anyway; the janitor only frees their memory.
	SweepInterval time.Duration
	// Now is the clock (default time.Now); tests pass a fake one.
	Now func() time.Time
}

// Store is the in-memory store.Store. Create one with New and Close it to
// stop its janitor.
type Store struct {
	opts Options

	mu     sync.RWMutex
	tasks  map[string]*entry
	owners map[string]*ownerIndex
	// sends are the sends claimed (sends.go), by owner and messageId.
	sends map[sendKey]*sentClaim
	// replies are the sends claimed before their answer (replies.go).
	replies  replies
	finished parking // terminal tasks
	idle     parking // interrupted tasks
	// bytes is the sum of every stored task's size (entry.size).
	bytes atomic.Int64

	closed   atomic.Bool
	closedCh chan struct{}
	janitor  sync.WaitGroup
}

var (
	_ store.Store    = (*Store)(nil)
	_ store.Notifier = (*Store)(nil)
	_ store.Sends    = (*Store)(nil)
)

// New returns an empty store and starts its janitor.
func New(opts Options) *Store {
	if opts.MaxTasks <= 0 {
		opts.MaxTasks = DefaultMaxTasks
	}
	if opts.TTL == 0 {
		opts.TTL = DefaultTTL
	}
	if opts.IdleTTL == 0 {
		opts.IdleTTL = DefaultIdleTTL
	}
	if opts.MaxEventsPerTask <= 0 {
		opts.MaxEventsPerTask = DefaultMaxEventsPerTask
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.MaxTasksPerOwner == 0 {
		opts.MaxTasksPerOwner = DefaultMaxTasksPerOwner
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ttl := shortestTTL(opts.TTL, opts.IdleTTL)
	if opts.SweepInterval <= 0 {
		opts.SweepInterval = min(max(ttl/4, time.Second), time.Minute)
	}
	s := &Store{
		opts:     opts,
		tasks:    make(map[string]*entry),
		owners:   make(map[string]*ownerIndex),
		sends:    make(map[sendKey]*sentClaim),
		closedCh: make(chan struct{}),
	}
	s.finished.ttl = opts.TTL
	s.idle.ttl = opts.IdleTTL
	if ttl > 0 {
		s.janitor.Add(1)
		go s.runJanitor()
	}
	return s
}

// shortestTTL returns the shortest positive TTL, or 0 if none is.
func shortestTTL(ttls ...time.Duration) time.Duration {
	var out time.Duration
	for _, d := range ttls {
		if d > 0 && (out == 0 || d < out) {
			out = d
		}
	}
	return out
}

func (s *Store) runJanitor() {
	defer s.janitor.Done()
	t := time.NewTicker(s.opts.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-s.closedCh:
			return
		case <-t.C:
			now := s.opts.Now().UnixNano()
			s.mu.Lock()
			s.sweepLocked(now)
			s.mu.Unlock()
			s.replies.mu.Lock()
			s.replies.sweep(now)
			s.replies.mu.Unlock()
		}
	}
}

// Close stops the janitor and wakes every blocked Events call with
// store.ErrClosed. Later calls fail with store.ErrClosed; closing twice is
// harmless.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	close(s.closedCh)
	s.janitor.Wait()
	// Streams waiting through EventsReady watch their tasks' channels,
	// not closedCh: wake them so they find the store closed.
	s.mu.RLock()
	for _, e := range s.tasks {
		e.mu.Lock()
		e.wake()
		e.mu.Unlock()
	}
	s.mu.RUnlock()
	return nil
}

// Bytes reports what the stored tasks are charged against MaxBytes.
func (s *Store) Bytes() int64 { return s.bytes.Load() }

// Len reports how many tasks the store holds, expired ones not yet swept
// included.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.tasks)
}

// Held reports how many tasks the store holds (expired ones not yet swept
// included), how many of them wait on the client (input-required,
// auth-required) and how many a run owns (submitted, working): what
// closing the store drops.
func (s *Store) Held() (total, waiting, running int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	total, waiting = len(s.tasks), s.idle.tasks.Len()
	return total, waiting, total - waiting - s.finished.tasks.Len()
}

// check is the common entry test of every operation.
func (s *Store) check(ctx context.Context) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return ctx.Err()
}

// lookup returns the stored entry for id, if any. It may be expired, or be
// removed right after: callers check both under the entry's lock.
func (s *Store) lookup(id string) *entry {
	s.mu.RLock()
	e := s.tasks[id]
	s.mu.RUnlock()
	return e
}

// expired reports whether a parked task is past its TTL at now.
func (s *Store) expired(e *entry, now int64) bool {
	d := e.deadline.Load()
	return d != notParked && now >= d
}

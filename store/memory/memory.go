// Package memory is the embedded, in-process store.Store: bounded in task
// count and per-task log length, with a TTL on finished tasks.
//
// Locking: s.mu guards the task and owner maps and the finished list; each
// task has its own mutex for its snapshot and event log; each owner has an
// index with its own mutex. The order is always s.mu, then a task's mutex,
// then an owner index's mutex, so that reads and updates of different tasks
// only share s.mu in read mode.
package memory

import (
	"container/list"
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddy-a2a/caddy-a2a/store"
)

// Defaults of Options.
const (
	DefaultMaxTasks         = 10000
	DefaultTTL              = time.Hour
	DefaultMaxEventsPerTask = 10000
)

// Options bound a Store. Zero values select the defaults.
type Options struct {
	// MaxTasks is how many tasks the store holds (default 10000). Creating
	// one more evicts the finished task updated longest ago; when no task is
	// finished, Create fails with store.ErrFull.
	MaxTasks int
	// TTL is how long a finished (terminal) task is kept after its last
	// update (default 1h; negative: until evicted by MaxTasks).
	TTL time.Duration
	// MaxEventsPerTask bounds a task's event log (default 10000). An Update
	// that would exceed it fails with store.ErrTooManyEvents, except the one
	// that moves the task into a terminal state, which is always recorded.
	MaxEventsPerTask int
	// SweepInterval is how often the janitor drops expired tasks (default
	// TTL/4, within [1s, 1m]). Expired tasks are invisible at once anyway;
	// the janitor only frees their memory.
	SweepInterval time.Duration
	// Now is the clock (default time.Now); tests pass a fake one.
	Now func() time.Time
}

// Store is the in-memory store.Store. Create one with New and Close it to
// stop its janitor.
type Store struct {
	opts Options

	mu       sync.RWMutex
	tasks    map[string]*entry
	owners   map[string]*ownerIndex
	finished *list.List // of *entry, least recently updated first

	closed   atomic.Bool
	closedCh chan struct{}
	janitor  sync.WaitGroup
}

var _ store.Store = (*Store)(nil)

// New returns an empty store and starts its janitor.
func New(opts Options) *Store {
	if opts.MaxTasks <= 0 {
		opts.MaxTasks = DefaultMaxTasks
	}
	if opts.TTL == 0 {
		opts.TTL = DefaultTTL
	}
	if opts.MaxEventsPerTask <= 0 {
		opts.MaxEventsPerTask = DefaultMaxEventsPerTask
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.SweepInterval <= 0 {
		opts.SweepInterval = min(max(opts.TTL/4, time.Second), time.Minute)
	}
	s := &Store{
		opts:     opts,
		tasks:    make(map[string]*entry),
		owners:   make(map[string]*ownerIndex),
		finished: list.New(),
		closedCh: make(chan struct{}),
	}
	if opts.TTL > 0 {
		s.janitor.Add(1)
		go s.runJanitor()
	}
	return s
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
			s.mu.Lock()
			s.sweepLocked(s.opts.Now().UnixNano())
			s.mu.Unlock()
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
	return nil
}

// Len reports how many tasks the store holds, expired ones not yet swept
// included.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.tasks)
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

// expired reports whether a finished task is past its TTL at now.
func (s *Store) expired(e *entry, now int64) bool {
	f := e.finishedAt.Load()
	return f != notFinished && s.opts.TTL > 0 && now-f >= int64(s.opts.TTL)
}

package filestore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/caddy-a2a/caddy-a2a/store"
)

// Defaults of Options.
const (
	DefaultTTL              = store.DefaultTTL
	DefaultIdleTTL          = store.DefaultIdleTTL
	DefaultMaxEventsPerTask = store.DefaultMaxEventsPerTask
	DefaultMaxTasksPerOwner = store.DefaultMaxTasksPerOwner
	// DefaultMaxBytes bounds a scope's tasks (1 GiB): a disk holds more
	// than a process's memory, but a file that only grows (bbolt reuses
	// its free pages, never gives them back) should not take the disk.
	DefaultMaxBytes = 1 << 30
)

// Options bound a Store. Zero values select the defaults.
type Options struct {
	// Scope is the sharing scope: the Stores of one directory see the
	// tasks of their own scope only. It must not hold a NUL byte.
	Scope string
	// TTL is how long a finished task is kept after its last write
	// (default 1h; negative: until evicted). Applied at read: expired
	// tasks are invisible at once, and a sweep deletes them.
	TTL time.Duration
	// IdleTTL is the same for a task waiting for its caller
	// (input-required, auth-required), default 24h. Running tasks never
	// expire.
	IdleTTL time.Duration
	// MaxBytes bounds what the scope's tasks are charged (header.charge:
	// their snapshots, event logs, push configs and claims as encoded,
	// plus a small overhead per task and record); default 1 GiB,
	// negative: no bound. Going over it evicts finished tasks, oldest
	// first; a Create that still does not fit evicts the creating
	// owner's waiting tasks, then fails with store.ErrFull. An Update is
	// never refused for bytes.
	MaxBytes int64
	// MaxTasksPerOwner bounds one owner's tasks as the memory store's
	// does (default 1000; negative: no bound; the anonymous owner "" is
	// not bounded).
	MaxTasksPerOwner int
	// MaxEventsPerTask bounds a task's log (default 20000); the write
	// that finishes a task is always accepted.
	MaxEventsPerTask int
	// SweepInterval is how often expired tasks are deleted (default the
	// shorter TTL over 4, within [1s, 1m]).
	SweepInterval time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Store is the file store.Store of one scope. Open one with Open and
// Close it to let go of the file.
type Store struct {
	opts   Options
	sh     *shared
	bucket []byte // the scope's top-level bucket

	secretsMu sync.Mutex
	secrets   map[string][]byte

	closed   atomic.Bool
	closedCh chan struct{}
	janitor  sync.WaitGroup
}

var (
	_ store.Store    = (*Store)(nil)
	_ store.Notifier = (*Store)(nil)
	_ store.Orphans  = (*Store)(nil)
	_ store.Secrets  = (*Store)(nil)
)

var errScopeNUL = errors.New("filestore: scope holds a NUL byte")

// Open opens the store of opts.Scope in dir (made if missing), in the
// file dir/tasks.db. Stores of one process share the file (shared.go);
// another process that holds it fails the Open with ErrLocked within a
// second.
func Open(dir string, opts Options) (*Store, error) {
	if strings.IndexByte(opts.Scope, 0) >= 0 {
		return nil, errScopeNUL
	}
	opts.fill()
	sh, err := acquire(dir)
	if err != nil {
		return nil, err
	}
	s := &Store{opts: opts, sh: sh, bucket: []byte(scopePrefix + opts.Scope), closedCh: make(chan struct{})}
	err = sh.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(s.bucket)
		if err != nil {
			return err
		}
		for _, name := range [][]byte{bHeaders, bSnaps, bEvents, bOwners, bLots, bPush, bClaims, bSecrets, bMeta, bSends, bTaskSends, bReplies, bReplyLapse, bReplyOwners} {
			if _, err := b.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		_ = sh.release()
		return nil, err
	}
	if shortestTTL(opts.TTL, opts.IdleTTL) > 0 {
		s.janitor.Add(1)
		go s.runJanitor()
	}
	return s, nil
}

func (o *Options) fill() {
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.IdleTTL == 0 {
		o.IdleTTL = DefaultIdleTTL
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxTasksPerOwner == 0 {
		o.MaxTasksPerOwner = DefaultMaxTasksPerOwner
	}
	if o.MaxEventsPerTask <= 0 {
		o.MaxEventsPerTask = DefaultMaxEventsPerTask
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.SweepInterval <= 0 {
		o.SweepInterval = min(max(shortestTTL(o.TTL, o.IdleTTL)/4, time.Second), time.Minute)
	}
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

// Path is the database file.
func (s *Store) Path() string { return s.sh.path }

// Close stops the janitor, wakes the scope's waiters (they read
// store.ErrClosed) and lets go of the file: the last Store of the
// process on it closes it. Closing twice is harmless.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	close(s.closedCh)
	s.janitor.Wait()
	s.sh.hub.wakeScope(s.opts.Scope)
	return s.sh.release()
}

// check is the common entry test of every operation.
func (s *Store) check(ctx context.Context) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return ctx.Err()
}

// key is task id's key in the hub.
func (s *Store) key(id string) string { return watchKey(s.opts.Scope, id) }

// view runs fn in a read transaction of the scope.
func (s *Store) view(fn func(x *txn) error) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	err := s.sh.db.View(func(tx *bolt.Tx) error {
		return fn(s.txn(tx))
	})
	return s.dbErr(err)
}

// write runs fn in a write transaction of the scope, committed (and
// synced) before it returns; then it wakes the waiters of the tasks fn
// appended to and of those it removed. A failed fn commits nothing.
func (s *Store) write(fn func(x *txn) error) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	w := &pending{s: s, fn: fn}
	s.sh.group.Do(w, s.sh.commit)
	if w.err != nil {
		return s.dbErr(w.err)
	}
	x := w.x
	for _, id := range x.appended {
		s.sh.hub.wake(s.key(id))
	}
	for _, id := range x.removed {
		s.sh.hub.drop(s.key(id))
	}
	return nil
}

// dbErr turns the error of a database another Store of the process
// closed under a call racing its Close into store.ErrClosed.
func (s *Store) dbErr(err error) error {
	if errors.Is(err, bolterrors.ErrDatabaseNotOpen) {
		return store.ErrClosed
	}
	return err
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
			_ = s.Sweep()
		}
	}
}

// Sweep deletes the expired tasks now, as the janitor does every
// SweepInterval, in transactions of at most sweepBatch tasks (a long
// one would hold up every write).
func (s *Store) Sweep() error {
	for {
		n := 0
		err := s.write(func(x *txn) error {
			n = x.sweep(sweepBatch)
			return nil
		})
		if err != nil || n < sweepBatch {
			return err
		}
	}
}

// sweepBatch is how many tasks one sweep transaction deletes at most.
const sweepBatch = 256

// Bytes reports what the scope's tasks are charged against MaxBytes.
func (s *Store) Bytes() (int64, error) {
	var n int64
	err := s.view(func(x *txn) error { n = x.bytes(); return nil })
	return n, err
}

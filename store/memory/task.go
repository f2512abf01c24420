package memory

import (
	"container/list"
	"context"
	"errors"
	"math"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// entry is one stored task.
type entry struct {
	id    string
	owner string
	idx   *ownerIndex

	// deadline is the store-clock time (unix ns) at which the task expires
	// (math.MaxInt64: never), or notParked. Written under s.mu (write) and
	// mu; read anywhere, so that List can skip expired tasks without
	// locking each, and Update can tell without s.mu whether it needs it
	// for writing.
	deadline atomic.Int64

	// lot is the parking lot holding the task (nil: none), elem its place
	// in lot.tasks; guarded by s.mu.
	lot  *parking
	elem *list.Element

	// Guarded by idx.mu: the fields List sorts and filters on.
	ixTS    int64
	ixState protocol.TaskState
	ixCtx   string

	mu   sync.Mutex
	gone bool // evicted or expired and swept
	// task and events are the snapshot and the log of a task that is not
	// finished; a finished one has them packed instead (pack.go), and task
	// and events are nil.
	task    *protocol.Task
	packed  *packed
	version uint64
	// events is the log; an event's id is its position from 1, formatted
	// only when a reader asks (eventID), so a write makes no id strings.
	events []protocol.Event
	// notify is closed and dropped on every append; waiters create it on
	// demand, so appends nobody waits for allocate nothing.
	notify chan struct{}

	cancelled bool
	cancelCh  chan struct{}
}

var errNoID = errors.New("memory: task has no id")

// tsKey is the sort key of a status timestamp. The zero time sorts first.
func tsKey(t *protocol.Task) int64 {
	if t.Status.Timestamp.IsZero() {
		return math.MinInt64
	}
	return t.Status.Timestamp.UnixNano()
}

// Create implements store.Store.
func (s *Store) Create(ctx context.Context, owner string, t *protocol.Task, events ...protocol.Event) (uint64, error) {
	if err := s.check(ctx); err != nil {
		return 0, err
	}
	if t == nil || t.ID == "" {
		return 0, errNoID
	}
	lot := s.lotFor(t.Status.State)
	if len(events) > s.opts.MaxEventsPerTask && !t.Status.State.Terminal() {
		return 0, store.ErrTooManyEvents
	}
	e := &entry{id: t.ID, owner: owner, version: 1}
	if t.Status.State.Terminal() {
		e.packed = pack(t, events)
	} else {
		e.task = t
		e.appendEvents(events)
	}
	e.ixTS, e.ixState, e.ixCtx = tsKey(t), t.Status.State, t.ContextID
	e.deadline.Store(notParked)

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return 0, store.ErrClosed
	}
	now := s.opts.Now().UnixNano()
	if old, ok := s.tasks[t.ID]; ok {
		if !s.expired(old, now) {
			return 0, store.ErrExists
		}
		s.removeLocked(old)
	}
	if len(s.tasks) >= s.opts.MaxTasks {
		s.sweepLocked(now)
		if len(s.tasks) >= s.opts.MaxTasks && !s.evictOldestLocked() {
			return 0, store.ErrFull
		}
	}
	idx := s.owners[owner]
	if idx == nil {
		idx = &ownerIndex{}
		s.owners[owner] = idx
	}
	e.idx = idx
	idx.mu.Lock()
	idx.insert(e)
	idx.mu.Unlock()
	s.parkLocked(e, lot, now)
	s.tasks[t.ID] = e
	return 1, nil
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, owner, id string) (*store.Record, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	e := s.lookup(id)
	if e == nil || e.owner != owner {
		return nil, store.ErrNotFound
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gone || s.expired(e, s.opts.Now().UnixNano()) {
		return nil, store.ErrNotFound
	}
	t, err := e.snapshot()
	if err != nil {
		return nil, err
	}
	r := &store.Record{Task: t, Owner: e.owner, Version: e.version}
	if n := e.eventCount(); n > 0 {
		r.LastEventID = eventID(n)
	}
	return r, nil
}

// snapshot returns the task, unpacking a finished one; e.mu must be held.
func (e *entry) snapshot() (*protocol.Task, error) {
	if e.packed != nil {
		return e.packed.task()
	}
	return e.task, nil
}

// eventCount is the length of the log; e.mu must be held.
func (e *entry) eventCount() int {
	if e.packed != nil {
		return e.packed.events
	}
	return len(e.events)
}

// eventsFrom returns the log after its first n events; e.mu must be held.
func (e *entry) eventsFrom(n int) ([]protocol.Event, error) {
	if e.packed != nil {
		return e.packed.eventsFrom(n)
	}
	return e.events[n:], nil
}

// unpack turns a packed entry back into values, for an Update of a
// finished task (rare: the handler never writes one); e.mu must be held.
func (e *entry) unpack() error {
	if e.packed == nil {
		return nil
	}
	t, evs, err := e.packed.unpackAll()
	if err != nil {
		return err
	}
	e.task, e.events, e.packed = t, evs, nil
	return nil
}

// Update implements store.Store.
func (s *Store) Update(ctx context.Context, id string, version uint64, t *protocol.Task, events ...protocol.Event) (uint64, string, error) {
	if err := s.check(ctx); err != nil {
		return 0, "", err
	}
	if t == nil || t.ID != id {
		return 0, "", errors.New("memory: Update task id does not match")
	}
	nt, nev := t, events
	terminal := t.Status.State.Terminal()
	lot := s.lotFor(t.Status.State)

	e := s.lookup(id)
	if e == nil {
		return 0, "", store.ErrNotFound
	}
	// A finishing task is packed here, before any store lock is taken:
	// its log only grows with its version, so if the version still
	// matches below, the log read now is the whole log.
	var pk *packed
	var pkLen int
	if terminal {
		e.mu.Lock()
		prior, cur, wasPacked := e.events, e.version, e.packed != nil
		e.mu.Unlock()
		if cur == version && !wasPacked {
			pk, pkLen = pack(nt, prior, nev), len(prior)
		}
	}
	// Parking a task, moving it within or between lots, or taking it out
	// needs s.mu for writing; the updates of running tasks (nearly all of
	// them) share it. deadline only changes under the write lock, so it is
	// stable once the read lock is held.
	write := lot != nil || e.deadline.Load() != notParked
	if write {
		s.mu.Lock()
		defer s.mu.Unlock()
	} else {
		s.mu.RLock()
		if e.deadline.Load() != notParked {
			s.mu.RUnlock()
			return s.Update(ctx, id, version, t, events...)
		}
		defer s.mu.RUnlock()
	}
	if s.closed.Load() {
		return 0, "", store.ErrClosed
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	now := s.opts.Now().UnixNano()
	if e.gone || s.expired(e, now) {
		return 0, "", store.ErrNotFound
	}
	if e.version != version {
		return 0, "", store.ErrConflict
	}
	wasTerminal := e.ixState.Terminal()
	if e.eventCount()+len(nev) > s.opts.MaxEventsPerTask && !(terminal && !wasTerminal) {
		return 0, "", store.ErrTooManyEvents
	}
	if err := e.unpack(); err != nil {
		return 0, "", err
	}

	e.version++
	var last string
	if len(nev) > 0 {
		last = eventID(len(e.events) + len(nev))
	}
	switch {
	case !terminal:
		e.task = nt
		e.events = append(e.events, nev...)
	case pk != nil && pkLen == len(e.events):
		e.task, e.events, e.packed = nil, nil, pk
	default:
		e.task, e.events, e.packed = nil, nil, pack(nt, e.events, nev)
	}
	if len(nev) > 0 {
		e.wake()
	}

	e.idx.mu.Lock()
	e.idx.move(e, tsKey(nt))
	e.ixState, e.ixCtx = nt.Status.State, nt.ContextID
	e.idx.mu.Unlock()

	if write {
		s.parkLocked(e, lot, now)
	}
	return e.version, last, nil
}

// appendEvents starts a new entry's log with events (no waiters yet),
// with room for the few a run adds next.
func (e *entry) appendEvents(events []protocol.Event) {
	e.events = append(make([]protocol.Event, 0, len(events)+3), events...)
}

// eventID is the id of the event at position n (from 1) of a log.
func eventID(n int) string { return strconv.Itoa(n) }

// wake releases every Events call waiting on e; e.mu must be held.
func (e *entry) wake() {
	if e.notify != nil {
		close(e.notify)
		e.notify = nil
	}
}

package memory

import (
	"container/list"
	"context"
	"errors"
	"math"
	"slices"
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
	// task and log are the snapshot and the event log of a task that is
	// not finished; a finished one has them packed instead (pack.go), and
	// task and log are empty.
	task    *protocol.Task
	log     eventLog
	packed  *packed
	version uint64
	// size is what the task is charged against Options.MaxBytes (see
	// charge); it changes under mu, and the store's total with it.
	size int64
	// notify is closed and dropped on every append; waiters create it on
	// demand, so appends nobody waits for allocate nothing.
	notify chan struct{}

	cancelled bool
	cancelCh  chan struct{}

	// sends are the messageIds of the sends the task's writes claimed
	// (sends.go); guarded by s.mu.
	sends []string

	// push are the task's push configs, claims the delivery claims made
	// of it and claimBytes what they are charged (push.go); under mu.
	push       []store.PushConfig
	claims     map[string]struct{}
	claimBytes int
}

var errNoID = errors.New("memory: task has no id")

// Overheads added to content bytes (protocol's Size) when a task is
// charged against MaxBytes: roughly what the Go values around the content
// take (the entry and its task, an event of the log), so that many small
// tasks are not counted as free.
const (
	taskOverhead  = 512
	eventOverhead = 64
)

// charge is what e holds: its packed bytes, or its snapshot and log
// estimated by content size plus overheads; e.mu must be held.
func (e *entry) charge() int64 {
	if e.packed != nil {
		return taskOverhead + int64(len(e.packed.data)) + e.pushBytes()
	}
	return taskOverhead + int64(e.task.Size()+e.log.bytes+eventOverhead*len(e.log.evs)) + e.pushBytes()
}

// tsKey is the sort key of a status timestamp. The zero time sorts first.
func tsKey(t *protocol.Task) int64 {
	if t.Status.Timestamp.IsZero() {
		return math.MinInt64
	}
	return t.Status.Timestamp.UnixNano()
}

// resumedLog returns the log of a task that takes a new turn after
// waiting for its client: l with its last turn compacted (store.Compact),
// then events, in arrays of its own, so it can be built before any lock
// is taken while readers use l. Compaction waits for the next turn
// because until then a stream may still be relaying that turn's chunks,
// and every reader that keeps up sees the chunks as they were written;
// only a reader a whole turn behind gets the merged artifact.
func resumedLog(l eventLog, events []protocol.Event) eventLog {
	l.compact()
	l.evs = slices.Clip(l.evs)
	l.pos = slices.Clip(l.pos)
	l.add(events)
	return l
}

// Create implements store.Store.
func (s *Store) Create(ctx context.Context, owner string, t *protocol.Task, events ...protocol.Event) (uint64, error) {
	return s.create(ctx, owner, nil, t, events)
}

// CreateSend implements store.Sends.
func (s *Store) CreateSend(ctx context.Context, owner string, send store.Send, t *protocol.Task, events ...protocol.Event) (uint64, error) {
	return s.create(ctx, owner, &send, t, events)
}

// create is Create, claiming send unless it is nil.
func (s *Store) create(ctx context.Context, owner string, send *store.Send, t *protocol.Task, events []protocol.Event) (uint64, error) {
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
		e.packed = pack(t, &eventLog{}, events)
	} else {
		e.task = t
		e.log.add(events)
	}
	e.size = e.charge()
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
	if send != nil {
		if err := s.claimedLocked(owner, send, now); err != nil {
			return 0, err
		}
	}
	idx := s.owners[owner]
	if err := s.makeRoomLocked(owner, idx, e.size, now); err != nil {
		return 0, err
	}
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
	s.bytes.Add(e.size)
	if send != nil {
		s.claimLocked(owner, send, e, now)
	}
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
	t, err := e.snapshot(store.View{})
	if err != nil {
		return nil, err
	}
	r := &store.Record{Task: t, Owner: e.owner, Version: e.version}
	if n := e.lastEvent(); n > 0 {
		r.LastEventID = eventID(n)
	}
	return r, nil
}

// snapshot returns the task, unpacking what v keeps of a finished one;
// e.mu must be held.
func (e *entry) snapshot(v store.View) (*protocol.Task, error) {
	if e.packed != nil {
		return e.packed.task(v)
	}
	return e.task, nil
}

// lastEvent is the position of the newest event in the log (0: none);
// e.mu must be held.
func (e *entry) lastEvent() int {
	if e.packed != nil {
		return e.packed.last
	}
	return e.log.last
}

// logLen is how many events the log holds; e.mu must be held.
func (e *entry) logLen() int {
	if e.packed != nil {
		return e.packed.events
	}
	return len(e.log.evs)
}

// storedAfter returns the events whose position is past n, with their
// ids; e.mu must be held.
func (e *entry) storedAfter(n int) ([]store.StoredEvent, error) {
	if e.packed != nil {
		evs, at, err := e.packed.eventsAfter(n)
		if err != nil {
			return nil, err
		}
		out := make([]store.StoredEvent, len(evs))
		for i := range out {
			out[i] = store.StoredEvent{ID: eventID(at[i]), Event: evs[i]}
		}
		return out, nil
	}
	i := e.log.after(n)
	out := make([]store.StoredEvent, len(e.log.evs)-i)
	for k := range out {
		out[k] = store.StoredEvent{ID: eventID(e.log.at(i + k)), Event: e.log.evs[i+k]}
	}
	return out, nil
}

// unpack turns a packed entry back into values, for an Update of a
// finished task (rare: the handler never writes one); e.mu must be held.
func (e *entry) unpack() error {
	if e.packed == nil {
		return nil
	}
	t, l, err := e.packed.unpackAll()
	if err != nil {
		return err
	}
	e.task, e.log, e.packed = t, l, nil
	return nil
}

// Update implements store.Store.
func (s *Store) Update(ctx context.Context, id string, version uint64, t *protocol.Task, events ...protocol.Event) (uint64, string, error) {
	return s.updateSend(ctx, "", nil, id, version, t, events)
}

// UpdateSend implements store.Sends.
func (s *Store) UpdateSend(ctx context.Context, owner string, send store.Send, id string, version uint64, t *protocol.Task, events ...protocol.Event) (uint64, string, error) {
	return s.updateSend(ctx, owner, &send, id, version, t, events)
}

// updateSend is Update, by owner claiming send unless send is nil.
func (s *Store) updateSend(ctx context.Context, owner string, send *store.Send, id string, version uint64, t *protocol.Task, events []protocol.Event) (uint64, string, error) {
	v, last, err := s.update(ctx, owner, send, id, version, t, events)
	if err == nil && s.opts.MaxBytes > 0 && s.bytes.Load() > s.opts.MaxBytes {
		s.shrink()
	}
	return v, last, err
}

func (s *Store) update(ctx context.Context, owner string, send *store.Send, id string, version uint64, t *protocol.Task, events []protocol.Event) (uint64, string, error) {
	if err := s.check(ctx); err != nil {
		return 0, "", err
	}
	if t == nil || t.ID != id {
		return 0, "", errors.New("memory: Update task id does not match")
	}
	nt, nev := t, events
	st := t.Status.State
	lot := s.lotFor(st)

	e := s.lookup(id)
	if e == nil {
		return 0, "", store.ErrNotFound
	}
	// A finishing task is packed, and a waiting one taking a new turn has
	// its last turn compacted (resumedLog), here, before any store lock
	// is taken: its log only grows with its version, so if the version
	// still matches below, the log read now is the whole log.
	var next *eventLog
	var pk *packed
	e.mu.Lock()
	prior, cur, wasPacked, resuming := e.log, e.version, e.packed != nil, e.ixState.Interrupted() && !st.Terminal() && !st.Interrupted()
	e.mu.Unlock()
	if cur == version && !wasPacked {
		switch {
		case st.Terminal():
			pk = pack(nt, &prior, nev)
		case resuming:
			l := resumedLog(prior, nev)
			next = &l
		}
	}
	// Parking a task, moving it within or between lots, or taking it out
	// needs s.mu for writing; the updates of running tasks (nearly all of
	// them) share it. deadline only changes under the write lock, so it is
	// stable once the read lock is held.
	// A claim is made under the write lock too (the claims are s.mu's).
	write := send != nil || lot != nil || e.deadline.Load() != notParked
	if write {
		s.mu.Lock()
		defer s.mu.Unlock()
	} else {
		s.mu.RLock()
		if e.deadline.Load() != notParked {
			s.mu.RUnlock()
			return s.update(ctx, owner, send, id, version, t, events)
		}
		defer s.mu.RUnlock()
	}
	if s.closed.Load() {
		return 0, "", store.ErrClosed
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	now := s.opts.Now().UnixNano()
	if e.gone || s.expired(e, now) || (send != nil && e.owner != owner) {
		return 0, "", store.ErrNotFound
	}
	if send != nil {
		// A retry finds its claim whatever the version has become.
		if err := s.claimedLocked(owner, send, now); err != nil {
			return 0, "", err
		}
	}
	if e.version != version {
		return 0, "", store.ErrConflict
	}
	wasTerminal := e.ixState.Terminal()
	if e.logLen()+len(nev) > s.opts.MaxEventsPerTask && !(st.Terminal() && !wasTerminal) {
		return 0, "", store.ErrTooManyEvents
	}
	if err := e.unpack(); err != nil {
		return 0, "", err
	}

	e.version++
	var last string
	if len(nev) > 0 {
		last = eventID(e.log.last + len(nev))
	}
	switch {
	case pk != nil:
		e.task, e.log, e.packed = nil, eventLog{}, pk
	case next != nil:
		e.task, e.log = nt, *next
	case st.Terminal():
		e.task, e.log, e.packed = nil, eventLog{}, pack(nt, &e.log, nev)
	case resuming:
		e.task, e.log = nt, resumedLog(e.log, nev)
	default:
		e.task = nt
		e.log.add(nev)
	}
	if len(nev) > 0 {
		e.wake()
	}
	size := e.charge()
	s.bytes.Add(size - e.size)
	e.size = size

	e.idx.mu.Lock()
	e.idx.move(e, tsKey(nt))
	e.ixState, e.ixCtx = nt.Status.State, nt.ContextID
	e.idx.mu.Unlock()

	if write {
		s.parkLocked(e, lot, now)
	}
	if send != nil {
		s.claimLocked(owner, send, e, now)
	}
	return e.version, last, nil
}

// wake releases every Events call waiting on e; e.mu must be held.
func (e *entry) wake() {
	if e.notify != nil {
		close(e.notify)
		e.notify = nil
	}
}

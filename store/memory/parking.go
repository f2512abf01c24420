package memory

import (
	"container/list"
	"math"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// notParked is entry.deadline of a task no parking lot holds: one a run
// owns (submitted, working), which never expires and is never evicted.
const notParked = math.MinInt64

// parking holds the tasks no run owns any more, of one kind (finished, or
// waiting on the client), in the order of their last update: both the TTL
// sweep and the eviction of the least recently updated one take them from
// the front. One TTL per lot keeps the deadlines in list order too, so a
// sweep stops at the first task not yet expired.
type parking struct {
	ttl   time.Duration // <= 0: never expire, only evicted
	tasks list.List     // of *entry, least recently updated first
}

// deadline is the store-clock time (unix ns) at which a task parked at now
// expires; math.MaxInt64 (never) without a TTL.
func (p *parking) deadline(now int64) int64 {
	if p.ttl <= 0 || now > math.MaxInt64-int64(p.ttl) {
		return math.MaxInt64
	}
	return now + int64(p.ttl)
}

// lotFor returns the parking lot of a task in state st, or nil for a task a
// run owns.
func (s *Store) lotFor(st protocol.TaskState) *parking {
	switch {
	case st.Terminal():
		return &s.finished
	case st.Interrupted():
		return &s.idle
	}
	return nil
}

// lots are the parking lots in eviction order: a finished task is worth
// less than one a client may still answer.
func (s *Store) lots() [2]*parking { return [2]*parking{&s.finished, &s.idle} }

// parkLocked records an update of e at now: e goes to the back of lot (the
// most recently updated) with a fresh deadline, or, with lot nil, out of any
// lot. s.mu must be held for writing, and e.mu too once e is in s.tasks.
func (s *Store) parkLocked(e *entry, lot *parking, now int64) {
	if e.lot != nil && e.lot != lot {
		e.lot.tasks.Remove(e.elem)
		e.lot, e.elem = nil, nil
	}
	if lot == nil {
		e.deadline.Store(notParked)
		return
	}
	e.deadline.Store(lot.deadline(now))
	if e.elem != nil {
		lot.tasks.MoveToBack(e.elem)
	} else {
		e.lot, e.elem = lot, lot.tasks.PushBack(e)
	}
}

package memory

import (
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// sweepLocked drops the parked tasks whose TTL has passed; s.mu must be
// held for writing.
func (s *Store) sweepLocked(now int64) {
	for _, lot := range s.lots() {
		for el := lot.tasks.Front(); el != nil; el = lot.tasks.Front() {
			e := el.Value.(*entry)
			if !s.expired(e, now) {
				break
			}
			s.removeLocked(e)
		}
	}
}

// makeRoomLocked makes room for a new task of size bytes owned by owner,
// whose index is idx (nil: an owner with no tasks yet): within that owner's
// quota, then within the store's task count and byte budget. It evicts
// only finished tasks of any owner and interrupted tasks of this owner,
// oldest first, so that no caller can push another's waiting conversation
// out. s.mu must be held for writing.
func (s *Store) makeRoomLocked(owner string, idx *ownerIndex, size int64, now int64) error {
	swept := false
	sweep := func() {
		if !swept {
			s.sweepLocked(now)
			swept = true
		}
	}
	if max := s.opts.MaxTasksPerOwner; max > 0 && idx != nil && owner != "" {
		for idx.len() >= max {
			sweep()
			if idx.len() < max {
				break
			}
			if !s.evictOwnLocked(idx, protocol.TaskState.Terminal) && !s.evictOwnLocked(idx, protocol.TaskState.Interrupted) {
				return &store.LimitError{Err: store.ErrQuota, Limit: "max_tasks_per_owner", Max: int64(max)}
			}
		}
	}
	// over names the bound a new task would break ("" : none).
	over := func() string {
		switch {
		case len(s.tasks) >= s.opts.MaxTasks:
			return "max_tasks"
		case s.opts.MaxBytes > 0 && s.bytes.Load()+size > s.opts.MaxBytes:
			return "max_bytes"
		}
		return ""
	}
	for limit := over(); limit != ""; limit = over() {
		sweep()
		if over() == "" {
			break
		}
		if !s.evictFrontLocked(&s.finished) && !s.evictOwnerFrontLocked(&s.idle, owner) {
			max := int64(s.opts.MaxTasks)
			if limit == "max_bytes" {
				max = s.opts.MaxBytes
			}
			return &store.LimitError{Err: store.ErrFull, Limit: limit, Max: max}
		}
	}
	return nil
}

// shrink evicts finished tasks, oldest first, until the store is within
// MaxBytes again or none is left; Update calls it after an update took
// the store over (the update itself stands).
func (s *Store) shrink() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(s.opts.Now().UnixNano())
	for s.bytes.Load() > s.opts.MaxBytes && s.evictFrontLocked(&s.finished) {
	}
}

// evictFrontLocked drops the least recently updated task of lot; false if
// lot is empty. s.mu must be held for writing.
func (s *Store) evictFrontLocked(lot *parking) bool {
	el := lot.tasks.Front()
	if el == nil {
		return false
	}
	s.removeLocked(el.Value.(*entry))
	return true
}

// evictOwnerFrontLocked drops the least recently updated task of lot that
// owner owns; false if there is none. It walks the lot: it runs only when
// the store is full of running and waiting tasks. s.mu must be held for
// writing.
func (s *Store) evictOwnerFrontLocked(lot *parking, owner string) bool {
	for el := lot.tasks.Front(); el != nil; el = el.Next() {
		if e := el.Value.(*entry); e.owner == owner {
			s.removeLocked(e)
			return true
		}
	}
	return false
}

// evictOwnLocked drops the owner's task in a state st is true for whose
// status changed longest ago; false if it has none. s.mu must be held for
// writing.
func (s *Store) evictOwnLocked(idx *ownerIndex, is func(protocol.TaskState) bool) bool {
	idx.mu.RLock()
	var victim *entry
	for _, e := range idx.items {
		if is(e.ixState) && e.lot != nil {
			victim = e
			break
		}
	}
	idx.mu.RUnlock()
	if victim == nil {
		return false
	}
	s.removeLocked(victim)
	return true
}

// removeLocked deletes e from every structure and wakes its waiters, who
// then see it gone (store.ErrNotFound). s.mu must be held for writing.
func (s *Store) removeLocked(e *entry) {
	s.dropSendsLocked(e)
	e.mu.Lock()
	e.gone = true
	e.wake()
	s.bytes.Add(-e.size)
	e.mu.Unlock()
	if s.tasks[e.id] == e {
		delete(s.tasks, e.id)
	}
	if e.lot != nil {
		e.lot.tasks.Remove(e.elem)
		e.lot, e.elem = nil, nil
	}
	idx := e.idx
	idx.mu.Lock()
	idx.remove(e)
	empty := len(idx.items) == 0
	idx.mu.Unlock()
	if empty && s.owners[e.owner] == idx {
		delete(s.owners, e.owner)
	}
}

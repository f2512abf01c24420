package memory

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

// evictOldestLocked drops the least recently updated finished task, or
// failing that the least recently updated interrupted one; false when every
// task is owned by a run. s.mu must be held for writing.
func (s *Store) evictOldestLocked() bool {
	for _, lot := range s.lots() {
		if el := lot.tasks.Front(); el != nil {
			s.removeLocked(el.Value.(*entry))
			return true
		}
	}
	return false
}

// removeLocked deletes e from every structure and wakes its waiters, who
// then see it gone (store.ErrNotFound). s.mu must be held for writing.
func (s *Store) removeLocked(e *entry) {
	e.mu.Lock()
	e.gone = true
	e.wake()
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

package memory

// s.finished holds the finished tasks in the order of their last update, so
// both the TTL sweep and the eviction of the least recently updated finished
// task take them from the front.

// sweepLocked drops the finished tasks whose TTL has passed; s.mu must be
// held for writing.
func (s *Store) sweepLocked(now int64) {
	if s.opts.TTL <= 0 {
		return
	}
	for el := s.finished.Front(); el != nil; el = s.finished.Front() {
		e := el.Value.(*entry)
		if !s.expired(e, now) {
			return
		}
		s.removeLocked(e)
	}
}

// evictOldestLocked drops the least recently updated finished task; false
// when there is none. s.mu must be held for writing.
func (s *Store) evictOldestLocked() bool {
	el := s.finished.Front()
	if el == nil {
		return false
	}
	s.removeLocked(el.Value.(*entry))
	return true
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
	if e.finElem != nil {
		s.finished.Remove(e.finElem)
		e.finElem = nil
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

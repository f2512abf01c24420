// Package runs is the set of tasks a process runs, as the shared stores
// (redisstore, pgstore) keep it to renew their leases: for each task the
// version of its last write here, so that the end of one run (Abandon of
// its version) leaves alone a later turn's run of the task.
package runs

import "sync"

// Set is the tasks this process runs. The zero Set is empty and ready.
type Set struct {
	mu  sync.Mutex
	ids map[string]uint64
}

// Note keeps the set in step with a write of task id at version: a
// running task is held, a settled one dropped.
func (s *Set) Note(id string, running bool, version uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !running {
		delete(s.ids, id)
		return
	}
	if s.ids == nil {
		s.ids = map[string]uint64{}
	}
	s.ids[id] = version
}

// Abandon drops task id if its last write here was version.
func (s *Set) Abandon(id string, version uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.ids[id]; ok && v == version {
		delete(s.ids, id)
	}
}

// IDs returns the tasks held, in no order.
func (s *Set) IDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.ids))
	for id := range s.ids {
		ids = append(ids, id)
	}
	return ids
}

// Drop drops the tasks of ids that keep(i) refuses, i their index: the
// ones whose lease the store found gone (settled on another process).
func (s *Set) Drop(ids []string, keep func(i int) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, id := range ids {
		if !keep(i) {
			delete(s.ids, id)
		}
	}
}

// Has reports whether task id is held.
func (s *Set) Has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.ids[id]
	return ok
}

package memory

import (
	"context"

	"github.com/caddy-a2a/caddy-a2a/store"
)

// parseEventID turns an event id into the position it names (ids are
// store.EventID's: compaction leaves gaps in them, see eventLog).
func parseEventID(after string) (int, error) {
	n, err := store.EventNumber(after)
	return int(n), err
}

// Events implements store.Store. Waiters block on the task's notify channel,
// which an append closes and drops: any number of waiters wake with no
// goroutine or channel of their own. An id past the end of the log is valid
// (it waits for events beyond it).
func (s *Store) Events(ctx context.Context, id, after string, wait bool) ([]store.StoredEvent, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	n, err := parseEventID(after)
	if err != nil {
		return nil, err
	}
	e := s.lookup(id)
	if e == nil {
		return nil, store.ErrNotFound
	}
	for {
		e.mu.Lock()
		if e.gone || s.expired(e, s.opts.Now().UnixNano()) {
			e.mu.Unlock()
			return nil, store.ErrNotFound
		}
		if n < e.lastEvent() {
			out, err := e.storedAfter(n)
			e.mu.Unlock()
			return out, err
		}
		if !wait {
			e.mu.Unlock()
			return nil, nil
		}
		if e.notify == nil {
			e.notify = make(chan struct{})
		}
		ch := e.notify
		e.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.closedCh:
			return nil, store.ErrClosed
		}
	}
}

// EventsReady implements store.Notifier with the task's notify channel,
// the one blocked Events calls wait on: any number of streams share it.
func (s *Store) EventsReady(id, after string) (<-chan struct{}, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	n, err := parseEventID(after)
	if err != nil {
		return nil, err
	}
	e := s.lookup(id)
	if e == nil {
		return nil, store.ErrNotFound
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gone || n < e.lastEvent() || s.closed.Load() {
		// Ready now: Events reports the events, or that the task is gone
		// or the store closed.
		return closedChan, nil
	}
	if e.notify == nil {
		e.notify = make(chan struct{})
	}
	return e.notify, nil
}

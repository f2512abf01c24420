package filestore

import (
	"bytes"
	"context"
	"encoding/binary"

	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/internal/pack"
)

// eventID and parseEventID are the ids of the log's events
// (store.EventID's form).
func eventID(n uint64) string { return store.EventID(n) }

func parseEventID(after string) (uint64, error) { return store.EventNumber(after) }

// Events implements store.Store. A waiting call takes the task's channel
// in the hub, reads again (an append committed between the first read
// and the wait is seen), then blocks until an append closes it.
func (s *Store) Events(ctx context.Context, id, after string, wait bool) ([]store.StoredEvent, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	n, err := parseEventID(after)
	if err != nil {
		return nil, err
	}
	evs, err := s.eventsAfter(id, n)
	for err == nil && len(evs) == 0 && wait {
		ch := s.sh.hub.wait(s.key(id))
		if evs, err = s.eventsAfter(id, n); err != nil || len(evs) > 0 {
			break
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.closedCh:
			return nil, store.ErrClosed
		}
		evs, err = s.eventsAfter(id, n)
	}
	return evs, err
}

// eventsAfter reads task id's events past position n.
func (s *Store) eventsAfter(id string, n uint64) ([]store.StoredEvent, error) {
	var out []store.StoredEvent
	err := s.view(func(x *txn) error {
		h, err := x.live(id, nil)
		if err != nil || n >= h.last {
			return err
		}
		out = make([]store.StoredEvent, 0, h.last-n)
		p := lp(id)
		c := x.events.Cursor()
		for k, v := c.Seek(eventKey(id, n+1)); k != nil && bytes.HasPrefix(k, p); k, v = c.Next() {
			ev, err := pack.DecodeEvent(v, id)
			if err != nil {
				return err
			}
			out = append(out, store.StoredEvent{ID: eventID(binary.BigEndian.Uint64(k[len(p):])), Event: ev})
		}
		return nil
	})
	return out, err
}

// EventsReady implements store.Notifier with the task's channel in the
// hub, taken before the log is read so that no append is missed.
func (s *Store) EventsReady(id, after string) (<-chan struct{}, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	n, err := parseEventID(after)
	if err != nil {
		return nil, err
	}
	ch := s.sh.hub.wait(s.key(id))
	var last uint64
	err = s.view(func(x *txn) error {
		h, err := x.live(id, nil)
		if err == nil {
			last = h.last
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if n < last || s.closed.Load() {
		return closedChan, nil
	}
	return ch, nil
}

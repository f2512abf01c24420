package pgstore

import (
	"context"
	"slices"
	"strconv"

	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/internal/pack"
)

// afterNum turns an event id (store.EventID's form) into the number of
// the last event not wanted: 0 for "" (from the first).
func afterNum(after string) (int64, error) {
	n, err := store.EventNumber(after)
	return int64(n), err
}

// read returns the events of task id after the event numbered after, at
// most limit (0: all); store.ErrNotFound if the task is gone. One
// statement, so the task's presence and its log are of one snapshot.
func (s *Store) read(ctx context.Context, id string, after int64, limit int) ([]store.StoredEvent, error) {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	var lim *int64
	if limit > 0 {
		l := int64(limit)
		lim = &l
	}
	rows, err := s.pool.Query(c, s.sql(`SELECT e.seq, e.data FROM {s}.tasks t
LEFT JOIN {s}.events e ON e.scope = t.scope AND e.task_id = t.id AND e.seq > $3
WHERE t.scope = $1 AND t.id = $2 AND `+live+`
ORDER BY e.seq LIMIT $4`), s.scope, id, after, lim)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	defer rows.Close()
	found := false
	var out []store.StoredEvent
	for rows.Next() {
		found = true
		var (
			seq  *int64
			data []byte
		)
		if err := rows.Scan(&seq, &data); err != nil {
			return nil, s.fail(ctx, err)
		}
		if seq == nil {
			continue // the task, with nothing after
		}
		ev, err := pack.DecodeEvent(data, id)
		if err != nil {
			return nil, err
		}
		out = append(out, store.StoredEvent{ID: strconv.FormatInt(*seq, 10), Event: ev})
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail(ctx, err)
	}
	if !found {
		return nil, store.ErrNotFound
	}
	return out, nil
}

// Events implements store.Store. A wait takes the task's wake channel
// (listener) before it reads: an append committed after the read
// closes it, so one read per wake is enough.
func (s *Store) Events(ctx context.Context, id, after string, wait bool) ([]store.StoredEvent, error) {
	n, err := afterNum(after)
	if err != nil {
		return nil, err
	}
	if !wait {
		return s.read(ctx, id, n, 0)
	}
	for {
		if s.closed.Load() {
			return nil, store.ErrClosed
		}
		ch, gen := s.lis.tail(id)
		if evs, err := s.readShared(ctx, id, n, gen); err != nil || len(evs) > 0 {
			return evs, err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.closedCh:
			return nil, store.ErrClosed
		}
	}
}

// readShared is read(id, after) for a waiter holding the wait channel
// numbered gen: the waiters of one task that took one channel share one
// read (100 streams of a task woken by a chunk make one query, not 100).
// Sharing is safe within a channel's number: the shared read began after
// the channel was made, so whatever it misses was committed after that,
// and its notification closes the channel every sharer waits on next.
func (s *Store) readShared(ctx context.Context, id string, after int64, gen uint64) ([]store.StoredEvent, error) {
	key := strconv.FormatUint(gen, 10) + " " + strconv.FormatInt(after, 10) + " " + id
	ch := s.reads.DoChan(key, func() (any, error) { return s.read(context.Background(), id, after, 0) })
	select {
	case r := <-ch:
		if r.Err != nil {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return nil, r.Err
		}
		// Each caller its own slice (a caller may append to it); the
		// events are shared, as the store's contract allows.
		return slices.Clone(r.Val.([]store.StoredEvent)), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// EventsReady implements store.Notifier with the channel blocked Events
// calls wait on: any number of streams share it. The sweep closes it
// too, so that a stream whose task expired finds out; a wake with
// nothing to read is possible and harmless.
func (s *Store) EventsReady(id, after string) (<-chan struct{}, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	n, err := afterNum(after)
	if err != nil {
		return nil, err
	}
	ch, _ := s.lis.tail(id)
	evs, err := s.read(context.Background(), id, n, 1)
	if err != nil {
		return nil, err
	}
	if len(evs) > 0 {
		return closedChan, nil
	}
	return ch, nil
}

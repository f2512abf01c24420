package redisstore

import (
	"context"
	"strconv"

	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/internal/pack"
)

// Event ids are the events' numbers in the task's log, from 1, in
// decimal, as the memory store numbers them: ordered, and the same for
// every replica reading the log.

// xstart turns an event id (store.EventID's form) into the number of the
// last event not wanted: "0" for "" (from the first).
func xstart(after string) (string, error) {
	n, err := store.EventNumber(after)
	if err != nil {
		return "", err
	}
	return store.EventID(n), nil
}

// read returns the events of task id after the event numbered start (as
// xstart gives it), at most count (0: all); store.ErrNotFound if the task
// is gone.
func (s *Store) read(ctx context.Context, id, start string, count int) ([]store.StoredEvent, error) {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	keys := taskKeys(s.base, id)
	args := []string{start}
	if count > 0 {
		args = append(args, strconv.Itoa(count))
	}
	vals, err := s.events.Exec(c, s.cli(), keys[:1], args).ToArray()
	if isNil(err) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	if len(vals) == 0 {
		return nil, nil
	}
	first, err := strconv.ParseUint(start, 10, 64)
	if err != nil {
		return nil, store.ErrBadEventID
	}
	out := make([]store.StoredEvent, len(vals))
	for i, v := range vals {
		raw, err := v.ToString()
		if err != nil {
			return nil, errCorrupt
		}
		ev, err := pack.DecodeEvent([]byte(raw), id)
		if err != nil {
			return nil, err
		}
		out[i] = store.StoredEvent{ID: strconv.FormatUint(first+1+uint64(i), 10), Event: ev}
	}
	return out, nil
}

// Events implements store.Store. A wait first takes the task's wake
// channel (subscribing the task's event channel over the store's one
// pub/sub connection, shared by every waiter of every task), then reads:
// an append after the read closes the channel, so one read per wake is
// enough.
func (s *Store) Events(ctx context.Context, id, after string, wait bool) ([]store.StoredEvent, error) {
	start, err := xstart(after)
	if err != nil {
		return nil, err
	}
	if !wait {
		return s.read(ctx, id, start, 0)
	}
	for {
		ch, err := s.tail(ctx, id)
		if err != nil {
			return nil, err
		}
		if evs, err := s.read(ctx, id, start, 0); err != nil || len(evs) > 0 {
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

// tail is subscriber.tail bounded by the store's timeout.
func (s *Store) tail(ctx context.Context, id string) (<-chan struct{}, error) {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	ch, err := s.sub.tail(c, id)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return ch, nil
}

// EventsReady implements store.Notifier with the channel blocked Events
// calls wait on: any number of streams share it. It is also closed by
// the store's periodic sweep, so that a stream whose task expired finds
// out; a wake with nothing to read is possible and harmless.
func (s *Store) EventsReady(id, after string) (<-chan struct{}, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	start, err := xstart(after)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	ch, err := s.tail(ctx, id)
	if err != nil {
		return nil, err
	}
	evs, err := s.read(ctx, id, start, 1)
	if err != nil {
		return nil, err
	}
	if len(evs) > 0 {
		return closedChan, nil
	}
	return ch, nil
}

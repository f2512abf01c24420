package redisstore

import (
	"context"
	"strconv"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/store"
)

// Event ids are the entry ids Redis gave the events (XADD *): "<ms>-<seq>",
// ordered within the stream and the same for every replica reading it.

// xstart turns an event id into the start of the XRANGE that reads the
// events after it: "-" for "" (from the start), else "(" and the id.
func xstart(after string) (string, error) {
	if after == "" {
		return "-", nil
	}
	ms, seq, ok := strings.Cut(after, "-")
	if !ok || !decimal(ms) || !decimal(seq) {
		return "", store.ErrBadEventID
	}
	return "(" + after, nil
}

// decimal reports whether s is a uint64 in plain decimal digits.
func decimal(s string) bool {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return false
	}
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}

// read returns the events of task id from start (an XRANGE bound), at
// most count (0: all); store.ErrNotFound if the task is gone.
func (s *Store) read(ctx context.Context, id, start string, count int) ([]store.StoredEvent, error) {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	keys := taskKeys(s.opts.KeyPrefix, id)
	args := []string{start}
	if count > 0 {
		args = append(args, strconv.Itoa(count))
	}
	entries, err := s.events.Exec(c, s.cli(), keys[:2], args).AsXRange()
	if isNil(err) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	if len(entries) == 0 {
		return nil, nil
	}
	out := make([]store.StoredEvent, len(entries))
	for i, e := range entries {
		ev, err := decodeEvent([]byte(e.FieldValues["e"]), id)
		if err != nil {
			return nil, err
		}
		out[i] = store.StoredEvent{ID: e.ID, Event: ev}
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

package filestore

import (
	"context"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/internal/pack"
)

// encodeWrite encodes a write's snapshot and events before its
// transaction: the database has one writer at a time, and the encoding
// need not hold it up.
func encodeWrite(t *protocol.Task, events []protocol.Event) (snap []byte, recs [][]byte) {
	snap = pack.EncodeTask(nil, t)
	recs = make([][]byte, len(events))
	for i := range events {
		recs[i] = pack.EncodeEvent(nil, t.ID, &events[i])
	}
	return snap, recs
}

// newHeader is the header of t after a write at now.
func newHeader(owner string, version uint64, t *protocol.Task, now int64) *header {
	return &header{owner: owner, version: version, state: t.Status.State, ts: tsKey(t), ctxID: t.ContextID, updated: now}
}

// Create implements store.Store.
func (s *Store) Create(ctx context.Context, owner string, t *protocol.Task, events ...protocol.Event) (uint64, error) {
	return s.create(ctx, owner, nil, t, events)
}

// CreateSend implements store.Sends.
func (s *Store) CreateSend(ctx context.Context, owner string, send store.Send, t *protocol.Task, events ...protocol.Event) (uint64, error) {
	return s.create(ctx, owner, &send, t, events)
}

// create is Create, claiming send unless it is nil.
func (s *Store) create(ctx context.Context, owner string, send *store.Send, t *protocol.Task, events []protocol.Event) (uint64, error) {
	if err := s.check(ctx); err != nil {
		return 0, err
	}
	if t == nil {
		return 0, errNoID
	}
	if err := checkNames(t.ID, owner); err != nil {
		return 0, err
	}
	if len(events) > s.opts.MaxEventsPerTask && !t.Status.State.Terminal() {
		return 0, store.ErrTooManyEvents
	}
	snap, recs := encodeWrite(t, events)
	err := s.write(func(x *txn) error {
		old, err := x.header(t.ID)
		if err != nil {
			return err
		}
		if old != nil {
			if !x.expired(old) {
				return store.ErrExists
			}
			if err := x.remove(t.ID, old); err != nil {
				return err
			}
		}
		if send != nil {
			if err := x.claimed(owner, send); err != nil {
				return err
			}
			if err := x.claim(owner, send, t.ID); err != nil {
				return err
			}
		}
		h := newHeader(owner, 1, t, x.now)
		h.snap = int64(len(snap)) + recordOverhead
		for _, r := range recs {
			h.events += int64(len(r)) + recordOverhead
		}
		if err := x.makeRoom(owner, h.charge()); err != nil {
			return err
		}
		h.events = 0 // appendEvents counts them again
		if err := x.appendEvents(t.ID, h, recs); err != nil {
			return err
		}
		if err := x.snaps.Put([]byte(t.ID), snap); err != nil {
			return err
		}
		if err := x.index(t.ID, h); err != nil {
			return err
		}
		return x.charge(h.charge())
	})
	if err != nil {
		return 0, err
	}
	return 1, nil
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, owner, id string) (*store.Record, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	var r *store.Record
	err := s.view(func(x *txn) error {
		h, err := x.live(id, &owner)
		if err != nil {
			return err
		}
		t, err := pack.DecodeTask(x.snaps.Get([]byte(id)), id, store.View{})
		if err != nil {
			return err
		}
		r = &store.Record{Task: t, Owner: h.owner, Version: h.version}
		if h.last > 0 {
			r.LastEventID = eventID(h.last)
		}
		return nil
	})
	return r, err
}

// Update implements store.Store.
func (s *Store) Update(ctx context.Context, id string, version uint64, t *protocol.Task, events ...protocol.Event) (uint64, string, error) {
	return s.update(ctx, "", nil, id, version, t, events)
}

// UpdateSend implements store.Sends.
func (s *Store) UpdateSend(ctx context.Context, owner string, send store.Send, id string, version uint64, t *protocol.Task, events ...protocol.Event) (uint64, string, error) {
	return s.update(ctx, owner, &send, id, version, t, events)
}

// update is Update, by owner claiming send unless send is nil.
func (s *Store) update(ctx context.Context, owner string, send *store.Send, id string, version uint64, t *protocol.Task, events []protocol.Event) (uint64, string, error) {
	if err := s.check(ctx); err != nil {
		return 0, "", err
	}
	if t == nil || t.ID != id {
		return 0, "", errMatchID
	}
	snap, recs := encodeWrite(t, events)
	var next uint64
	var last string
	var by *string
	if send != nil {
		by = &owner
	}
	err := s.write(func(x *txn) error {
		old, err := x.live(id, by)
		if err != nil {
			return err
		}
		if send != nil {
			// A retry finds its claim whatever the version has become.
			if err := x.claimed(owner, send); err != nil {
				return err
			}
		}
		if old.version != version {
			return store.ErrConflict
		}
		if send != nil {
			if err := x.claim(owner, send, id); err != nil {
				return err
			}
		}
		st := t.Status.State
		if old.last+uint64(len(recs)) > uint64(s.opts.MaxEventsPerTask) && !(st.Terminal() && !old.state.Terminal()) {
			return store.ErrTooManyEvents
		}
		if err := x.unindex(id, old); err != nil {
			return err
		}
		h := newHeader(old.owner, old.version+1, t, x.now)
		h.last, h.events, h.push = old.last, old.events, old.push
		h.snap = int64(len(snap)) + recordOverhead
		if err := x.appendEvents(id, h, recs); err != nil {
			return err
		}
		if err := x.snaps.Put([]byte(id), snap); err != nil {
			return err
		}
		if err := x.index(id, h); err != nil {
			return err
		}
		if err := x.charge(h.charge() - old.charge()); err != nil {
			return err
		}
		next = h.version
		if len(recs) > 0 {
			last = eventID(h.last)
		}
		return x.shrink()
	})
	if err != nil {
		return 0, "", err
	}
	return next, last, nil
}

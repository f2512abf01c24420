package memory

import (
	"context"
	"slices"

	"github.com/caddy-a2a/caddy-a2a/store"
)

// The push configs and delivery claims of a task live in its entry beside
// the snapshot, packed or not, and go with it (eviction, expiry).

// pushOverhead is what one config or claim is charged beyond its bytes.
const pushOverhead = 64

// pushEntry returns owner's live entry for id with e.mu held; the caller
// unlocks it.
func (s *Store) pushEntry(ctx context.Context, owner, id string, anyOwner bool) (*entry, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	e := s.lookup(id)
	if e == nil || (!anyOwner && e.owner != owner) {
		return nil, store.ErrNotFound
	}
	e.mu.Lock()
	if e.gone || s.expired(e, s.opts.Now().UnixNano()) {
		e.mu.Unlock()
		return nil, store.ErrNotFound
	}
	return e, nil
}

// recharge brings e's charge up to date after its push data changed;
// e.mu must be held.
func (s *Store) recharge(e *entry) {
	size := e.charge()
	s.bytes.Add(size - e.size)
	e.size = size
}

// PutPushConfig implements store.Store.
func (s *Store) PutPushConfig(ctx context.Context, owner, id string, cfg store.PushConfig, max int) error {
	e, err := s.pushEntry(ctx, owner, id, false)
	if err != nil {
		return err
	}
	defer e.mu.Unlock()
	cfg.Data = slices.Clone(cfg.Data)
	if i := slices.IndexFunc(e.push, func(c store.PushConfig) bool { return c.ID == cfg.ID }); i >= 0 {
		e.push = slices.Clone(e.push)
		e.push[i] = cfg
	} else {
		if len(e.push) >= max {
			return store.ErrTooManyPushConfigs
		}
		e.push = append(slices.Clip(e.push), cfg)
	}
	s.recharge(e)
	return nil
}

// PushConfigs implements store.Store.
func (s *Store) PushConfigs(ctx context.Context, owner, id string) ([]store.PushConfig, error) {
	e, err := s.pushEntry(ctx, owner, id, false)
	if err != nil {
		return nil, err
	}
	defer e.mu.Unlock()
	return slices.Clone(e.push), nil
}

// DeletePushConfig implements store.Store.
func (s *Store) DeletePushConfig(ctx context.Context, owner, id, configID string) error {
	e, err := s.pushEntry(ctx, owner, id, false)
	if err != nil {
		return err
	}
	defer e.mu.Unlock()
	e.push = slices.DeleteFunc(slices.Clone(e.push), func(c store.PushConfig) bool { return c.ID == configID })
	s.recharge(e)
	return nil
}

// ClaimDelivery implements store.Store: one process holds the store, so
// the first claim of a key is the only one.
func (s *Store) ClaimDelivery(ctx context.Context, id, key string) (bool, error) {
	e, err := s.pushEntry(ctx, "", id, true)
	if err != nil {
		return false, err
	}
	defer e.mu.Unlock()
	if _, ok := e.claims[key]; ok {
		return false, nil
	}
	if e.claims == nil {
		e.claims = map[string]struct{}{}
	}
	e.claims[key] = struct{}{}
	e.claimBytes += len(key) + pushOverhead
	s.recharge(e)
	return true, nil
}

// pushBytes is what e's push configs and claims are charged; e.mu must be
// held.
func (e *entry) pushBytes() int64 {
	n := e.claimBytes
	for _, c := range e.push {
		n += len(c.ID) + len(c.Data) + pushOverhead
	}
	return int64(n)
}

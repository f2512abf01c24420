package filestore

import (
	"context"
	"encoding/binary"
	"slices"

	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/internal/pack"
)

// A task's push configs are one record in bPush, in the order they were
// first put (a task holds a handful); its delivery claims are keys in
// bClaims. Both are charged to the task (header.push) and go with it.

func encodePush(cfgs []store.PushConfig) []byte {
	b := binary.AppendUvarint(nil, uint64(len(cfgs)))
	for _, c := range cfgs {
		b = appendStr(b, c.ID)
		b = appendStr(b, string(c.Data))
	}
	return b
}

func decodePush(b []byte) ([]store.PushConfig, error) {
	if b == nil {
		return nil, nil
	}
	d := decoder{b: b}
	n := d.uint()
	if n > uint64(len(b)) {
		return nil, pack.ErrCorrupt
	}
	out := make([]store.PushConfig, 0, n)
	for range n {
		out = append(out, store.PushConfig{ID: d.str(), Data: []byte(d.str())})
	}
	if d.bad || len(d.b) != 0 {
		return nil, pack.ErrCorrupt
	}
	return out, nil
}

// pushCharge is what cfgs are charged.
func pushCharge(cfgs []store.PushConfig) int64 {
	if len(cfgs) == 0 {
		return 0
	}
	return int64(len(encodePush(cfgs))) + recordOverhead
}

// editPush replaces owner's task id's push configs with what edit makes
// of them (nil: unchanged), charging the difference.
func (s *Store) editPush(ctx context.Context, owner, id string, edit func([]store.PushConfig) ([]store.PushConfig, error)) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	return s.write(func(x *txn) error {
		h, err := x.live(id, &owner)
		if err != nil {
			return err
		}
		cur, err := decodePush(x.push.Get([]byte(id)))
		if err != nil {
			return err
		}
		next, err := edit(cur)
		if err != nil || next == nil {
			return err
		}
		if len(next) == 0 {
			err = x.push.Delete([]byte(id))
		} else {
			err = x.push.Put([]byte(id), encodePush(next))
		}
		if err != nil {
			return err
		}
		return x.recharge(id, h, pushCharge(next)-pushCharge(cur))
	})
}

// recharge adds delta to task id's push charge and the scope's.
func (x *txn) recharge(id string, h *header, delta int64) error {
	h.push += delta
	if err := x.headers.Put([]byte(id), h.encode()); err != nil {
		return err
	}
	return x.charge(delta)
}

// PutPushConfig implements store.Store.
func (s *Store) PutPushConfig(ctx context.Context, owner, id string, cfg store.PushConfig, max int) error {
	if len(cfg.ID) > maxName {
		return errLongName
	}
	return s.editPush(ctx, owner, id, func(cur []store.PushConfig) ([]store.PushConfig, error) {
		cfg.Data = slices.Clone(cfg.Data)
		if i := slices.IndexFunc(cur, func(c store.PushConfig) bool { return c.ID == cfg.ID }); i >= 0 {
			cur[i] = cfg
			return cur, nil
		}
		if len(cur) >= max {
			return nil, store.ErrTooManyPushConfigs
		}
		return append(cur, cfg), nil
	})
}

// DeletePushConfig implements store.Store.
func (s *Store) DeletePushConfig(ctx context.Context, owner, id, configID string) error {
	return s.editPush(ctx, owner, id, func(cur []store.PushConfig) ([]store.PushConfig, error) {
		next := slices.DeleteFunc(cur, func(c store.PushConfig) bool { return c.ID == configID })
		if next == nil {
			next = []store.PushConfig{}
		}
		return next, nil
	})
}

// PushConfigs implements store.Store.
func (s *Store) PushConfigs(ctx context.Context, owner, id string) ([]store.PushConfig, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	var out []store.PushConfig
	err := s.view(func(x *txn) error {
		if _, err := x.live(id, &owner); err != nil {
			return err
		}
		var err error
		out, err = decodePush(x.push.Get([]byte(id)))
		return err
	})
	return out, err
}

// ClaimDelivery implements store.Store: one process holds the file, so
// the first claim of a key is the only one, and it is on disk before it
// is granted (a restart does not deliver the same notification again).
func (s *Store) ClaimDelivery(ctx context.Context, id, key string) (bool, error) {
	if err := s.check(ctx); err != nil {
		return false, err
	}
	if len(key) > maxName {
		return false, errLongName
	}
	won := false
	err := s.write(func(x *txn) error {
		h, err := x.live(id, nil)
		if err != nil {
			return err
		}
		k := append(lp(id), key...)
		if x.claims.Get(k) != nil {
			return nil
		}
		if err := x.claims.Put(k, []byte{}); err != nil {
			return err
		}
		won = true
		return x.recharge(id, h, int64(len(k))+recordOverhead)
	})
	return won, err
}

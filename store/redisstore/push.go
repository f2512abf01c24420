package redisstore

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/store"
)

// Push configs live in the task's push hash ("d:<id>" the data, "o:<id>"
// the order of first put), claims in its claims set; both take the
// task's expiry whenever it is written, and the write script gives them
// each new one, so they live and expire with the task.

// PutPushConfig implements store.Store.
func (s *Store) PutPushConfig(ctx context.Context, owner, id string, cfg store.PushConfig, max int) error {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	keys := taskKeys(s.base, id)
	word, err := s.putPush.Exec(c, s.cli(), []string{keys[0], keys[1]}, []string{owner, cfg.ID, string(cfg.Data), strconv.Itoa(max)}).ToString()
	if err != nil {
		return s.fail(ctx, err)
	}
	switch word {
	case "ok":
		return nil
	case "notfound":
		return store.ErrNotFound
	case "toomany":
		return store.ErrTooManyPushConfigs
	}
	return errCorrupt
}

// PushConfigs implements store.Store.
func (s *Store) PushConfigs(ctx context.Context, owner, id string) ([]store.PushConfig, error) {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	keys := taskKeys(s.base, id)
	m, err := s.pushCfgs.Exec(c, s.cli(), []string{keys[0], keys[1]}, []string{owner}).AsStrMap()
	if isNil(err) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	type placed struct {
		order int64
		cfg   store.PushConfig
	}
	var out []placed
	for k, v := range m {
		cid, ok := strings.CutPrefix(k, "d:")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(m["o:"+cid], 10, 64)
		out = append(out, placed{n, store.PushConfig{ID: cid, Data: []byte(v)}})
	}
	slices.SortFunc(out, func(a, b placed) int { return int(a.order - b.order) })
	cfgs := make([]store.PushConfig, len(out))
	for i := range out {
		cfgs[i] = out[i].cfg
	}
	return cfgs, nil
}

// DeletePushConfig implements store.Store.
func (s *Store) DeletePushConfig(ctx context.Context, owner, id, configID string) error {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	keys := taskKeys(s.base, id)
	word, err := s.delPush.Exec(c, s.cli(), []string{keys[0], keys[1]}, []string{owner, configID}).ToString()
	if err != nil {
		return s.fail(ctx, err)
	}
	if word == "notfound" {
		return store.ErrNotFound
	}
	return nil
}

// ClaimDelivery implements store.Store with SADD into the task's claims
// set: Redis runs it once at a time, so exactly one claimant on any
// replica adds the key.
func (s *Store) ClaimDelivery(ctx context.Context, id, key string) (bool, error) {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return false, err
	}
	defer cancel()
	keys := taskKeys(s.base, id)
	n, err := s.claim.Exec(c, s.cli(), []string{keys[0], keys[2]}, []string{key}).AsInt64()
	if err != nil {
		return false, s.fail(ctx, err)
	}
	if n < 0 {
		return false, store.ErrNotFound
	}
	return n == 1, nil
}

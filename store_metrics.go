package caddya2a

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

var storeOperationsOpts = prometheus.CounterOpts{Namespace: "caddy", Subsystem: "a2a", Name: "store_operations_total",
	Help: "Operations on the A2A task store, by store, operation and outcome."}

// The store operations the op label names: the methods of store.Store
// (CancelSignal, a subscription, and Close are not counted).
const (
	opCreate = iota
	opGet
	opUpdate
	opList
	opEvents
	opSignalCancel
	opPutPushConfig
	opPushConfigs
	opDeletePushConfig
	opClaimDelivery
	opClaimReply
	opSettleReply
	opDropReply
	numStoreOps
)

var storeOpNames = [numStoreOps]string{"create", "get", "update", "list", "events", "signal_cancel",
	"put_push_config", "push_configs", "delete_push_config", "claim_delivery", "claim_reply", "settle_reply", "drop_reply"}

// The outcome label values: a bounded set, never an error's text.
const (
	outcomeOK = iota
	outcomeNotFound
	outcomeConflict
	outcomeExists
	outcomeFull
	outcomeQuota
	outcomeLimit
	outcomeInvalid
	outcomeSent
	outcomeCanceled
	outcomeClosed
	outcomeError
	numStoreOutcomes
)

var storeOutcomeNames = [numStoreOutcomes]string{"ok", "not_found", "conflict", "exists", "full", "quota",
	"limit", "invalid", "sent", "canceled", "closed", "error"}

// storeOutcome classifies the error of a store operation.
func storeOutcome(err error) int {
	switch {
	case err == nil:
		return outcomeOK
	case errors.Is(err, store.ErrNotFound):
		return outcomeNotFound
	case errors.Is(err, store.ErrConflict):
		return outcomeConflict
	case errors.Is(err, store.ErrExists):
		return outcomeExists
	case errors.Is(err, store.ErrFull):
		return outcomeFull
	case errors.Is(err, store.ErrQuota):
		return outcomeQuota
	case errors.Is(err, store.ErrTooManyEvents), errors.Is(err, store.ErrTooManyPushConfigs):
		return outcomeLimit
	case errors.Is(err, store.ErrBadEventID), errors.Is(err, store.ErrBadPageToken):
		return outcomeInvalid
	case errors.Is(err, store.ErrSent):
		return outcomeSent
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return outcomeCanceled
	case errors.Is(err, store.ErrClosed):
		return outcomeClosed
	}
	return outcomeError
}

// meteredStore counts the operations of the store it wraps in
// store_operations_total. Each label set's counter is made the first time
// it is seen and kept, so an operation costs two atomic operations and no
// allocation; the store's optional capabilities are found through Unwrap
// (store.As).
type meteredStore struct {
	store.Store
	total    *prometheus.CounterVec
	name     string
	counters [numStoreOps][numStoreOutcomes]atomic.Pointer[prometheus.Counter]
}

// newMeteredStore registers (or finds) the collector in reg and wraps st,
// whose module is named name (the store label).
// A store that claims sends (store.Sends) is wrapped as meteredSends.
func newMeteredStore(reg prometheus.Registerer, name string, st store.Store) (store.Store, error) {
	total, err := register(reg, prometheus.NewCounterVec(storeOperationsOpts, []string{"store", "op", "outcome"}))
	if err != nil {
		return nil, err
	}
	m := &meteredStore{Store: st, total: total, name: name}
	s, ok := store.As[store.Sends](st)
	if !ok {
		return m, nil
	}
	ms := &meteredSends{meteredStore: m, sends: s}
	if r, ok := store.As[store.Replies](st); ok {
		return &meteredReplies{meteredSends: ms, replies: r}, nil
	}
	return ms, nil
}

// meteredReplies is a meteredSends over a store that claims replies too
// (every store of this module): ClaimReply, SettleReply and DropReply
// count under their own names.
type meteredReplies struct {
	*meteredSends
	replies store.Replies
}

// ClaimReply implements store.Replies.
func (m *meteredReplies) ClaimReply(ctx context.Context, owner string, send store.Send, pending time.Duration) (*store.Reply, error) {
	r, err := m.replies.ClaimReply(ctx, owner, send, pending)
	return r, m.count(opClaimReply, err)
}

// SettleReply implements store.Replies.
func (m *meteredReplies) SettleReply(ctx context.Context, owner string, send store.Send, r *store.Reply) error {
	return m.count(opSettleReply, m.replies.SettleReply(ctx, owner, send, r))
}

// DropReply implements store.Replies.
func (m *meteredReplies) DropReply(ctx context.Context, owner, messageID string) error {
	return m.count(opDropReply, m.replies.DropReply(ctx, owner, messageID))
}

// meteredSends is a meteredStore over a store that claims sends: the
// writes that claim count as the create or update they are, a send
// already claimed under the "sent" outcome.
type meteredSends struct {
	*meteredStore
	sends store.Sends
}

// CreateSend implements store.Sends.
func (m *meteredSends) CreateSend(ctx context.Context, owner string, send store.Send, t *protocol.Task, events ...protocol.Event) (uint64, error) {
	v, err := m.sends.CreateSend(ctx, owner, send, t, events...)
	return v, m.count(opCreate, err)
}

// UpdateSend implements store.Sends.
func (m *meteredSends) UpdateSend(ctx context.Context, owner string, send store.Send, id string, version uint64, t *protocol.Task, events ...protocol.Event) (uint64, string, error) {
	v, last, err := m.sends.UpdateSend(ctx, owner, send, id, version, t, events...)
	return v, last, m.count(opUpdate, err)
}

// count counts one operation op that ended with err, and returns err.
func (m *meteredStore) count(op int, err error) error {
	o := storeOutcome(err)
	slot := &m.counters[op][o]
	c := slot.Load()
	if c == nil {
		counter := m.total.WithLabelValues(m.name, storeOpNames[op], storeOutcomeNames[o])
		slot.CompareAndSwap(nil, &counter)
		c = slot.Load()
	}
	(*c).Inc()
	return err
}

// Unwrap implements store.Wrapper.
func (m *meteredStore) Unwrap() store.Store { return m.Store }

// Create implements store.Store.
func (m *meteredStore) Create(ctx context.Context, owner string, t *protocol.Task, events ...protocol.Event) (uint64, error) {
	v, err := m.Store.Create(ctx, owner, t, events...)
	return v, m.count(opCreate, err)
}

// Get implements store.Store.
func (m *meteredStore) Get(ctx context.Context, owner, id string) (*store.Record, error) {
	r, err := m.Store.Get(ctx, owner, id)
	return r, m.count(opGet, err)
}

// Update implements store.Store.
func (m *meteredStore) Update(ctx context.Context, id string, version uint64, t *protocol.Task, events ...protocol.Event) (uint64, string, error) {
	v, last, err := m.Store.Update(ctx, id, version, t, events...)
	return v, last, m.count(opUpdate, err)
}

// List implements store.Store.
func (m *meteredStore) List(ctx context.Context, owner string, q store.ListQuery) (*store.ListPage, error) {
	p, err := m.Store.List(ctx, owner, q)
	return p, m.count(opList, err)
}

// Events implements store.Store.
func (m *meteredStore) Events(ctx context.Context, id, after string, wait bool) ([]store.StoredEvent, error) {
	evs, err := m.Store.Events(ctx, id, after, wait)
	return evs, m.count(opEvents, err)
}

// SignalCancel implements store.Store.
func (m *meteredStore) SignalCancel(ctx context.Context, id string) error {
	return m.count(opSignalCancel, m.Store.SignalCancel(ctx, id))
}

// PutPushConfig implements store.Store.
func (m *meteredStore) PutPushConfig(ctx context.Context, owner, id string, cfg store.PushConfig, max int) error {
	return m.count(opPutPushConfig, m.Store.PutPushConfig(ctx, owner, id, cfg, max))
}

// PushConfigs implements store.Store.
func (m *meteredStore) PushConfigs(ctx context.Context, owner, id string) ([]store.PushConfig, error) {
	cfgs, err := m.Store.PushConfigs(ctx, owner, id)
	return cfgs, m.count(opPushConfigs, err)
}

// DeletePushConfig implements store.Store.
func (m *meteredStore) DeletePushConfig(ctx context.Context, owner, id, configID string) error {
	return m.count(opDeletePushConfig, m.Store.DeletePushConfig(ctx, owner, id, configID))
}

// ClaimDelivery implements store.Store.
func (m *meteredStore) ClaimDelivery(ctx context.Context, id, key string) (bool, error) {
	ok, err := m.Store.ClaimDelivery(ctx, id, key)
	return ok, m.count(opClaimDelivery, err)
}

var _ store.Wrapper = (*meteredStore)(nil)

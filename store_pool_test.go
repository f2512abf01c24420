package caddya2a

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// TestBackendPool: configs with the same key share one backend (a reload
// keeps its tasks); the last release closes it.
func TestBackendPool(t *testing.T) {
	cfg := &Store{}
	if err := cfg.applyDefaults(); err != nil {
		t.Fatal(err)
	}
	key := "test|" + t.Name()
	b1, err := loadBackend(key, cfg, nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	task := &protocol.Task{ID: "t1", ContextID: "c1", Status: protocol.TaskStatus{State: protocol.StateCompleted}}
	if _, err := b1.store.Create(ctx, "alice", task); err != nil {
		t.Fatal(err)
	}

	// A reload: the new config takes the backend before the old lets go.
	b2, err := loadBackend(key, cfg, nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if b2 != b1 {
		t.Fatal("same key, different backend")
	}
	if _, err := backends.Delete(key); err != nil {
		t.Fatal(err)
	}
	if _, err := b2.store.Get(ctx, "alice", "t1"); err != nil {
		t.Fatalf("task lost while a config still uses the store: %v", err)
	}

	other, err := loadBackend(key+"|other", cfg, nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if other == b1 {
		t.Fatal("different key, same backend")
	}
	if _, err := backends.Delete(key + "|other"); err != nil {
		t.Fatal(err)
	}

	// The last config goes: the store is closed.
	if _, err := backends.Delete(key); err != nil {
		t.Fatal(err)
	}
	if _, err := b1.store.Get(ctx, "alice", "t1"); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("store after the last release: %v, want ErrClosed", err)
	}
}

// TestLiveCore: the runner's logger writes through the newest config's
// logger, with its name, fields and level.
func TestLiveCore(t *testing.T) {
	core1, logs1 := observer.New(zapcore.InfoLevel)
	core2, logs2 := observer.New(zapcore.WarnLevel)
	cfg := &Store{}
	_ = cfg.applyDefaults()
	key := "test|" + t.Name()
	b, err := loadBackend(key, cfg, nil, zap.New(core1).Named("http.handlers.a2a"))
	if err != nil {
		t.Fatal(err)
	}
	defer backends.Delete(key)
	log := zap.New(&liveCore{cur: b.log}).With(zap.String("task_id", "t1"))

	log.Info("one")
	if _, err := loadBackend(key, cfg, nil, zap.New(core2).Named("http.handlers.a2a")); err != nil {
		t.Fatal(err)
	}
	defer backends.Delete(key)
	log.Info("dropped: below the new config's level")
	log.Warn("two")

	if logs1.Len() != 1 || logs2.Len() != 1 {
		t.Fatalf("entries: old %d new %d, want 1 and 1", logs1.Len(), logs2.Len())
	}
	e := logs2.All()[0]
	if e.Message != "two" || e.LoggerName != "http.handlers.a2a" || e.ContextMap()["task_id"] != "t1" {
		t.Errorf("entry: %+v", e)
	}
}

// TestStoreKeyIdleTTL: idle_ttl is part of the pool key (changing it on
// reload starts a store with the new setting), an omitted idle_ttl and the
// explicit default share a store, and a negative one is refused.
func TestStoreKeyIdleTTL(t *testing.T) {
	key := func(idle time.Duration) string {
		t.Helper()
		h := &Handler{Upstream: &Upstream{}, RPCPath: "/a2a", Store: &Store{IdleTTL: caddy.Duration(idle)}}
		if err := h.Store.applyDefaults(); err != nil {
			t.Fatal(err)
		}
		return h.storeKey()
	}
	if got, want := key(0), key(24*time.Hour); got != want {
		t.Errorf("omitted idle_ttl: key %q, explicit default: %q", got, want)
	}
	if a, b := key(time.Hour), key(2*time.Hour); a == b {
		t.Errorf("idle_ttl 1h and 2h share key %q", a)
	}
	if err := (&Store{IdleTTL: -1}).applyDefaults(); err == nil {
		t.Error("negative idle_ttl accepted")
	}
}

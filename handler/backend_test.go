package handler

import (
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/caddy-a2a/caddy-a2a/store/memory"
)

// TestLiveCore: the runner's logger writes through the newest config's
// logger, with its name, fields and level.
func TestLiveCore(t *testing.T) {
	core1, logs1 := observer.New(zapcore.InfoLevel)
	core2, logs2 := observer.New(zapcore.WarnLevel)
	b := NewBackend(memory.New(memory.Options{}))
	defer b.Close(true)
	b.SetLogger(zap.New(core1).Named("http.handlers.a2a"))
	log := zap.New(&liveCore{cur: b.log}).With(zap.String("task_id", "t1"))

	log.Info("one")
	b.SetLogger(zap.New(core2).Named("http.handlers.a2a"))
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

// TestBackendFill: a process-local store's backend gives the service a
// context key of its own, fixed for the backend's life; Close warns of the
// tasks it drops unless the process exits.
func TestBackendFill(t *testing.T) {
	b := NewBackend(memory.New(memory.Options{}))
	var o Options
	b.Fill(&o)
	if o.Store != b.store || o.Runner != b.runner || len(o.ContextKey) != ContextKeySize || o.ContextKeyFunc != nil {
		t.Fatalf("filled %+v", o)
	}
	core, logs := observer.New(zapcore.WarnLevel)
	b.SetLogger(zap.New(core))
	b.SetMount("the mount")
	if err := b.Close(false); err != nil {
		t.Fatal(err)
	}
	if logs.Len() != 0 {
		t.Errorf("an empty store's close warned: %v", logs.All())
	}
}

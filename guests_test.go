package caddya2a

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// memoryModule is a memory store module of raw settings, provisioned as
// the handler loads it.
func memoryModule(t *testing.T, raw string) *MemoryStore {
	t.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	mod, err := ctx.LoadModuleByID("a2a.stores.memory", json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	return mod.(*MemoryStore)
}

// TestBackendPool: store modules with the same key share one backend (a
// reload keeps its tasks); the last release closes it.
func TestBackendPool(t *testing.T) {
	scope := "test|" + t.Name()
	b1, k1, err := takeBackend(memoryModule(t, `{}`), StoreEnv{}, scope)
	if err != nil {
		t.Fatal(err)
	}
	bg := context.Background()
	task := &protocol.Task{ID: "t1", ContextID: "c1", Status: protocol.TaskStatus{State: protocol.StateCompleted}}
	if _, err := b1.Store().Create(bg, "alice", task); err != nil {
		t.Fatal(err)
	}

	// A reload: the new config takes the backend before the old lets go;
	// an explicit default is the omitted setting.
	b2, k2, err := takeBackend(memoryModule(t, `{"max_tasks": 10000}`), StoreEnv{}, scope)
	if err != nil {
		t.Fatal(err)
	}
	if b2 != b1 || k2 != k1 {
		t.Fatal("same key, different backend")
	}
	if _, err := backends.Delete(k1); err != nil {
		t.Fatal(err)
	}
	if _, err := b2.Store().Get(bg, "alice", "t1"); err != nil {
		t.Fatalf("task lost while a config still uses the store: %v", err)
	}

	other, ko, err := takeBackend(memoryModule(t, `{}`), StoreEnv{}, scope+"|other")
	if err != nil {
		t.Fatal(err)
	}
	if other == b1 {
		t.Fatal("different key, same backend")
	}
	if _, err := backends.Delete(ko); err != nil {
		t.Fatal(err)
	}

	// The last config goes: the store is closed.
	if _, err := backends.Delete(k2); err != nil {
		t.Fatal(err)
	}
	if _, err := b1.Store().Get(bg, "alice", "t1"); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("store after the last release: %v, want ErrClosed", err)
	}
}

// TestStoreKeyIdleTTL: idle_ttl is part of the pool key (changing it on
// reload starts a store with the new setting), an omitted idle_ttl and the
// explicit default share a store, and a negative one is refused.
func TestStoreKeyIdleTTL(t *testing.T) {
	key := func(idle time.Duration) string {
		t.Helper()
		m := &MemoryStore{IdleTTL: caddy.Duration(idle)}
		m.fill()
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		return backendKey(m, StoreEnv{}, "http://agent.test/|/a2a")
	}
	if got, want := key(0), key(24*time.Hour); got != want {
		t.Errorf("omitted idle_ttl: key %q, explicit default: %q", got, want)
	}
	if a, b := key(time.Hour), key(2*time.Hour); a == b {
		t.Errorf("idle_ttl 1h and 2h share key %q", a)
	}
	m := &MemoryStore{IdleTTL: -1}
	m.fill()
	if err := m.Validate(); err == nil {
		t.Error("negative idle_ttl accepted")
	}
}

// TestStoreKeyScope: the store's key holds the limits the store enforces
// and the sharing scope: the share when set (whatever the upstream),
// else the upstream and RPC path.
func TestStoreKeyScope(t *testing.T) {
	key := func(share string, env StoreEnv, scope string) string {
		m := &MemoryStore{Share: share}
		m.fill()
		return backendKey(m, env, scope)
	}
	a, b := "http://a.test/|/a2a", "http://b.test/|/a2a"
	if key("", StoreEnv{}, a) == key("", StoreEnv{}, b) {
		t.Error("two upstreams without a share have one key")
	}
	if key("team", StoreEnv{}, a) != key("team", StoreEnv{}, b) {
		t.Error("one share on two upstreams has two keys")
	}
	if key("team", StoreEnv{}, a) == key("", StoreEnv{}, a) {
		t.Error("a share and the implicit scope have one key")
	}
	if key("", StoreEnv{}, a) == key("", StoreEnv{MaxTasksPerOwner: 5}, a) ||
		key("", StoreEnv{}, a) == key("", StoreEnv{MaxEventsPerTask: 5}, a) {
		t.Error("the limits the store enforces are not in its key")
	}
}

// fakeUpstream is an upstream module of a fixed target, for the scope
// claims.
type fakeUpstream struct {
	UpstreamModule
	target string
}

func (u fakeUpstream) Target() string { return u.target }

// scopeMount is a provisioned-enough handler for claimScope.
func scopeMount(t *testing.T, name, share string) *Handler {
	t.Helper()
	h := &Handler{CardFields: CardFields{Name: name}, RPCPath: "/a2a", upstream: fakeUpstream{target: "http://agent.test/"}}
	m := &MemoryStore{Share: share}
	m.fill()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	h.store = m
	return h
}

// mountKey is the pool key of a scopeMount's store.
func mountKey(h *Handler) string {
	return backendKey(h.store, StoreEnv{}, h.upstream.Target()+"|"+h.RPCPath)
}

// claim claims h's scope in ctx and keeps the claim on h, as Provision
// does.
func claim(ctx caddy.Context, h *Handler) error {
	var err error
	h.claim, err = h.claimScope(ctx, mountKey(h), shareName(h.store))
	return err
}

// TestClaimScope: within one config a scope no share names is claimed
// once, and a named share by any number of mounts with one store key;
// another config (a reload, a validate) claims on its own; a refused mount
// releases nothing of the first one's claim; releases leave no entry.
func TestClaimScope(t *testing.T) {
	cfg1, cancel1 := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel1()
	cfg2, cancel2 := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel2()

	a, b := scopeMount(t, "A", ""), scopeMount(t, "B", "")
	if err := claim(cfg1, a); err != nil {
		t.Fatal(err)
	}
	err := claim(cfg1, b)
	for _, want := range []string{`the a2a mount "B"`, `the a2a mount "A"`, "set `share <name>`", "http://agent.test/"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("second mount of one scope: %v, want an error containing %q", err, want)
		}
	}
	// Caddy cleans up the refused mount: the first one's claim stays.
	if err := b.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if err := claim(cfg1, scopeMount(t, "C", "")); err == nil {
		t.Error("the refused mount's cleanup dropped the first mount's claim")
	}
	// The next config (a reload) has its own claims.
	a2 := scopeMount(t, "A", "")
	if err := claim(cfg2, a2); err != nil {
		t.Errorf("the same mount in the next config: %v", err)
	}

	// A named share: any number of mounts with the same store settings.
	s1, s2 := scopeMount(t, "S1", "team"), scopeMount(t, "S2", "team")
	for _, h := range []*Handler{s1, s2} {
		if err := claim(cfg1, h); err != nil {
			t.Errorf("%s in share team: %v", h.Name, err)
		}
	}
	odd := scopeMount(t, "S3", "team")
	m := odd.store.(*MemoryStore)
	m.MaxTasks = 5
	if err := claim(cfg1, odd); err == nil || !strings.Contains(err.Error(), `share "team": the a2a mount "S3"`) ||
		!strings.Contains(err.Error(), "different store settings") {
		t.Errorf("share team with other settings: %v", err)
	}
	// A share and the implicit scope of the same upstream and path are
	// apart.
	if got, other := mountKey(s1), mountKey(a); got == other {
		t.Errorf("share team and no share have one key %q", got)
	}

	for _, h := range []*Handler{a, a2, s1, s2} {
		if err := h.Cleanup(); err != nil {
			t.Fatal(err)
		}
	}
	scopes.Lock()
	left := len(scopes.byConfig)
	scopes.Unlock()
	if left != 0 {
		t.Errorf("%d configs still hold claims after every mount was cleaned up", left)
	}
	// Released: the scope can be claimed again in the same config.
	again := scopeMount(t, "B", "")
	if err := claim(cfg1, again); err != nil {
		t.Errorf("after the release: %v", err)
	}
	again.Cleanup()

	// A context of no config load (never canceled) compares nothing.
	x := scopeMount(t, "X", "")
	if c, err := x.claimScope(caddy.Context{Context: context.Background()}, mountKey(x), ""); c != nil || err != nil {
		t.Errorf("no config: %v %v", c, err)
	}
}

func TestCheckShareName(t *testing.T) {
	for name, ok := range map[string]bool{
		"one": true, "a.b_c-D9": true, strings.Repeat("x", 64): true,
		"": false, strings.Repeat("x", 65): false, "a b": false, "a/b": false, "é": false, "{env.X}": false, "a|b": false,
	} {
		if err := checkShareName(name); (err == nil) != ok {
			t.Errorf("checkShareName(%q) = %v, want ok %v", name, err, ok)
		}
	}
}

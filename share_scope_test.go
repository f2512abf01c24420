package caddya2a

import (
	"context"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

// scopeMount is a provisioned-enough handler for claimScope.
func scopeMount(t *testing.T, name, share string) *Handler {
	t.Helper()
	h := &Handler{Name: name, RPCPath: "/a2a", Upstream: &Upstream{target: "http://agent.test/"}, Store: &Store{Share: share}}
	if err := h.Store.applyDefaults(); err != nil {
		t.Fatal(err)
	}
	return h
}

// claim claims h's scope in ctx and keeps the claim on h, as Provision
// does.
func claim(ctx caddy.Context, h *Handler) error {
	var err error
	h.claim, err = h.claimScope(ctx, h.storeKey())
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
	odd.Store.MaxTasks = 5
	if err := claim(cfg1, odd); err == nil || !strings.Contains(err.Error(), `share "team": the a2a mount "S3"`) ||
		!strings.Contains(err.Error(), "different store settings") {
		t.Errorf("share team with other settings: %v", err)
	}
	// A share and the implicit scope of the same upstream and path are
	// apart.
	if got, other := s1.storeKey(), a.storeKey(); got == other {
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
	if c, err := scopeMount(t, "X", "").claimScope(caddy.Context{Context: context.Background()}, "k"); c != nil || err != nil {
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

package caddya2a_test

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	caddya2a "github.com/caddy-a2a/caddy-a2a"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/memory"
	"github.com/caddy-a2a/caddy-a2a/store/storetest"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// A store and an upstream kind as a third party would write them, in a
// package of their own, with the root package's exported API only.
func init() {
	caddy.RegisterModule(new(testStore))
	caddy.RegisterModule(new(testUpstream))
}

// docs:store begin
// testStore is a2a.stores.test: a memory store under another name, with
// one setting of its own. This is all a store module is: its settings,
// their key, and how to open the store (the handler pools it).
type testStore struct {
	Label string `json:"label,omitempty"`
}

func (*testStore) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "a2a.stores.test", New: func() caddy.Module { return new(testStore) }}
}

func (s *testStore) Validate() error {
	if s.Label == "" {
		return errors.New("label is required")
	}
	return nil
}

// StoreKey: configs with one label share one store.
func (s *testStore) StoreKey() string { return s.Label }

func (s *testStore) OpenStore(env caddya2a.StoreEnv) (store.Store, error) {
	return memory.New(memory.Options{MaxTasksPerOwner: env.MaxTasksPerOwner}), nil
}

func (s *testStore) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the type
	for d.NextBlock(0) {
		if d.Val() != "label" || !d.NextArg() {
			return d.Err("want label <text>")
		}
		s.Label = d.Val()
	}
	return nil
}

// docs:store end

// testUpstream is a2a.upstreams.test: an agent that answers every run
// with its greeting.
type testUpstream struct {
	URL      string `json:"url,omitempty"`
	Greeting string `json:"greeting,omitempty"`
}

func (*testUpstream) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "a2a.upstreams.test", New: func() caddy.Module { return new(testUpstream) }}
}

func (u *testUpstream) Target() string { return u.URL }

func (u *testUpstream) NewAgent(caddya2a.AgentOptions) (upstream.Agent, error) {
	return greeter(u.Greeting), nil
}

func (u *testUpstream) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the kind
	if !d.Args(&u.URL) {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		if d.Val() != "greeting" || !d.Args(&u.Greeting) {
			return d.Err("want greeting <text>")
		}
	}
	return nil
}

type greeter string

func (g greeter) Run(context.Context, *upstream.RunRequest) (upstream.Stream, error) {
	return &events{list: []upstream.Event{{Kind: upstream.EventText, Text: string(g)}}}, nil
}

type events struct{ list []upstream.Event }

func (e *events) Next() (upstream.Event, error) {
	if len(e.list) == 0 {
		return upstream.Event{}, io.EOF
	}
	ev := e.list[0]
	e.list = e.list[1:]
	return ev, nil
}

func (e *events) Close() error { return nil }

// TestThirdPartyModules: a store and an upstream kind registered outside
// the root package are written `store <type> { … }` and `upstream <kind>
// <url> { … }` in a Caddyfile, adapt to their JSON module objects, are
// loaded, checked and cleaned up by the handler like the built-in ones,
// and their store lives in the handler's pool until the last config lets
// go.
func TestThirdPartyModules(t *testing.T) {
	const site = `:8080 {
	a2a {
		upstream test http://agent.test {
			greeting hello
		}
		name N
		description D
		skill s {
			name S
			description S.
			tags t
		}
		store test {
			label %s
		}
	}
}
`
	adapter := caddyconfig.GetAdapter("caddyfile")
	out, _, err := adapter.Adapt([]byte(strings.Replace(site, "%s", "one", 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"store":{"label":"one","type":"test"}`, `"upstream":{"greeting":"hello","kind":"test","url":"http://agent.test"}`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("adapted config lacks %s:\n%s", want, out)
		}
	}
	if err := validate(out); err != nil {
		t.Fatalf("validate: %v", err)
	}
	if n := caddya2a.PooledBackends("a2a.stores.test"); n != 0 {
		t.Errorf("%d backends left after validate cleaned up", n)
	}

	// The module's own checks fail the load, in both config paths.
	bad, _, err := adapter.Adapt([]byte(strings.Replace(site, "label %s", "", 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(bad); err == nil || !strings.Contains(err.Error(), "a2a.stores.test: invalid configuration: label is required") {
		t.Errorf("store without label: %v", err)
	}
	if err := validate(handlerConfig(`{"upstream":{"kind":"test","url":"http://agent.test"},"name":"N","description":"D",
		"skills":[{"id":"s","name":"S","description":"S.","tags":["t"]}],"store":{"type":"test"}}`)); err == nil ||
		!strings.Contains(err.Error(), "label is required") {
		t.Errorf("JSON store without label: %v", err)
	}
	if n := caddya2a.PooledBackends("a2a.stores.test"); n != 0 {
		t.Errorf("%d backends left after failed loads", n)
	}

	// An upstream or store the Caddyfile cannot find is named with the
	// ones it can.
	for cfg, want := range map[string]string{
		strings.Replace(site, "store test", "store redsi", 1):                `store: unknown type "redsi" (available: file, memory, postgres, redis, test)`,
		strings.Replace(site, "upstream test http", "upstream tset http", 1): `upstream: unknown kind "tset" (available: a2a, http, openai, test)`,
	} {
		if _, _, err := adapter.Adapt([]byte(strings.Replace(cfg, "%s", "one", 1)), nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("adapt: %v, want %q", err, want)
		}
	}
}

// TestThirdPartyStoreConforms: the store the third party's module opens
// passes the conformance suite every store passes.
func TestThirdPartyStoreConforms(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		st, err := (&testStore{Label: "conformance"}).OpenStore(caddya2a.StoreEnv{})
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}

// TestStoreModuleDoc: docs/json-config.md shows a store module exactly as
// this file writes it, and that is under 40 lines of code.
func TestStoreModuleDoc(t *testing.T) {
	src, err := os.ReadFile("thirdparty_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, code, _ := strings.Cut(string(src), "// docs:store begin\n")
	code, _, _ = strings.Cut(code, "// docs:store end\n")
	page, err := os.ReadFile("docs/json-config.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "```go\n"+strings.TrimRight(code, "\n")+"\n```") {
		t.Errorf("docs/json-config.md does not show the store module as thirdparty_test.go has it:\n%s", code)
	}
	lines := 0
	for _, l := range strings.Split(code, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "//") {
			lines++
		}
	}
	if lines == 0 || lines >= 40 {
		t.Errorf("the store module is %d lines of code, want fewer than 40", lines)
	}
}

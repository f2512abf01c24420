package caddya2a

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/caddyserver/caddy/v2"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// The guest modules of the a2a handler, and the pool of the stores they
// open.

// Stores are guest modules of the namespace a2a.stores, loaded from the
// handler's "store" (inline key "type"). A third party adds one with a
// package of its own that registers a2a.stores.<name>: a caddy.Module
// implementing StoreModule (and caddyfile.Unmarshaler for `store <name>
// …` in a Caddyfile). The module opens a store; the handler keeps it,
// with its runner and push dispatcher, in one pool that outlives
// reloads. MemoryStore is the built-in one.

// StoreModule is what the a2a handler needs of a store guest module.
type StoreModule interface {
	caddy.Module
	// StoreKey names the store the module's settings open, with
	// defaults filled (an explicit default and an omitted setting name
	// one store): mounts whose modules have one type and one key, in one
	// sharing scope, share one store, across reloads. Changing it on
	// reload starts an empty store; the old one closes with the old
	// config.
	StoreKey() string
	// OpenStore opens the store, held to the bounds env gives. It is
	// called once for each store the pool makes; the pool closes it
	// when the last config using it lets go.
	OpenStore(env StoreEnv) (store.Store, error)
}

// StoreSharer is an optional capability of a store module whose settings
// name a share: the sharing scope of its mounts' tasks, owner names and
// contexts, across sites and upstreams.
type StoreSharer interface {
	// ShareName is the share, "" for none.
	ShareName() string
}

// shareName is st's share, "" when it names none.
func shareName(st StoreModule) string {
	if s, ok := st.(StoreSharer); ok {
		return s.ShareName()
	}
	return ""
}

// StoreEnv is what the a2a handler tells a store module it opens: the
// limits the store enforces for the mount.
type StoreEnv struct {
	// MaxTasksPerOwner bounds the tasks the store keeps for one caller
	// (0: the store's default).
	MaxTasksPerOwner int
	// MaxEventsPerTask bounds one task's event log.
	MaxEventsPerTask int
	// Scope is the mount's sharing scope: "share <name>" when the
	// module names a share, else the mount's upstream and RPC path. A
	// store that keeps several scopes in one place (the file store's
	// directory) keeps them apart by it; one the pool opens per scope
	// (memory) or whose settings name its scope (redis) need not look.
	Scope string
}

// backends is the one pool of backends (a store with its runner and push
// dispatcher) of every mount, keyed by backendKey. A reload provisions the
// new config (taking a reference) before cleaning up the old one
// (dropping its reference), so a store whose key is unchanged is never
// closed and its tasks and in-flight runs carry on.
var backends = caddy.NewUsagePool()

// pooledBackend is a backend as the pool holds it.
type pooledBackend struct{ *handler.Backend }

// Destruct closes the backend: when Caddy exits, the tasks of a
// process-local store go with it, as the operator expects, and nothing is
// said.
func (p pooledBackend) Destruct() error { return p.Close(caddy.Exiting()) }

// backendKey is the pool key of st's store in env for a mount whose
// sharing scope, when st names no share, is scope (its upstream and RPC
// path): the module's type and StoreKey, the limits the store enforces,
// and the share, else the scope.
func backendKey(st StoreModule, env StoreEnv, scope string) string {
	scope = storeScope(st, scope)
	return string(st.CaddyModule().ID) + "|" + st.StoreKey() + "|" + strconv.Itoa(env.MaxTasksPerOwner) + "|" +
		strconv.Itoa(env.MaxEventsPerTask) + "|" + scope
}

// storeScope is the sharing scope of a mount whose own scope is scope
// and whose store module is st: its share, if it names one.
func storeScope(st StoreModule, scope string) string {
	if share := shareName(st); share != "" {
		// No scope starts with "share ".
		return "share " + share
	}
	return scope
}

// takeBackend takes the backend of st in env from the pool (opening its
// store on first use) for a mount whose scope is scope; the mount's
// Cleanup gives it back (backends.Delete(key)).
func takeBackend(st StoreModule, env StoreEnv, scope string) (b *handler.Backend, key string, err error) {
	key = backendKey(st, env, scope)
	env.Scope = storeScope(st, scope)
	v, _, err := backends.LoadOrNew(key, func() (caddy.Destructor, error) {
		s, err := st.OpenStore(env)
		if err != nil {
			return nil, err
		}
		return pooledBackend{handler.NewBackend(s)}, nil
	})
	if err != nil {
		return nil, "", err
	}
	return v.(pooledBackend).Backend, key, nil
}

// checkStoreSettings checks what every built-in store module takes
// alike: the share name (if any) and the two expiries.
func checkStoreSettings(share string, ttl, idleTTL caddy.Duration) error {
	if share != "" {
		if err := checkShareName(share); err != nil {
			return fmt.Errorf("share: %w", err)
		}
	}
	switch {
	case ttl < 0:
		return errors.New("ttl must be positive")
	case idleTTL < 0:
		return errors.New("idle_ttl must be positive")
	}
	return nil
}

// checkMaxBytes checks a store's max_bytes (at most 1TiB: a machine's
// memory or disk, not one request's).
func checkMaxBytes(n int64) error {
	switch {
	case n < 0:
		return errors.New("max_bytes must be positive")
	case n > maxStoreBytes:
		return errors.New("max_bytes must be at most 1TiB")
	}
	return nil
}

// maxShareName bounds a share name: it is a label, not data.
const maxShareName = 64

// checkShareName accepts 1 to 64 characters of A-Z, a-z, 0-9, '.', '_'
// and '-'.
func checkShareName(s string) error {
	if s == "" || len(s) > maxShareName {
		return fmt.Errorf("name %q must be 1 to %d characters", s, maxShareName)
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("name %q may only hold A-Z, a-z, 0-9, '.', '_' and '-'", s)
		}
	}
	return nil
}

// Upstreams are guest modules of the namespace a2a.upstreams, loaded from
// the handler's "upstream" (inline key "kind", "http" when omitted). A
// third party adds a kind with a package of its own that registers
// a2a.upstreams.<kind>: a caddy.Module implementing UpstreamModule (and
// caddyfile.Unmarshaler for `upstream <kind> …` in a Caddyfile) around an
// upstream.Agent of a Caddy-free package. HTTPUpstream is the built-in
// one.

// UpstreamModule is what the a2a handler needs of an upstream guest
// module.
type UpstreamModule interface {
	caddy.Module
	// Target names the agent for the default sharing scope of the mount's
	// tasks and for messages: for the http kind, its URL as resolved.
	Target() string
	// NewAgent returns the agent, holding what it answers to opts. The
	// handler calls it once its own settings are checked.
	NewAgent(opts AgentOptions) (upstream.Agent, error)
}

// AgentOptions are the handler's settings an agent's answer is held to
// (see upstream.Rules).
type AgentOptions struct {
	// Limits are the limits of a caller's message parts (zero fields:
	// protocol's defaults).
	Limits protocol.Limits
	// MaxJSONDepth is the max_json_depth a caller's body gets (0: the
	// default).
	MaxJSONDepth int
}

// loadGuest loads the guest module in h's json.RawMessage field (raw is
// its value) the way reverse_proxy loads its transport. A config that
// names no module (no inlineKey, or no field at all) gets def: configs
// written before the field held a module keep working.
func loadGuest(ctx caddy.Context, h *Handler, field string, raw json.RawMessage, inlineKey, def string) (any, error) {
	var probe map[string]json.RawMessage
	if len(raw) > 0 && (json.Unmarshal(raw, &probe) != nil || probe[inlineKey] != nil) {
		return ctx.LoadModule(h, field)
	}
	mod, err := ctx.LoadModuleByID(def, raw)
	if err != nil {
		// Caddy's own words for a module loaded by name.
		return nil, fmt.Errorf("loading module '%s': %v", caddy.ModuleID(def).Name(), err)
	}
	return mod, nil
}

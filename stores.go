package caddya2a

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/memory"
)

// Stores are guest modules of the namespace a2a.stores, loaded from the
// handler's "store" (inline key "type"). A third party adds one with a
// package of its own that registers a2a.stores.<name>: a caddy.Module
// implementing StoreModule (and caddyfile.Unmarshaler for `store <name>
// …` in a Caddyfile). The module opens a store; the handler keeps it,
// with its runner and push dispatcher, in one pool that outlives
// reloads. MemoryStore is the built-in one.
func init() {
	caddy.RegisterModule(MemoryStore{})
}

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
	if share := shareName(st); share != "" {
		// No scope starts with "share ".
		scope = "share " + share
	}
	return string(st.CaddyModule().ID) + "|" + st.StoreKey() + "|" + strconv.Itoa(env.MaxTasksPerOwner) + "|" +
		strconv.Itoa(env.MaxEventsPerTask) + "|" + scope
}

// takeBackend takes the backend of st in env from the pool (opening its
// store on first use) for a mount whose scope is scope; the mount's
// Cleanup gives it back (backends.Delete(key)).
func takeBackend(st StoreModule, env StoreEnv, scope string) (b *handler.Backend, key string, err error) {
	key = backendKey(st, env, scope)
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

// Defaults of the memory store, which store/memory applies: the module
// writes them into its pool key so that an explicit default and an
// omitted setting share one store.
const (
	DefaultMaxTasks = memory.DefaultMaxTasks
	DefaultMaxBytes = memory.DefaultMaxBytes
	DefaultTTL      = memory.DefaultTTL
	DefaultIdleTTL  = memory.DefaultIdleTTL
)

// maxStoreBytes caps a store's max_bytes (1 TiB): a machine's memory, not
// one request's.
const maxStoreBytes = 1 << 40

// maxShareName bounds a share name: it is a label, not data.
const maxShareName = 64

// MemoryStore is the store module a2a.stores.memory: tasks in this
// process, bounded in count, bytes and time. Its store and runner live in
// a pool that outlives config reloads.
type MemoryStore struct {
	// MaxTasks bounds how many tasks are held. Default: 10000.
	MaxTasks int `json:"max_tasks,omitempty"`
	// TTL is how long a finished task is kept after its last update.
	// Default: 1h.
	TTL caddy.Duration `json:"ttl,omitempty"`
	// IdleTTL is how long a task waiting for the client (input-required,
	// auth-required) is kept after its last update. Default: 24h.
	IdleTTL caddy.Duration `json:"idle_ttl,omitempty"`
	// MaxBytes bounds what the tasks hold in memory, snapshots and event
	// logs, counted as content bytes plus a small overhead per task and
	// event, at most 1TiB. Over it, finished tasks are evicted (oldest
	// first); a new task that still does not fit is refused with -32080.
	// Default: 256MiB.
	MaxBytes int64 `json:"max_bytes,omitempty"`
	// Share names the sharing scope of the mount's tasks, owner names and
	// contexts: mounts with the same name (and the same store settings)
	// share them, across sites. Without it the scope is the store
	// settings, the upstream and the RPC path, and two mounts of one
	// config with the same scope are refused. At most 64 characters of
	// A-Z, a-z, 0-9, '.', '_' and '-'.
	Share string `json:"share,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (MemoryStore) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "a2a.stores.memory",
		New: func() caddy.Module { return new(MemoryStore) },
	}
}

// Provision fills the defaults.
func (m *MemoryStore) Provision(caddy.Context) error {
	m.fill()
	return nil
}

// OpenStore opens a memory store of m's settings.
func (m *MemoryStore) OpenStore(env StoreEnv) (store.Store, error) {
	return memory.New(memory.Options{
		MaxTasks:         m.MaxTasks,
		MaxBytes:         m.MaxBytes,
		MaxTasksPerOwner: env.MaxTasksPerOwner,
		MaxEventsPerTask: env.MaxEventsPerTask,
		TTL:              time.Duration(m.TTL),
		IdleTTL:          time.Duration(m.IdleTTL),
	}), nil
}

// fill applies the defaults.
func (m *MemoryStore) fill() {
	if m.MaxTasks == 0 {
		m.MaxTasks = DefaultMaxTasks
	}
	if m.MaxBytes == 0 {
		m.MaxBytes = DefaultMaxBytes
	}
	if m.TTL == 0 {
		m.TTL = caddy.Duration(DefaultTTL)
	}
	if m.IdleTTL == 0 {
		m.IdleTTL = caddy.Duration(DefaultIdleTTL)
	}
}

// StoreKey names m's settings, defaults filled.
func (m *MemoryStore) StoreKey() string {
	return strconv.Itoa(m.MaxTasks) + "|" + strconv.FormatInt(m.MaxBytes, 10) +
		"|" + time.Duration(m.TTL).String() + "|" + time.Duration(m.IdleTTL).String()
}

// Validate checks the settings.
func (m *MemoryStore) Validate() error {
	if m.Share != "" {
		if err := checkShareName(m.Share); err != nil {
			return fmt.Errorf("share: %w", err)
		}
	}
	switch {
	case m.MaxTasks < 0:
		return errors.New("max_tasks must be positive")
	case m.MaxBytes < 0:
		return errors.New("max_bytes must be positive")
	case m.MaxBytes > maxStoreBytes:
		return errors.New("max_bytes must be at most 1TiB")
	case m.TTL < 0:
		return errors.New("ttl must be positive")
	case m.IdleTTL < 0:
		return errors.New("idle_ttl must be positive")
	}
	return nil
}

// ShareName is the share, "" for none.
func (m *MemoryStore) ShareName() string { return m.Share }

// UnmarshalCaddyfile parses
//
//	store memory {
//		max_tasks <n>
//		max_bytes <size>
//		ttl       <duration>
//		idle_ttl  <duration>
//		share     <name>
//	}
func (m *MemoryStore) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the store type
	// Where the block's errors are reported.
	block := *d
	if d.NextArg() {
		return d.ArgErr()
	}
	if err := subdirectives(d, "store", nil, func(key string) error {
		var err error
		switch key {
		case "max_tasks":
			m.MaxTasks, err = countArg(d)
		case "max_bytes":
			m.MaxBytes, err = sizeArg(d, "e.g. 256MiB, at most 1TiB")
		case "ttl":
			m.TTL, err = durationArg(d)
		case "idle_ttl":
			m.IdleTTL, err = durationArg(d)
		case "share":
			m.Share, err = oneArg(d)
		default:
			return unknownSubdirective(d, "store", key, storeKeys)
		}
		return err
	}); err != nil {
		return err
	}
	// Validate's check, on the settings as Provision fills them, so that
	// the message names the line.
	c := *m
	c.fill()
	if err := c.Validate(); err != nil {
		return block.WrapErr(err)
	}
	return nil
}

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

// The backend pool cannot tell two mounts of one config apart from a
// config and its reload (a reload provisions the new config before the
// old one lets go, so both hold a reference), so the mounts of each
// config load claim their sharing scope here. A config is known by the
// Done channel of its caddy.Context: Caddy makes one cancelable context
// per config load (caddy.go provisionContext), and every module of that
// config is provisioned with it or with a context.WithValue of it (the
// HTTP app adds its server), whose Done is the same channel.
var scopes = struct {
	sync.Mutex
	byConfig map[<-chan struct{}]map[string]*scopeClaim
}{byConfig: map[<-chan struct{}]map[string]*scopeClaim{}}

// scopeClaim is the hold of one config's mounts on one sharing scope.
type scopeClaim struct {
	key   string // the store key of the mounts: share name and store settings
	first string // the first mount, for messages
	n     int    // mounts holding it
}

// mountClaim is what a provisioned mount releases in Cleanup.
type mountClaim struct {
	config <-chan struct{}
	scope  string
}

// claimScope registers h (whose backend's pool key is key, its store's
// share share) in the sharing scope it uses within the config of ctx. It
// refuses a second mount of the same config in a scope that no share
// names (both would silently hold one task store and one owner
// namespace), and a mount that names a share another mount of the config
// uses with other store settings. It returns nil, nil when
// ctx belongs to no config load (a context that is never canceled), where
// there is nothing to compare with.
func (h *Handler) claimScope(ctx caddy.Context, key, share string) (*mountClaim, error) {
	config := ctx.Done()
	if config == nil {
		return nil, nil
	}
	scope := key
	if share != "" {
		scope = "share " + share
	}
	desc := h.describeMount(ctx)

	scopes.Lock()
	defer scopes.Unlock()
	claims := scopes.byConfig[config]
	if claims == nil {
		claims = map[string]*scopeClaim{}
		scopes.byConfig[config] = claims
	}
	c := claims[scope]
	switch {
	case c == nil:
		claims[scope] = &scopeClaim{key: key, first: desc, n: 1}
	case share == "":
		return nil, fmt.Errorf("%s and %s would share one task store and one owner namespace (the same upstream %s, "+
			"rpc_path and store settings), so a user of one could reach the other's tasks; set `share <name>` in "+
			"the store block of both: the same name to share their tasks, different names to keep them apart",
			desc, c.first, h.upstream.Target())
	case c.key != key:
		return nil, fmt.Errorf("share %q: %s and %s use it with different store settings (the store block, or the limits the store enforces: max_tasks_per_owner, max_run_events); mounts sharing a store "+
			"must configure it alike (or use different share names)", share, desc, c.first)
	default:
		c.n++
	}
	return &mountClaim{config: config, scope: scope}, nil
}

// release drops the claim (nil: no claim).
func (m *mountClaim) release() {
	if m == nil {
		return
	}
	scopes.Lock()
	defer scopes.Unlock()
	claims := scopes.byConfig[m.config]
	if c := claims[m.scope]; c != nil {
		if c.n--; c.n <= 0 {
			delete(claims, m.scope)
		}
	}
	if len(claims) == 0 {
		delete(scopes.byConfig, m.config)
	}
}

// describeMount names h for an operator: a handler cannot see its site's
// address, but it knows its HTTP server (its name and listen addresses),
// its card name, RPC path and upstream.
func (h *Handler) describeMount(ctx caddy.Context) string {
	where := "outside any HTTP server"
	if srv, ok := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server); ok && srv != nil {
		where = "in server " + srv.Name()
		if len(srv.Listen) > 0 {
			where += " (" + strings.Join(srv.Listen, " ") + ")"
		}
	}
	return fmt.Sprintf("the a2a mount %q %s at rpc_path %s", h.Name, where, h.RPCPath)
}

// Interface guards.
var (
	_ StoreModule           = (*MemoryStore)(nil)
	_ caddy.Provisioner     = (*MemoryStore)(nil)
	_ caddy.Validator       = (*MemoryStore)(nil)
	_ caddyfile.Unmarshaler = (*MemoryStore)(nil)
	_ StoreSharer           = (*MemoryStore)(nil)
	_ caddy.Destructor      = pooledBackend{}
)

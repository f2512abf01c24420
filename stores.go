package caddya2a

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/memory"
)

// Stores are guest modules of the namespace a2a.stores, loaded from the
// handler's "store" (inline key "type"). A third party adds one with a
// package of its own that registers a2a.stores.<name>: a caddy.Module
// implementing StoreModule (and caddyfile.Unmarshaler for `store <name>
// …` in a Caddyfile), whose Provision reads its StoreEnv, takes its
// Backend from a caddy.UsagePool of its own under StoreEnv.Key and whose
// Cleanup releases it. MemoryStore is the built-in one.
func init() {
	caddy.RegisterModule(MemoryStore{})
}

// StoreModule is what the a2a handler needs of a store guest module.
type StoreModule interface {
	caddy.Module
	// Backend is the store and the runner whose runs write to it, taken
	// from the module's pool in Provision.
	Backend() *Backend
	// Key identifies the backend: StoreEnv.Key of the module's settings.
	// Mounts with the same key share one backend, its tasks, owner names
	// and contexts (two mounts of one config only if they name a share).
	Key() string
	// ShareName is the share of the store's settings, "" for none.
	ShareName() string
}

// StoreEnv is what the a2a handler tells the store module it loads: the
// limits the store enforces for it and the mount's sharing scope. A store
// module reads it in Provision with StoreEnvOf.
type StoreEnv struct {
	// Scope is the mount's sharing scope when the store names no share:
	// its upstream and its RPC path.
	Scope string
	// MaxTasksPerOwner bounds the tasks the store keeps for one caller
	// (0: the store's default).
	MaxTasksPerOwner int
	// MaxEventsPerTask bounds one task's event log.
	MaxEventsPerTask int
}

// storeEnvKey is the caddy.Context key of the StoreEnv.
type storeEnvKey struct{}

// StoreEnvOf returns the StoreEnv the handler gave the store module that
// ctx provisions (the zero StoreEnv outside an a2a handler).
func StoreEnvOf(ctx caddy.Context) StoreEnv {
	env, _ := ctx.Value(storeEnvKey{}).(StoreEnv)
	return env
}

// Key is the pool key of a backend whose store has settings (the store
// module's name and every setting that changes what it keeps, with
// defaults filled so that an explicit default and an omitted setting
// share a backend) and the share name share: those, the limits the store
// enforces, and the sharing scope (the share, else Scope). Changing any
// part on reload starts an empty store; the old one closes with the old
// config.
func (e StoreEnv) Key(settings, share string) string {
	scope := "|" + e.Scope
	if share != "" {
		// No Scope starts with "share ".
		scope = "|share " + share
	}
	return settings + "|" + strconv.Itoa(e.MaxTasksPerOwner) + "|" + strconv.Itoa(e.MaxEventsPerTask) + scope
}

// Backend is a store with the runner whose runs write to it. They share a
// lifetime: runs outlive requests and configs, not the store. It is the
// reload-surviving state a store module keeps in its caddy.UsagePool: a
// reload provisions the new config (taking a reference) before cleaning
// up the old one (dropping its reference), so a store whose key is
// unchanged is never closed and its tasks and in-flight runs carry on.
type Backend struct {
	store  store.Store
	runner *handler.Runner
	// log is where the runner logs: the logger of the newest config using
	// this backend (the handler sets it), so logs follow reloads of the
	// logging config.
	log *atomic.Pointer[zap.Logger]
	// mount names the last mount that took the backend, for the warning
	// of Destruct.
	mount atomic.Pointer[string]
	// contextKey keys the context ids the agent sees (handler
	// Options.ContextKey): it lives as long as the tasks whose contexts
	// it names. A shared store's is asked of it by every send
	// (contextKeyFunc; the store keeps it), nil here.
	contextKey     []byte
	contextKeyFunc func(context.Context) ([]byte, error)
	// push is the dispatcher of the push notifications of its tasks.
	push pushState
}

// NewBackend gives st a runner and a context key. Put it in a
// caddy.UsagePool: it is a caddy.Destructor.
func NewBackend(st store.Store) *Backend {
	cur := new(atomic.Pointer[zap.Logger])
	cur.Store(zap.NewNop())
	return &Backend{
		store:      st,
		runner:     handler.NewRunner(zap.New(&liveCore{cur: cur})),
		log:        cur,
		contextKey: handler.NewContextKey(),
	}
}

// NewSharedBackend is NewBackend for a store shared by several processes
// (store.Secrets): the context key is the store's, the same in every
// process, so that a task continued on another replica keeps its context
// at the agent. It is asked of the store by every send, not read here:
// Caddy starts while the store's server is down, and only the sends made
// before it is back fail; and a store that lost the key (Redis restarted
// without persistence) gives the one its processes agreed on since.
func NewSharedBackend(st store.Secrets) (*Backend, error) {
	s, ok := st.(store.Store)
	if !ok {
		return nil, errors.New("a2a: NewSharedBackend of something that is not a store")
	}
	b := NewBackend(s)
	b.contextKey = nil
	b.contextKeyFunc = func(ctx context.Context) ([]byte, error) {
		key, err := st.Secret(ctx, "context-key", handler.ContextKeySize)
		if err != nil {
			return nil, fmt.Errorf("the store's shared context key: %w", err)
		}
		return key, nil
	}
	return b, nil
}

// heldCounter is a store that can say what closing it drops (the memory
// store's Held).
type heldCounter interface {
	Held() (total, waiting, running int)
}

// Destruct ends the runs, then closes the store they wrote to. The last
// config using the backend has let go of it: a reload changed what its
// key is made of (the store's settings, the upstream, rpc_path, the share
// or the limits the store enforces), so the tasks it holds are lost, and
// a store that can count them says how many in a warning. When Caddy
// exits, the tasks of a process-local store go with it, as the operator
// expects, and nothing is said.
func (b *Backend) Destruct() error {
	if c, ok := b.store.(heldCounter); ok && !caddy.Exiting() {
		if total, waiting, running := c.Held(); total > 0 {
			var mount string
			if m := b.mount.Load(); m != nil {
				mount = *m
			}
			b.log.Load().Warn("a2a: config change dropped a task store with its tasks (a new store starts empty); "+
				"to keep tasks across a change of upstream or rpc_path, name the store's share (store memory { share <name> })",
				zap.Int("tasks", total), zap.Int("waiting", waiting), zap.Int("running", running), zap.String("last_mount", mount))
		}
	}
	err := b.runner.Close()
	// After the runs: their last writes queue notifications too.
	b.closePush()
	return errors.Join(err, b.store.Close())
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

	key     string
	backend *Backend
}

// memoryStores holds the backends of the memory store modules.
var memoryStores = caddy.NewUsagePool()

// CaddyModule returns the Caddy module information.
func (MemoryStore) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "a2a.stores.memory",
		New: func() caddy.Module { return new(MemoryStore) },
	}
}

// Provision fills the defaults and takes the backend of its key from the
// pool, creating it on first use.
func (m *MemoryStore) Provision(ctx caddy.Context) error {
	m.fill()
	env := StoreEnvOf(ctx)
	key := m.keyIn(env)
	v, _, err := memoryStores.LoadOrNew(key, func() (caddy.Destructor, error) {
		return NewBackend(memory.New(memory.Options{
			MaxTasks:         m.MaxTasks,
			MaxBytes:         m.MaxBytes,
			MaxTasksPerOwner: env.MaxTasksPerOwner,
			MaxEventsPerTask: env.MaxEventsPerTask,
			TTL:              time.Duration(m.TTL),
			IdleTTL:          time.Duration(m.IdleTTL),
		})), nil
	})
	if err != nil {
		return err
	}
	m.key, m.backend = key, v.(*Backend)
	return nil
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

// keyIn is the pool key of m's settings (defaults filled) in env.
func (m *MemoryStore) keyIn(env StoreEnv) string {
	return env.Key("memory|"+strconv.Itoa(m.MaxTasks)+"|"+strconv.FormatInt(m.MaxBytes, 10)+
		"|"+time.Duration(m.TTL).String()+"|"+time.Duration(m.IdleTTL).String(), m.Share)
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

// Cleanup drops this config's hold on the backend; the last one closes
// it. It is also called after a failed Provision or Validate.
func (m *MemoryStore) Cleanup() error {
	if m.key == "" {
		return nil
	}
	key := m.key
	m.key, m.backend = "", nil
	_, err := memoryStores.Delete(key)
	return err
}

// Backend is the store and runner taken in Provision.
func (m *MemoryStore) Backend() *Backend { return m.backend }

// Key identifies the backend.
func (m *MemoryStore) Key() string { return m.key }

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

// claimScope registers h (whose store is st) in the sharing scope it uses
// within the config of ctx. It refuses a second mount of the same config
// in a scope that no share names (both would silently hold one task store
// and one owner namespace), and a mount that names a share another mount
// of the config uses with other store settings. It returns nil, nil when
// ctx belongs to no config load (a context that is never canceled), where
// there is nothing to compare with.
func (h *Handler) claimScope(ctx caddy.Context, st StoreModule) (*mountClaim, error) {
	config := ctx.Done()
	if config == nil {
		return nil, nil
	}
	key, share := st.Key(), st.ShareName()
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

// liveCore is a zap core that writes through the core of the logger
// currently stored in cur: the runner is created once but must log with the
// newest config's logging setup, not with sinks an old config closed.
type liveCore struct {
	cur    *atomic.Pointer[zap.Logger]
	fields []zapcore.Field
}

func (c *liveCore) core() zapcore.Core { return c.cur.Load().Core() }

// Enabled reports whether the current core logs at l.
func (c *liveCore) Enabled(l zapcore.Level) bool { return c.core().Enabled(l) }

// With returns a core that adds fields to every entry.
func (c *liveCore) With(fields []zapcore.Field) zapcore.Core {
	return &liveCore{cur: c.cur, fields: append(slices.Clip(c.fields), fields...)}
}

// Check adds c to ce if the current core would log e.
func (c *liveCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

// Write hands e with the accumulated fields to the current core, through
// its own Check so its filters and sinks apply. The logger name comes from
// the current logger, so entries read as the module's own.
func (c *liveCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	l := c.cur.Load()
	if e.LoggerName == "" {
		e.LoggerName = l.Name()
	}
	core := l.Core()
	if len(c.fields) > 0 {
		core = core.With(c.fields)
	}
	if ce := core.Check(e, nil); ce != nil {
		ce.Write(fields...)
	}
	return nil
}

// Sync flushes the current core.
func (c *liveCore) Sync() error { return c.core().Sync() }

// Interface guards.
var (
	_ StoreModule           = (*MemoryStore)(nil)
	_ caddy.Provisioner     = (*MemoryStore)(nil)
	_ caddy.Validator       = (*MemoryStore)(nil)
	_ caddy.CleanerUpper    = (*MemoryStore)(nil)
	_ caddyfile.Unmarshaler = (*MemoryStore)(nil)
	_ caddy.Destructor      = (*Backend)(nil)
)

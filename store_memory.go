package caddya2a

import (
	"errors"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/memory"
)

// init registers a2a.stores.memory.
func init() {
	caddy.RegisterModule(MemoryStore{})
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
	if m.MaxTasks < 0 {
		return errors.New("max_tasks must be positive")
	}
	if err := checkMaxBytes(m.MaxBytes); err != nil {
		return err
	}
	return checkStoreSettings(m.Share, m.TTL, m.IdleTTL)
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

// Interface guards.
var (
	_ StoreModule           = (*MemoryStore)(nil)
	_ caddy.Provisioner     = (*MemoryStore)(nil)
	_ caddy.Validator       = (*MemoryStore)(nil)
	_ caddyfile.Unmarshaler = (*MemoryStore)(nil)
	_ StoreSharer           = (*MemoryStore)(nil)
	_ caddy.Destructor      = pooledBackend{}
)

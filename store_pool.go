package caddya2a

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/memory"
)

// Store configures where tasks are kept.
type Store struct {
	// Type is the store kind; only "memory" exists so far. Default: memory.
	Type string `json:"type,omitempty"`
	// MaxTasks bounds how many tasks are held (memory). Default: 10000.
	MaxTasks int `json:"max_tasks,omitempty"`
	// TTL is how long a finished task is kept after its last update
	// (memory). Default: 1h.
	TTL caddy.Duration `json:"ttl,omitempty"`
	// IdleTTL is how long a task waiting for the client (input-required,
	// auth-required) is kept after its last update (memory). Default: 24h.
	IdleTTL caddy.Duration `json:"idle_ttl,omitempty"`
	// MaxBytes bounds what the tasks hold in memory, snapshots and event
	// logs, counted as content bytes plus a small overhead per task and
	// event. Over it, finished tasks are evicted (oldest first); a new
	// task that still does not fit is refused with -32080. Default: 256MiB.
	MaxBytes int64 `json:"max_bytes,omitempty"`
	// Share names the sharing scope of the mount's tasks, owner names and
	// contexts: mounts with the same name (and the same store settings)
	// share them, across sites. Without it the scope is the store
	// settings, the upstream URL and the RPC path, and two mounts of one
	// config with the same scope are refused. At most 64 characters of
	// A-Z, a-z, 0-9, '.', '_' and '-'.
	Share string `json:"share,omitempty"`
}

// Defaults of the memory store, written into the pool key so that an
// explicit default and an omitted setting share one store.
const (
	DefaultMaxTasks = 10000
	DefaultMaxBytes = 256 << 20
	DefaultTTL      = time.Hour
	DefaultIdleTTL  = 24 * time.Hour
)

func (s *Store) applyDefaults() error {
	if s.Type == "" {
		s.Type = "memory"
	}
	if s.Type != "memory" {
		return fmt.Errorf("store: unknown type %q (only memory is available)", s.Type)
	}
	if s.Share != "" {
		if err := checkShareName(s.Share); err != nil {
			return fmt.Errorf("store: share: %w", err)
		}
	}
	if err := defaulted(&s.MaxTasks, DefaultMaxTasks, "store: max_tasks must be positive"); err != nil {
		return err
	}
	if err := defaulted(&s.MaxBytes, DefaultMaxBytes, "store: max_bytes must be positive"); err != nil {
		return err
	}
	if s.MaxBytes > maxStoreBytes {
		return errors.New("store: max_bytes must be at most 1TiB")
	}
	if err := defaulted(&s.TTL, caddy.Duration(DefaultTTL), "store: ttl must be positive"); err != nil {
		return err
	}
	return defaulted(&s.IdleTTL, caddy.Duration(DefaultIdleTTL), "store: idle_ttl must be positive")
}

// backends holds the store and runner of every mount across config
// reloads: a reload provisions the new config (taking a reference) before
// cleaning up the old one (dropping its reference), so a store whose key
// is unchanged is never closed and its tasks and in-flight runs carry on.
var backends = caddy.NewUsagePool()

// backend is a store with the runner whose runs write to it. They share a
// lifetime: runs outlive requests and configs, not the store.
type backend struct {
	store  store.Store
	runner *handler.Runner
	// log is where the runner logs: the logger of the newest config using
	// this backend, so logs follow reloads of the logging config.
	log *atomic.Pointer[zap.Logger]
	// contextKey keys the context ids the agent sees (handler
	// Options.ContextKey): it lives as long as the tasks whose contexts
	// it names.
	contextKey []byte
}

// Destruct ends the runs, then closes the store they wrote to.
func (b *backend) Destruct() error {
	return errors.Join(b.runner.Close(), b.store.Close())
}

// storeKey identifies the backend a mount uses: its store settings and
// its sharing scope, which is the share name if set, else its upstream (as
// resolved) and its RPC path. Mounts with the same key share tasks (two in
// one config only if they name the share: see claimScope); changing any
// part of it on reload starts an empty store (the old one is closed with
// the old config).
func (h *Handler) storeKey() string {
	scope := "|" + h.Upstream.target + "|" + h.RPCPath
	if h.Store.Share != "" {
		// No upstream URL starts with "share ".
		scope = "|share " + h.Store.Share
	}
	// The store's settings, and the limits the store enforces.
	return h.Store.Type + "|" + strconv.Itoa(h.Store.MaxTasks) + "|" + strconv.FormatInt(h.Store.MaxBytes, 10) +
		"|" + durationString(h.Store.TTL) + "|" + durationString(h.Store.IdleTTL) +
		"|" + strconv.Itoa(h.Limits.tasksPerOwner()) + "|" + strconv.Itoa(h.Limits.runEvents()) + scope
}

// loadBackend returns the backend for key, creating it on first use, and
// points its log at logger.
func loadBackend(key string, cfg *Store, limits *Limits, logger *zap.Logger) (*backend, error) {
	v, _, err := backends.LoadOrNew(key, func() (caddy.Destructor, error) {
		cur := new(atomic.Pointer[zap.Logger])
		cur.Store(logger)
		st := memory.New(memory.Options{
			MaxTasks:         cfg.MaxTasks,
			MaxBytes:         cfg.MaxBytes,
			MaxTasksPerOwner: limits.tasksPerOwner(),
			// A log holds the current turn (max_run_events) and a few
			// events for each earlier one, which the store compacts.
			MaxEventsPerTask: 2 * limits.runEvents(),
			TTL:              time.Duration(cfg.TTL),
			IdleTTL:          time.Duration(cfg.IdleTTL),
		})
		runLog := zap.New(&liveCore{cur: cur})
		return &backend{store: st, runner: handler.NewRunner(runLog), log: cur, contextKey: handler.NewContextKey()}, nil
	})
	if err != nil {
		return nil, err
	}
	b := v.(*backend)
	b.log.Store(logger)
	return b, nil
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

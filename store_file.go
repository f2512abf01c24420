package caddya2a

import (
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/filestore"
)

func init() {
	caddy.RegisterModule(FileStore{})
}

// DefaultFileMaxBytes is the file store's max_bytes (1GiB), which
// store/filestore applies too.
const DefaultFileMaxBytes = filestore.DefaultMaxBytes

// FileStore is the store module a2a.stores.file: tasks in a file of a
// directory of this Caddy, on disk before a caller is told of them, so
// that they survive a restart or a kill -9. One Caddy process per
// directory: a second is refused at load. The store's file stays open
// across reloads (filestore keeps one open database per path in the
// process, however many configs and mounts use it).
type FileStore struct {
	// Dir is the directory of the store's file (tasks.db), made if
	// missing. Global placeholders such as {env.A2A_DIR} are resolved at
	// provision. Default: Caddy's data directory + /a2a.
	Dir string `json:"dir,omitempty"`
	// TTL is how long a finished task is kept after its last update.
	// Default: 1h.
	TTL caddy.Duration `json:"ttl,omitempty"`
	// IdleTTL is how long a task waiting for the client (input-required,
	// auth-required) is kept after its last update. Default: 24h.
	IdleTTL caddy.Duration `json:"idle_ttl,omitempty"`
	// MaxBytes bounds what a scope's tasks hold in the file (snapshots,
	// event logs, push configs, as encoded, plus a small overhead per
	// task and record), at most 1TiB. Over it finished tasks are evicted
	// (oldest first); a new task that still does not fit is refused
	// with -32080. Default: 1GiB.
	MaxBytes int64 `json:"max_bytes,omitempty"`
	// Share names the sharing scope, as the memory store's does; the
	// scopes of one directory never see each other's tasks.
	Share string `json:"share,omitempty"`

	dir string
}

// CaddyModule returns the Caddy module information.
func (FileStore) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "a2a.stores.file",
		New: func() caddy.Module { return new(FileStore) },
	}
}

// Provision resolves the directory and fills the defaults.
func (m *FileStore) Provision(caddy.Context) error {
	dir, err := resolveGlobal(caddy.NewReplacer(), m.Dir)
	if err != nil {
		return fmt.Errorf("dir: %w", err)
	}
	m.dir = dir
	m.fill()
	return nil
}

// fill applies the defaults; the directory is made absolute, so that
// one directory named two ways is one store key.
func (m *FileStore) fill() {
	if m.dir == "" {
		m.dir = filepath.Join(caddy.AppDataDir(), "a2a")
	}
	if abs, err := filepath.Abs(m.dir); err == nil {
		m.dir = abs
	}
	if m.TTL == 0 {
		m.TTL = caddy.Duration(DefaultTTL)
	}
	if m.IdleTTL == 0 {
		m.IdleTTL = caddy.Duration(DefaultIdleTTL)
	}
	if m.MaxBytes == 0 {
		m.MaxBytes = DefaultFileMaxBytes
	}
}

// OpenStore opens the store of the mount's scope in m's directory: the
// file once per process, whatever the number of stores on it.
func (m *FileStore) OpenStore(env StoreEnv) (store.Store, error) {
	return filestore.Open(m.dir, filestore.Options{
		Scope:            env.Scope,
		TTL:              time.Duration(m.TTL),
		IdleTTL:          time.Duration(m.IdleTTL),
		MaxBytes:         m.MaxBytes,
		MaxTasksPerOwner: env.MaxTasksPerOwner,
		MaxEventsPerTask: env.MaxEventsPerTask,
	})
}

// StoreKey names m's settings, defaults filled.
func (m *FileStore) StoreKey() string {
	return m.dir + "|" + time.Duration(m.TTL).String() + "|" + time.Duration(m.IdleTTL).String() + "|" + strconv.FormatInt(m.MaxBytes, 10)
}

// Validate checks the settings.
func (m *FileStore) Validate() error {
	if err := checkMaxBytes(m.MaxBytes); err != nil {
		return err
	}
	return checkStoreSettings(m.Share, m.TTL, m.IdleTTL)
}

// ShareName is the share, "" for none.
func (m *FileStore) ShareName() string { return m.Share }

// fileStoreKeys are the subdirectives of `store file`.
var fileStoreKeys = []string{"ttl", "idle_ttl", "max_bytes", "share"}

// UnmarshalCaddyfile parses
//
//	store file [<dir>] {
//		ttl       <duration>
//		idle_ttl  <duration>
//		max_bytes <size>
//		share     <name>
//	}
func (m *FileStore) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the store type
	block := *d
	if d.NextArg() {
		m.Dir = d.Val()
		if d.NextArg() {
			return d.ArgErr()
		}
	}
	if err := subdirectives(d, "store", nil, func(key string) error {
		var err error
		switch key {
		case "ttl":
			m.TTL, err = durationArg(d)
		case "idle_ttl":
			m.IdleTTL, err = durationArg(d)
		case "max_bytes":
			m.MaxBytes, err = sizeArg(d, "e.g. 1GiB, at most 1TiB")
		case "share":
			m.Share, err = oneArg(d)
		default:
			return unknownSubdirective(d, "store", key, fileStoreKeys)
		}
		return err
	}); err != nil {
		return err
	}
	// Validate's check, on the settings as Provision fills them.
	c := *m
	c.fill()
	if err := c.Validate(); err != nil {
		return block.WrapErr(err)
	}
	return nil
}

// Interface guards.
var (
	_ StoreModule           = (*FileStore)(nil)
	_ caddy.Provisioner     = (*FileStore)(nil)
	_ caddy.Validator       = (*FileStore)(nil)
	_ caddyfile.Unmarshaler = (*FileStore)(nil)
	_ StoreSharer           = (*FileStore)(nil)
)

package caddya2a

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/pgstore"
)

func init() {
	caddy.RegisterModule(PostgresStore{})
}

// Defaults of the PostgreSQL store the module writes into its pool key
// (the package applies the same).
const (
	DefaultPostgresSchema   = pgstore.DefaultSchema
	DefaultPostgresTimeout  = pgstore.DefaultTimeout
	DefaultPostgresLease    = pgstore.DefaultLease
	DefaultPostgresMaxConns = pgstore.DefaultMaxConns
)

// PostgresStore is the store module a2a.stores.postgres: tasks in a
// PostgreSQL database, shared by every Caddy whose store has the same
// DSN, schema and share, and kept through a crash of the server (what
// was acknowledged is committed). Its store and runner live in a pool
// that outlives config reloads.
type PostgresStore struct {
	// DSN is the server, as libpq spells it: a URL
	// (postgres://user:pass@host:port/db?sslmode=verify-full) or
	// keyword=value pairs. Global placeholders such as {env.PG_PASSWORD}
	// are resolved once at provision: written with one for the password,
	// the DSN `caddy adapt` prints (the JSON config, as written) holds no
	// password. Required. Logs and errors show it without the password.
	DSN string `json:"dsn,omitempty"`
	// Schema holds the store's tables (made, and migrated, at start):
	// letters, digits and _, at most 63 bytes. Default: a2a.
	Schema string `json:"schema,omitempty"`
	// Share names the sharing scope (see the memory store's): mounts and
	// replicas with the same DSN, schema and share share their tasks,
	// others never do, in one schema too, since the share is part of
	// every row's key. Without it the scope is the schema's.
	Share string `json:"share,omitempty"`
	// TTL is how long a finished task is kept. Default: 1h.
	TTL caddy.Duration `json:"ttl,omitempty"`
	// IdleTTL is how long an input-required or auth-required task is
	// kept. Default: 24h.
	IdleTTL caddy.Duration `json:"idle_ttl,omitempty"`
	// Lease is how long this process's claim on a task it runs lasts
	// unrenewed (it renews every third of it): when a replica dies,
	// another records its running tasks failed once their leases lapse.
	// Default: 10s.
	Lease caddy.Duration `json:"lease,omitempty"`
	// Timeout bounds every statement and the dial: a dead server is an
	// error (-32603 to the caller), never a hang. Default: 5s.
	Timeout caddy.Duration `json:"timeout,omitempty"`
	// MaxConns bounds the connections of the pool, plus one for LISTEN.
	// Default: 10.
	MaxConns int `json:"max_conns,omitempty"`

	dsn string
}

// CaddyModule returns the Caddy module information.
func (PostgresStore) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "a2a.stores.postgres",
		New: func() caddy.Module { return new(PostgresStore) },
	}
}

// Provision resolves the DSN and fills the defaults.
func (m *PostgresStore) Provision(caddy.Context) error {
	dsn, err := resolveGlobal(caddy.NewReplacer(), m.DSN)
	if err != nil {
		return fmt.Errorf("dsn: %w", err)
	}
	m.dsn = dsn
	m.fill()
	return nil
}

// OpenStore opens a PostgreSQL store of m's settings (a server that is
// down fails the sends made before it is back, not the config; one that
// refuses, a wrong password or a schema of a later build, fails it).
func (m *PostgresStore) OpenStore(env StoreEnv) (store.Store, error) {
	return pgstore.New(pgstore.Options{
		DSN:              m.dsn,
		Schema:           m.Schema,
		Share:            m.Share,
		TTL:              time.Duration(m.TTL),
		IdleTTL:          time.Duration(m.IdleTTL),
		MaxEventsPerTask: env.MaxEventsPerTask,
		MaxTasksPerOwner: env.MaxTasksPerOwner,
		Timeout:          time.Duration(m.Timeout),
		Lease:            time.Duration(m.Lease),
		MaxConns:         m.MaxConns,
	})
}

func (m *PostgresStore) fill() {
	if m.Schema == "" {
		m.Schema = DefaultPostgresSchema
	}
	if m.TTL == 0 {
		m.TTL = caddy.Duration(DefaultTTL)
	}
	if m.IdleTTL == 0 {
		m.IdleTTL = caddy.Duration(DefaultIdleTTL)
	}
	if m.Timeout == 0 {
		m.Timeout = caddy.Duration(DefaultPostgresTimeout)
	}
	if m.Lease == 0 {
		m.Lease = caddy.Duration(DefaultPostgresLease)
	}
	if m.MaxConns == 0 {
		m.MaxConns = DefaultPostgresMaxConns
	}
}

// StoreKey names m's settings (the DSN as resolved, which may hold a
// password: the key is never printed), defaults filled.
func (m *PostgresStore) StoreKey() string {
	return m.dsn + "|" + m.Schema + "|" + time.Duration(m.TTL).String() + "|" + time.Duration(m.IdleTTL).String() +
		"|" + time.Duration(m.Timeout).String() + "|" + time.Duration(m.Lease).String() + "|" + strconv.Itoa(m.MaxConns)
}

// Validate checks the settings.
func (m *PostgresStore) Validate() error { return m.check() }

func (m *PostgresStore) check() error {
	if _, err := pgstore.CheckDSN(m.dsn); err != nil {
		return fmt.Errorf("dsn: %s", strings.TrimPrefix(err.Error(), "pgstore: "))
	}
	if err := pgstore.CheckSchema(m.Schema); err != nil {
		return fmt.Errorf("schema: %s", strings.TrimPrefix(err.Error(), "pgstore: "))
	}
	if err := checkStoreSettings(m.Share, m.TTL, m.IdleTTL); err != nil {
		return err
	}
	switch {
	case m.Timeout < 0:
		return errors.New("timeout must be positive")
	case m.MaxConns < 0 || m.MaxConns > 1000:
		return errors.New("max_conns: want 1 to 1000")
	case m.Lease != 0 && m.Lease < caddy.Duration(time.Second):
		return errors.New("lease: want at least 1s")
	}
	return nil
}

// ShareName is the share, else the schema: mounts with one schema share
// their tasks on purpose (that is what the schema is for).
func (m *PostgresStore) ShareName() string {
	if m.Share != "" {
		return m.Share
	}
	return "postgres schema " + m.Schema
}

// postgresStoreKeys are the subdirectives of `store postgres`.
var postgresStoreKeys = []string{"schema", "share", "ttl", "idle_ttl", "lease", "timeout", "max_conns"}

// UnmarshalCaddyfile parses
//
//	store postgres <dsn> {
//		schema    <name>
//		share     <name>
//		ttl       <duration>
//		idle_ttl  <duration>
//		lease     <duration>
//		timeout   <duration>
//		max_conns <n>
//	}
func (m *PostgresStore) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the store type
	block := *d
	if !d.NextArg() {
		return d.ArgErr()
	}
	m.DSN = d.Val()
	if d.NextArg() {
		return d.ArgErr()
	}
	if err := subdirectives(d, "store", nil, func(key string) error {
		var err error
		switch key {
		case "schema":
			m.Schema, err = oneArg(d)
		case "share":
			m.Share, err = oneArg(d)
		case "ttl":
			m.TTL, err = durationArg(d)
		case "idle_ttl":
			m.IdleTTL, err = durationArg(d)
		case "lease":
			m.Lease, err = durationArg(d)
		case "timeout":
			m.Timeout, err = durationArg(d)
		case "max_conns":
			m.MaxConns, err = countArg(d)
		default:
			return unknownSubdirective(d, "store", key, postgresStoreKeys)
		}
		return err
	}); err != nil {
		return err
	}
	c := *m
	c.dsn = m.DSN
	c.fill()
	if strings.Contains(m.DSN, "{") {
		// Checked at provision, once the placeholders are resolved.
		c.dsn = "postgres://localhost/placeholder"
	}
	if err := c.check(); err != nil {
		return block.WrapErr(err)
	}
	return nil
}

// Interface guards.
var (
	_ StoreModule           = (*PostgresStore)(nil)
	_ StoreSharer           = (*PostgresStore)(nil)
	_ caddy.Provisioner     = (*PostgresStore)(nil)
	_ caddy.Validator       = (*PostgresStore)(nil)
	_ caddyfile.Unmarshaler = (*PostgresStore)(nil)
)

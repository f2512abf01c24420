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

	"github.com/caddy-a2a/caddy-a2a/store/redisstore"
)

func init() {
	caddy.RegisterModule(RedisStore{})
}

// Defaults of the Redis store the module writes into its pool key (the
// package applies the same).
const (
	DefaultRedisKeyPrefix = "a2a:"
	DefaultRedisTimeout   = 5 * time.Second
	DefaultRedisPoolSize  = 4
	DefaultRedisLease     = 10 * time.Second
)

// RedisStore is the store module a2a.stores.redis: tasks in a Redis (or
// Valkey) server, shared by every Caddy whose store has the same URL and
// key_prefix. Its store and runner live in a pool that outlives config
// reloads.
type RedisStore struct {
	// URL is the server: redis://[user:pass@]host:port[/db], rediss://
	// for TLS, or unix:///path/to/redis.sock[?db=N] for a server on the
	// same machine (no TCP). Global placeholders such as {env.REDIS_URL} are resolved
	// once at provision. Required. Its password is never printed by the
	// module (logs and errors show the URL without it).
	URL string `json:"url,omitempty"`
	// KeyPrefix starts every key and channel: stores with the same URL and
	// prefix share their tasks (identical replicas share by default).
	// Default: a2a:.
	KeyPrefix string `json:"key_prefix,omitempty"`
	// TTL is how long a finished task is kept. Default: 1h.
	TTL caddy.Duration `json:"ttl,omitempty"`
	// IdleTTL is how long an input-required or auth-required task is
	// kept. Default: 24h.
	IdleTTL caddy.Duration `json:"idle_ttl,omitempty"`
	// Timeout bounds each operation's round trips to Redis and the dial:
	// a dead server is an error (-32603 to the caller), never a hang.
	// Default: 5s.
	Timeout caddy.Duration `json:"timeout,omitempty"`
	// Lease is how long this process's claim on a task it runs lasts
	// unrenewed (it renews every third of it): when a replica dies, another
	// records its running tasks failed once their leases lapse, within
	// about 1.5 leases. Default: 10s.
	Lease caddy.Duration `json:"lease,omitempty"`
	// PoolSize is how many connections commands are pipelined over, plus
	// one for subscriptions. Default: 4.
	PoolSize int `json:"pool_size,omitempty"`
	// Cluster: the URL names a node of a Redis Cluster (any one; the
	// others are learned from it; ?addr= names more seeds). All keys of a
	// prefix are in one slot, so one prefix lives on one shard; several
	// prefixes spread.
	Cluster bool `json:"cluster,omitempty"`
	// Share names the sharing scope (see the memory store's): mounts and
	// replicas with the same URL, key_prefix and share share their tasks,
	// others never do, on one server and prefix too, since the share is
	// part of every key and channel. Without it the scope is the key
	// prefix, and the keys are the prefix's alone (those of a store made
	// before shares).
	Share string `json:"share,omitempty"`

	url string
}

// CaddyModule returns the Caddy module information.
func (RedisStore) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "a2a.stores.redis",
		New: func() caddy.Module { return new(RedisStore) },
	}
}

// Provision resolves the URL and fills the defaults.
func (m *RedisStore) Provision(caddy.Context) error {
	u, err := resolveGlobal(caddy.NewReplacer(), m.URL)
	if err != nil {
		return fmt.Errorf("url: %w", err)
	}
	m.url = u
	m.fill()
	return nil
}

// OpenStore connects a Redis store of m's settings (the client connects
// on its own: a Redis that is down fails the sends made before it is
// back, not the config).
func (m *RedisStore) OpenStore(env StoreEnv) (store.Store, error) {
	return redisstore.New(redisstore.Options{
		URL:              m.url,
		KeyPrefix:        m.KeyPrefix,
		Share:            m.Share,
		TTL:              time.Duration(m.TTL),
		IdleTTL:          time.Duration(m.IdleTTL),
		MaxEventsPerTask: env.MaxEventsPerTask,
		MaxTasksPerOwner: env.MaxTasksPerOwner,
		Timeout:          time.Duration(m.Timeout),
		Lease:            time.Duration(m.Lease),
		PoolSize:         m.PoolSize,
		Cluster:          m.Cluster,
	})
}

func (m *RedisStore) fill() {
	if m.KeyPrefix == "" {
		m.KeyPrefix = DefaultRedisKeyPrefix
	}
	if m.TTL == 0 {
		m.TTL = caddy.Duration(DefaultTTL)
	}
	if m.IdleTTL == 0 {
		m.IdleTTL = caddy.Duration(DefaultIdleTTL)
	}
	if m.Timeout == 0 {
		m.Timeout = caddy.Duration(DefaultRedisTimeout)
	}
	if m.PoolSize == 0 {
		m.PoolSize = DefaultRedisPoolSize
	}
	if m.Lease == 0 {
		m.Lease = caddy.Duration(DefaultRedisLease)
	}
}

// StoreKey names m's settings (the URL as given, which may hold a
// password: the key is never printed), defaults filled.
func (m *RedisStore) StoreKey() string {
	return m.url + "|" + m.KeyPrefix + "|" + time.Duration(m.TTL).String() + "|" + time.Duration(m.IdleTTL).String() +
		"|" + time.Duration(m.Timeout).String() + "|" + time.Duration(m.Lease).String() + "|" + strconv.Itoa(m.PoolSize) + "|" + strconv.FormatBool(m.Cluster)
}

// Validate checks the settings.
func (m *RedisStore) Validate() error { return m.check() }

func (m *RedisStore) check() error {
	if _, err := redisstore.CheckURL(m.url, m.Cluster); err != nil {
		return fmt.Errorf("url: %s", strings.TrimPrefix(err.Error(), "redisstore: "))
	}
	if err := checkStoreSettings(m.Share, m.TTL, m.IdleTTL); err != nil {
		return err
	}
	switch {
	case m.Timeout < 0:
		return errors.New("timeout must be positive")
	case m.PoolSize < 0 || m.PoolSize > 256:
		return errors.New("pool_size: want 1 to 256")
	case m.Lease != 0 && m.Lease < caddy.Duration(time.Second):
		return errors.New("lease: want at least 1s")
	case strings.ContainsAny(m.KeyPrefix, "{}"):
		// The prefix is the hash tag of every key (one Cluster slot).
		return fmt.Errorf("key_prefix: must not hold { or } (got %q)", m.KeyPrefix)
	}
	return nil
}

// ShareName is the share, else the key prefix: mounts with one prefix
// share their tasks on purpose (that is what the prefix is for).
func (m *RedisStore) ShareName() string {
	if m.Share != "" {
		return m.Share
	}
	return "redis prefix " + m.KeyPrefix
}

// redisStoreKeys are the subdirectives of `store redis`.
var redisStoreKeys = []string{"key_prefix", "ttl", "idle_ttl", "timeout", "lease", "pool_size", "cluster", "share"}

// UnmarshalCaddyfile parses
//
//	store redis <url> {
//		key_prefix <prefix>
//		ttl        <duration>
//		idle_ttl   <duration>
//		timeout    <duration>
//		lease      <duration>
//		pool_size  <n>
//		cluster
//		share      <name>
//	}
func (m *RedisStore) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the store type
	block := *d
	if !d.NextArg() {
		return d.ArgErr()
	}
	m.URL = d.Val()
	if d.NextArg() {
		return d.ArgErr()
	}
	if err := subdirectives(d, "store", nil, func(key string) error {
		var err error
		switch key {
		case "key_prefix":
			m.KeyPrefix, err = oneArg(d)
		case "ttl":
			m.TTL, err = durationArg(d)
		case "idle_ttl":
			m.IdleTTL, err = durationArg(d)
		case "timeout":
			m.Timeout, err = durationArg(d)
		case "lease":
			m.Lease, err = durationArg(d)
		case "pool_size":
			m.PoolSize, err = countArg(d)
		case "cluster":
			if d.NextArg() {
				return d.ArgErr()
			}
			m.Cluster = true
		case "share":
			m.Share, err = oneArg(d)
		default:
			return unknownSubdirective(d, "store", key, redisStoreKeys)
		}
		return err
	}); err != nil {
		return err
	}
	c := *m
	c.url = m.URL
	c.fill()
	if !strings.Contains(m.URL, "{") {
		if err := c.check(); err != nil {
			return block.WrapErr(err)
		}
	}
	return nil
}

// Interface guards.
var (
	_ StoreModule           = (*RedisStore)(nil)
	_ caddy.Provisioner     = (*RedisStore)(nil)
	_ caddy.Validator       = (*RedisStore)(nil)
	_ caddyfile.Unmarshaler = (*RedisStore)(nil)
)

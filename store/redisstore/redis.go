package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/internal/runs"
)

// Defaults of Options.
const (
	DefaultKeyPrefix        = "a2a:"
	DefaultTTL              = store.DefaultTTL
	DefaultIdleTTL          = store.DefaultIdleTTL
	DefaultMaxEventsPerTask = store.DefaultMaxEventsPerTask
	DefaultMaxTasksPerOwner = store.DefaultMaxTasksPerOwner
	DefaultTimeout          = 5 * time.Second
	DefaultPoolSize         = 4
	DefaultLease            = 10 * time.Second
)

// Options configure a Store. Zero values select the defaults.
type Options struct {
	// URL is the server: redis://[user:pass@]host:port[/db], rediss://
	// for TLS, or unix:///path/to/redis.sock[?db=N] (CheckURL). The
	// password never appears in an error the store returns.
	URL string
	// KeyPrefix starts every key and channel (default "a2a:"): stores
	// with the same URL, prefix and Share share their tasks, others do
	// not.
	KeyPrefix string
	// Share names a sharing scope within the prefix: it follows the
	// prefix in every key, channel and secret (as {<prefix>{<share>}),
	// so that two shares on one server and prefix never meet. Empty: the
	// keys are the prefix's alone, as they were before shares.
	Share string
	// TTL is how long a finished task is kept after its last update
	// (default 1h; negative: forever).
	TTL time.Duration
	// IdleTTL is how long an interrupted task (input-required,
	// auth-required) is kept after its last update (default 24h;
	// negative: forever). Submitted and working tasks never expire.
	IdleTTL time.Duration
	// MaxEventsPerTask bounds a task's event log (default 20000): an
	// Update past it fails with store.ErrTooManyEvents, except the one
	// that moves the task into a terminal state.
	MaxEventsPerTask int
	// MaxTasksPerOwner bounds the tasks one owner holds (default 1000;
	// negative: no bound). Creating one more drops that owner's finished
	// task whose status changed longest ago, then its interrupted one;
	// when all are running Create fails with store.ErrQuota. The
	// anonymous owner "" is not bounded.
	MaxTasksPerOwner int
	// Timeout bounds every operation's round trips to Redis, and the
	// dial (default 5s): a dead server gives an error, never a hang.
	Timeout time.Duration
	// Lease is how long a process's claim on a task it runs lasts
	// unrenewed (default 10s): the process renews its claims every third
	// of it, and once one lapses (the process died) another process's
	// Orphans finds the task.
	Lease time.Duration
	// Cluster: the URL names a node of a Redis Cluster (any one; the
	// client learns the others from it; ?addr= adds seeds). Every key of
	// the prefix is in one slot (keys.go), so one prefix lives on one
	// shard. A Cluster that cannot be reached yet is no error either: the
	// store's operations fail until it answers, then it connects.
	Cluster bool
	// PoolSize is how many connections commands are pipelined over
	// (default 4; rounded down to a power of two, at most 256). The store
	// holds one more, for its pub/sub subscriptions.
	PoolSize int
}

// Store is the Redis store.Store. Create one with New and Close it.
type Store struct {
	opts Options
	// base starts every key and channel of the store's scope (scopeBase).
	base string
	// client is the client (cli): for a Cluster not reachable when the
	// store was made, a stand-in until connectCluster replaces it.
	client atomic.Pointer[rueidis.Client]
	// redacted is the URL as errors may show it.
	redacted string

	write, events, list, cancel, putPush, pushCfgs, delPush, claim, orphans, claimReply *rueidis.Lua

	closed   atomic.Bool
	closedCh chan struct{}
	done     sync.WaitGroup
	// leases are the tasks this process runs (lease.go).
	leases  runs.Set
	secrets secrets
	// pushHints holds the ids of the tasks whose last write here found
	// push configs (PushHints).
	pushHints sync.Map

	sub subscriber
}

var (
	_ store.Store     = (*Store)(nil)
	_ store.Notifier  = (*Store)(nil)
	_ store.PushHints = (*Store)(nil)
)

// MayHavePushConfigs implements store.PushHints.
func (s *Store) MayHavePushConfigs(id string, done bool) bool {
	if done {
		_, ok := s.pushHints.LoadAndDelete(id)
		return ok
	}
	_, ok := s.pushHints.Load(id)
	return ok
}

// New makes a store of the server at opts.URL. A server that cannot be
// reached yet is no error: the store's operations fail (within the
// timeout) until it can be, and the store connects by itself then, as
// after any outage. It fails only for options that are wrong.
func New(opts Options) (*Store, error) {
	if opts.KeyPrefix == "" {
		opts.KeyPrefix = DefaultKeyPrefix
	}
	if opts.TTL == 0 {
		opts.TTL = DefaultTTL
	}
	if opts.IdleTTL == 0 {
		opts.IdleTTL = DefaultIdleTTL
	}
	if opts.MaxEventsPerTask <= 0 {
		opts.MaxEventsPerTask = DefaultMaxEventsPerTask
	}
	if opts.MaxTasksPerOwner == 0 {
		opts.MaxTasksPerOwner = DefaultMaxTasksPerOwner
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	if opts.PoolSize <= 0 {
		opts.PoolSize = DefaultPoolSize
	}
	if strings.ContainsAny(opts.KeyPrefix, "{}") {
		// The prefix is the keys' hash tag (keys.go).
		return nil, errors.New("redisstore: the key prefix must not hold { or }")
	}
	if strings.ContainsAny(opts.Share, "{}") {
		return nil, errors.New("redisstore: the share name must not hold { or }")
	}
	redacted, err := CheckURL(opts.URL, opts.Cluster)
	if err != nil {
		return nil, err
	}
	co, err := rueidis.ParseURL(opts.URL)
	if err != nil {
		// rueidis' own message may quote the URL, password and all.
		return nil, fmt.Errorf("redisstore: invalid URL %s", redacted)
	}
	co.DisableCache = true
	// Every connection reads in the background, even one that has served
	// a single command at a time (rueidis would otherwise write and read
	// those in the caller's goroutine, and read nothing while idle): one
	// that Redis closed (a restart) is then found closed at once, not by
	// the next command sent on it, which failed after Redis was back
	// (TestNoFailureAfterARestart). Under load every connection reads in
	// the background anyway: bench/run.sh's redis step, no change.
	co.AlwaysPipelining = true
	co.Dialer.Timeout = opts.Timeout
	co.ConnWriteTimeout = opts.Timeout
	co.PipelineMultiplex = min(bits.Len(uint(opts.PoolSize))-1, rueidis.MaxPipelineMultiplex)
	// On one server, a single client is made even when its first dial
	// fails (rueidis returns it with the dial's error): it dials again on
	// the next command, so a server down at start is one more outage. A
	// Cluster client routes each command (and each script, by its first
	// key: every key of the prefix is in one slot) to its shard.
	co.ForceSingleClient = !opts.Cluster
	// A server that answers with an error (a wrong password, a database
	// it does not have) is a wrong option, said at once.
	client, err := rueidis.NewClient(co)
	if _, refused := rueidis.IsRedisErr(err); refused || (client == nil && !opts.Cluster) {
		if client != nil {
			client.Close()
		}
		return nil, fmt.Errorf("redisstore: connect to %s: %w", redacted, scrub(err, opts.URL))
	}
	pending := client == nil
	if pending {
		// A Cluster client needs the layout, which no seed gave: until
		// one does, a single client of the first seed stands in (it
		// fails while the Cluster is down, as any store operation then),
		// and connectCluster keeps trying.
		single := co
		single.ForceSingleClient = true
		if client, _ = rueidis.NewClient(single); client == nil {
			return nil, fmt.Errorf("redisstore: connect to %s: %w", redacted, scrub(err, opts.URL))
		}
	}
	s := &Store{
		opts:       opts,
		base:       scopeBase(opts.KeyPrefix, opts.Share),
		redacted:   redacted,
		write:      rueidis.NewLuaScript(luaWrite),
		events:     rueidis.NewLuaScriptReadOnly(luaEvents),
		list:       rueidis.NewLuaScript(luaList),
		cancel:     rueidis.NewLuaScript(luaCancel),
		putPush:    rueidis.NewLuaScript(luaPutPush),
		pushCfgs:   rueidis.NewLuaScriptReadOnly(luaPushConfigs),
		delPush:    rueidis.NewLuaScript(luaDeletePush),
		claim:      rueidis.NewLuaScript(luaClaim),
		orphans:    rueidis.NewLuaScript(luaOrphans),
		claimReply: rueidis.NewLuaScript(luaClaimReply),
		closedCh:   make(chan struct{}),
	}
	s.client.Store(&client)
	s.sub.init(s)
	s.done.Add(3)
	go s.sub.run()
	go s.sub.sweep()
	go s.renewLeases()
	if pending {
		s.done.Add(1)
		go s.connectCluster(co)
	}
	return s, nil
}

// cli is the store's client now.
func (s *Store) cli() rueidis.Client { return *s.client.Load() }

// connectCluster makes the Cluster client once a seed answers (every
// second until the store closes) and puts it in place of the stand-in,
// which is closed a timeout later, when what was sent on it has ended.
func (s *Store) connectCluster(co rueidis.ClientOption) {
	defer s.done.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.closedCh:
			return
		case <-t.C:
		}
		client, err := rueidis.NewClient(co)
		if err != nil {
			continue
		}
		old := s.client.Swap(&client)
		time.AfterFunc(s.opts.Timeout, (*old).Close)
		return
	}
}

// CheckURL checks that u names a server the store can use, and returns
// u as errors and logs may show it (the password replaced). The forms:
// redis://[user:pass@]host[:port][/db], rediss:// (TLS), and
// unix://[user:pass@]/path/to/redis.sock[?db=N] for a server on the same
// machine, which skips TCP (bench/run.sh's redis step measures both:
// within its machine's noise of each other). A Cluster is reached over
// TCP only (its nodes announce network addresses).
func CheckURL(u string, cluster bool) (string, error) {
	p, err := url.Parse(u)
	if err != nil {
		// url's error quotes the whole URL: say nothing of it.
		return "", errors.New("redisstore: malformed URL")
	}
	switch p.Scheme {
	case "redis", "rediss":
		if p.Host == "" {
			return "", fmt.Errorf("redisstore: URL %s has no host", p.Redacted())
		}
	case "unix":
		switch {
		case p.Host != "":
			return "", fmt.Errorf("redisstore: URL %s: a unix URL names a socket path, not a host (unix:///path/to/redis.sock)", p.Redacted())
		case !strings.HasPrefix(p.Path, "/"):
			return "", fmt.Errorf("redisstore: URL %s: the socket path must be absolute (unix:///path/to/redis.sock)", p.Redacted())
		case p.Query().Has("addr"):
			return "", fmt.Errorf("redisstore: URL %s: addr= names TCP seeds, not for a unix socket", p.Redacted())
		case cluster:
			return "", fmt.Errorf("redisstore: URL %s: a Cluster is reached over TCP (redis:// or rediss://), not a unix socket", p.Redacted())
		}
	default:
		return "", fmt.Errorf("redisstore: URL %s: scheme must be redis (redis://[user:pass@]host:port[/db]), rediss (TLS) or unix (unix:///path/to/redis.sock)", p.Redacted())
	}
	return p.Redacted(), nil
}

// scrub makes sure err's text holds no password of rawURL: client errors
// are not expected to quote it, but one that did would reach a log.
func scrub(err error, rawURL string) error {
	if err == nil {
		return nil
	}
	p, perr := url.Parse(rawURL)
	if perr != nil || p.User == nil {
		return err
	}
	pass, ok := p.User.Password()
	if !ok || pass == "" || !strings.Contains(err.Error(), pass) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), pass, "xxxxx"))
}

// Close stops the store: blocked Events calls and EventsReady channels
// wake and find it closed (store.ErrClosed), as does every later call.
// Closing twice is harmless.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	close(s.closedCh)
	s.sub.closeAll()
	s.done.Wait()
	s.cli().Close()
	return nil
}

// op returns the context an operation talks to Redis under: the caller's,
// bounded by the store's timeout, or store.ErrClosed.
func (s *Store) op(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if s.closed.Load() {
		return nil, nil, store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	c, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	return c, cancel, nil
}

// fail wraps an error of the client. When the caller's own context
// (parent) ended, that is the error (errors.Is works); a closed store says
// so; anything else is a Redis failure naming the server, never its
// password.
func (s *Store) fail(parent context.Context, err error) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	if perr := parent.Err(); perr != nil {
		return perr
	}
	return fmt.Errorf("redisstore: %s: %w", s.redacted, scrub(err, s.opts.URL))
}

// ttlMillis is the expiry in ms of a task in a finished or interrupted
// state (neither: running); 0 means none.
func (s *Store) ttlMillis(terminal, interrupted bool) int64 {
	var d time.Duration
	switch {
	case terminal:
		d = s.opts.TTL
	case interrupted:
		d = s.opts.IdleTTL
	}
	if d <= 0 {
		return 0
	}
	return max(d.Milliseconds(), 1)
}

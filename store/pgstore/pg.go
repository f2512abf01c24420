package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/singleflight"

	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/internal/group"
	"github.com/caddy-a2a/caddy-a2a/store/internal/runs"
)

// Defaults of Options.
const (
	DefaultSchema           = "a2a"
	DefaultTTL              = store.DefaultTTL
	DefaultIdleTTL          = store.DefaultIdleTTL
	DefaultMaxEventsPerTask = store.DefaultMaxEventsPerTask
	DefaultMaxTasksPerOwner = store.DefaultMaxTasksPerOwner
	DefaultTimeout          = 5 * time.Second
	DefaultLease            = 10 * time.Second
	DefaultMaxConns         = 10
)

// Options configure a Store. Zero values select the defaults.
type Options struct {
	// DSN is the server, as libpq spells it: a URL
	// (postgres://user:pass@host:port/db?sslmode=...) or keyword=value
	// pairs (host=... dbname=...). The password never appears in an
	// error the store returns (CheckDSN).
	DSN string
	// Schema holds the store's tables (default "a2a"; made if missing):
	// letters, digits and _, at most 63 bytes.
	Schema string
	// Share names a sharing scope within the schema: it is part of
	// every row's key and of the notification channel, so two shares in
	// one schema never meet. Empty: the schema's default scope.
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
	// negative: no bound), as redisstore's.
	MaxTasksPerOwner int
	// Timeout bounds every statement and the dial (default 5s): a dead
	// server gives an error, never a hang.
	Timeout time.Duration
	// Lease is how long a process's claim on a task it runs lasts
	// unrenewed (default 10s; renewed every third of it).
	Lease time.Duration
	// MaxConns bounds the pool's connections (default 10). The store
	// holds one more, for LISTEN.
	MaxConns int
}

// Store is the PostgreSQL store.Store. Create one with New and Close it.
type Store struct {
	opts Options
	pool *pgxpool.Pool
	// groups queues the writes (group.go); writeSQL is their statement.
	groups   group.Group[*writeCall]
	writeSQL string
	// cancelReads counts the cancel watches that read their task's row
	// (the tests check that a fresh task's does not).
	cancelReads atomic.Int64
	// quoted is the schema as statements name it.
	quoted string
	// scope is the sharing scope every row carries.
	scope string
	// channel is the scope's NOTIFY channel.
	channel string
	// redacted is the DSN as errors may show it.
	redacted string
	// password is the DSN's, scrubbed from any error that quotes it.
	password string

	// migrated is set once the schema was found current: until then
	// every operation tries to migrate first (the server may have been
	// down at New).
	migrated atomic.Bool
	// migrating is held by the one operation migrating: the others wait
	// for it no longer than their own timeout (a mutex would queue each
	// behind every earlier attempt's whole timeout while the server is
	// down).
	migrating chan struct{}

	closed   atomic.Bool
	closedCh chan struct{}
	stop     context.CancelFunc
	done     sync.WaitGroup
	// leases are the tasks this process runs (lease.go).
	leases  runs.Set
	secrets sync.Map
	// reads are the shared reads of woken waiters (readShared).
	reads singleflight.Group
	// pushHints holds the ids of the tasks whose last write here found
	// push configs (store.PushHints).
	pushHints sync.Map

	lis listener
}

var (
	_ store.Store     = (*Store)(nil)
	_ store.Notifier  = (*Store)(nil)
	_ store.PushHints = (*Store)(nil)
)

// New makes a store of the server at opts.DSN. A server that cannot be
// reached yet is no error: the store's operations fail (within the
// timeout) until it can be, and then it works. A server that answers
// with a refusal (a schema of a newer build, a wrong password) fails
// New.
func New(opts Options) (*Store, error) {
	if opts.Schema == "" {
		opts.Schema = DefaultSchema
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
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	if err := CheckSchema(opts.Schema); err != nil {
		return nil, err
	}
	if strings.IndexByte(opts.Share, 0) >= 0 {
		return nil, errors.New("pgstore: the share name must not hold a NUL byte")
	}
	redacted, err := CheckDSN(opts.DSN)
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(opts.DSN)
	if err != nil {
		return nil, fmt.Errorf("pgstore: invalid DSN %s", redacted)
	}
	cfg.MaxConns = int32(opts.MaxConns)
	cfg.ConnConfig.ConnectTimeout = opts.Timeout
	// A connection idle for a while may be one the server or a proxy
	// dropped: checked before use, so a statement does not fail on it.
	cfg.HealthCheckPeriod = 30 * time.Second
	s := &Store{
		opts:      opts,
		quoted:    quoteIdent(opts.Schema),
		scope:     opts.Share,
		channel:   channelName(opts.Schema, opts.Share),
		redacted:  redacted,
		password:  cfg.ConnConfig.Password,
		closedCh:  make(chan struct{}),
		migrating: make(chan struct{}, 1),
	}
	s.groups.Max = maxGroup
	s.writeSQL = s.sql(`SELECT * FROM {s}.write2($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`)
	cfg.ShouldPing = s.shouldPing
	s.pool, err = pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %s: %w", redacted, s.scrub(err))
	}
	// Migrate now if the server answers; one that is down is tried again
	// by the first operation after it is back.
	ctx, cancel := context.WithTimeout(context.Background(), opts.Timeout)
	err = s.ready(ctx)
	cancel()
	if refused(err) {
		s.pool.Close()
		var ve *VersionError
		if errors.As(err, &ve) {
			return nil, err
		}
		return nil, fmt.Errorf("pgstore: %s: %w", redacted, s.scrub(err))
	}
	life, stop := context.WithCancel(context.Background())
	s.stop = stop
	s.lis.init(s, cfg.ConnConfig.Copy())
	// The first LISTEN before New returns, so that no wait of the
	// store's can start before it (and be woken for nothing when it is
	// made); a server that is down gets it later.
	conn, _ := s.lis.connect(life)
	s.done.Add(3)
	go s.lis.run(life, conn)
	go s.sweep()
	go s.renewLeases()
	return s, nil
}

// shouldPing says whether a connection taken from the pool is checked
// (one round trip) before use: one idle for a second, as pgx does, and
// every one while the listener is not listening. The server ended the
// listener's connection, or it has not answered since New: the pool's
// connections may be ones a restarted or crashed server left behind,
// each of which would fail the statement sent on it. A ping that fails
// drops the connection and the pool takes another.
func (s *Store) shouldPing(_ context.Context, p pgxpool.ShouldPingParams) bool {
	return p.IdleDuration > time.Second || !s.lis.up.Load()
}

// refused reports whether err is the server's answer (or the schema's),
// not a failure to reach it: a wrong option, said at once.
func refused(err error) bool {
	var pe *pgconn.PgError
	var ve *VersionError
	return errors.As(err, &ve) || errors.As(err, &pe) && !strings.HasPrefix(pe.Code, "57P") && !strings.HasPrefix(pe.Code, "08")
}

// channelName is the NOTIFY channel of a scope: a digest, so that any
// share name fits in a channel name (63 bytes) and no two scopes share
// one.
func channelName(schema, share string) string {
	sum := sha256.Sum256([]byte(schema + "\x00" + share))
	return "a2a_" + hex.EncodeToString(sum[:16])
}

// ready migrates the schema unless that was done.
func (s *Store) ready(ctx context.Context) error {
	if s.migrated.Load() {
		return nil
	}
	select {
	case s.migrating <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.migrating }()
	if s.migrated.Load() {
		return nil
	}
	if err := s.migrate(ctx); err != nil {
		return err
	}
	s.migrated.Store(true)
	return nil
}

// Close stops the store: blocked Events calls and EventsReady channels
// wake and find it closed (store.ErrClosed), as does every later call.
// Closing twice is harmless.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	close(s.closedCh)
	s.stop()
	s.lis.wakeAll()
	s.done.Wait()
	s.pool.Close()
	return nil
}

// op returns the context an operation talks to the server under: the
// caller's, bounded by the store's timeout; or store.ErrClosed; or the
// error of a migration the server refused.
func (s *Store) op(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if s.closed.Load() {
		return nil, nil, store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	c, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	if err := s.ready(c); err != nil {
		cancel()
		var ve *VersionError
		if errors.As(err, &ve) {
			return nil, nil, err
		}
		return nil, nil, s.fail(ctx, err)
	}
	return c, cancel, nil
}

// fail wraps an error of the server or the driver. When the caller's own
// context (parent) ended, that is the error (errors.Is works); a closed
// store says so; anything else names the server, never its password.
func (s *Store) fail(parent context.Context, err error) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	if perr := parent.Err(); perr != nil {
		return perr
	}
	if lostServer(err) {
		// The server ended this connection, and so every other one of
		// the pool: closed now, none fails another statement.
		s.pool.Reset()
	}
	return fmt.Errorf("pgstore: %s: %w", s.redacted, s.scrub(err))
}

// lostServer reports whether err says the server ended the session: an
// operator or crash shutdown (57P01, 57P02), a server that is starting or
// stopping (57P03), or a connection exception (class 08).
func lostServer(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" || strings.HasPrefix(pe.Code, "08"))
}

// kindOf is the task kind the tables keep: 0 running, 1 interrupted
// (input-required, auth-required), 2 finished.
func kindOf(terminal, interrupted bool) int16 {
	switch {
	case terminal:
		return 2
	case interrupted:
		return 1
	}
	return 0
}

// ttlMillis is the expiry in ms of a task of kind (0: none).
func (s *Store) ttlMillis(kind int16) int64 {
	var d time.Duration
	switch kind {
	case 2:
		d = s.opts.TTL
	case 1:
		d = s.opts.IdleTTL
	}
	if d <= 0 {
		return 0
	}
	return max(d.Milliseconds(), 1)
}

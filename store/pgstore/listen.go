package pgstore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
)

// listener is the store's one LISTEN connection, on the scope's channel,
// and the in-process fan-out of what it hears: each task waited on has
// one Go channel, shared by every waiter of the process (Events with
// wait, EventsReady), closed when a notification names the task; each
// task whose cancel is watched has one more, closed by its cancel.
//
// A wait takes its channel before it reads, so an append committed
// after the read closes it. When the connection drops every waiter is
// woken (its read then fails, or finds what was missed), and again once
// it is back and listening, since what was notified in between is lost;
// the cancel watches are checked against the rows then.
type listener struct {
	s   *Store
	cfg *pgx.ConnConfig
	// up is set while the connection listens: the server answered it
	// last, so the pool's connections are good (Store.shouldPing).
	up atomic.Bool

	mu    sync.Mutex
	waits map[string]tailWait
	// gens numbers the wait channels as they are made (tailWait.gen).
	gens    uint64
	cancels map[string]*watch
	// epoch counts the connections that listened; fresh are the tasks
	// this process is creating running (fresh.go).
	epoch uint64
	fresh map[string]*freshTask
}

// tailWait is the wait channel of a task and its number: every channel
// made has a new one, so two waiters with one number took the channel
// before the same next notification (readAfterWake).
type tailWait struct {
	ch  chan struct{}
	gen uint64
}

// watch is the cancel channel of a task and how many watchers hold it.
type watch struct {
	ch   chan struct{}
	refs int
}

// pingEvery is how long the listener waits for a notification before it
// checks that its connection still answers: a server gone without a
// word (a network partition) is found within it plus the timeout.
const pingEvery = 15 * time.Second

// closedChan is closed from the start.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (l *listener) init(s *Store, cfg *pgx.ConnConfig) {
	l.s = s
	// A wait for a notification that times out leaves the connection
	// usable (the default handler of a canceled context may close it).
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
	}
	l.cfg = cfg
	l.waits = map[string]tailWait{}
	l.cancels = map[string]*watch{}
	l.fresh = map[string]*freshTask{}
}

// run keeps the connection up until ctx ends, starting with conn, the
// one New made (nil: New could not reach the server).
func (l *listener) run(ctx context.Context, conn *pgx.Conn) {
	defer l.s.done.Done()
	backoff := 50 * time.Millisecond
	// New's connection was made before any wait of the store began.
	missed := conn == nil
	for ctx.Err() == nil {
		var err error
		if conn == nil {
			conn, err = l.connect(ctx)
		}
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 50 * time.Millisecond
		if missed {
			l.wakeAll()
			l.recheckCancels(ctx)
		}
		missed = true
		l.mu.Lock()
		l.epoch++
		l.up.Store(true)
		l.mu.Unlock()
		l.listen(ctx, conn)
		l.mu.Lock()
		l.up.Store(false)
		l.mu.Unlock()
		if ctx.Err() == nil {
			// The server dropped this connection (a restart, a crash, a
			// failover): it dropped the pool's too, which would each fail
			// the next statement sent on it. Closed now, none is used.
			l.s.pool.Reset()
		}
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = conn.Close(cctx)
		cancel()
		conn = nil
		l.wakeAll()
	}
}

func (l *listener) connect(ctx context.Context) (*pgx.Conn, error) {
	c, cancel := context.WithTimeout(ctx, l.s.opts.Timeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(c, l.cfg)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(c, "LISTEN "+quoteIdent(l.s.channel)); err != nil {
		_ = conn.Close(c)
		return nil, err
	}
	return conn, nil
}

// listen hands out notifications until the connection fails or ctx ends.
func (l *listener) listen(ctx context.Context, conn *pgx.Conn) {
	for {
		wctx, cancel := context.WithTimeout(ctx, pingEvery)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			l.hear(n.Payload)
			continue
		case ctx.Err() != nil || conn.IsClosed():
			return
		case !errors.Is(err, context.DeadlineExceeded) && !pgconn.Timeout(err):
			return
		}
		pctx, cancel := context.WithTimeout(ctx, l.s.opts.Timeout)
		_, err = conn.Exec(pctx, ";")
		cancel()
		if err != nil {
			return
		}
	}
}

// hear handles a notification: "e<last> <id>" an append to the log of
// task id (or, with last 0, its removal), "c <id>" its cancel.
func (l *listener) hear(payload string) {
	head, id, ok := strings.Cut(payload, " ")
	if !ok || head == "" {
		return
	}
	switch head[0] {
	case 'e':
		l.wake(id)
	case 'c':
		l.fireCancel(id)
	}
}

// tail returns the channel closed at the next notification of task id,
// and its number.
func (l *listener) tail(id string) (<-chan struct{}, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w, ok := l.waits[id]
	if !ok {
		l.gens++
		w = tailWait{ch: make(chan struct{}), gen: l.gens}
		l.waits[id] = w
	}
	return w.ch, w.gen
}

func (l *listener) wake(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w, ok := l.waits[id]; ok {
		close(w.ch)
		delete(l.waits, id)
	}
}

// wakeAll wakes every waiter: the connection dropped or came back, the
// store closed, or the sweep asks streams whose task expired to look.
func (l *listener) wakeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, w := range l.waits {
		close(w.ch)
		delete(l.waits, id)
	}
}

func (l *listener) watchCancel(id string) *watch {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.watchLocked(id)
}

// watchLocked is watchCancel with l.mu held.
func (l *listener) watchLocked(id string) *watch {
	w, ok := l.cancels[id]
	if !ok {
		w = &watch{ch: make(chan struct{})}
		l.cancels[id] = w
	}
	w.refs++
	return w
}

func (l *listener) releaseCancel(id string, w *watch) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w.refs--
	if w.refs == 0 && l.cancels[id] == w {
		delete(l.cancels, id)
	}
}

func (l *listener) fireCancel(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w, ok := l.cancels[id]; ok {
		close(w.ch)
		delete(l.cancels, id)
	} else if f := l.fresh[id]; f != nil {
		f.cancelled = true
	}
}

// recheckCancels fires the watches of tasks cancelled while the
// connection was down (their notification is lost; the flag is not).
func (l *listener) recheckCancels(ctx context.Context) {
	l.mu.Lock()
	ids := make([]string, 0, len(l.cancels))
	for id := range l.cancels {
		ids = append(ids, id)
	}
	l.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	c, cancel := context.WithTimeout(ctx, l.s.opts.Timeout)
	defer cancel()
	rows, err := l.s.pool.Query(c, l.s.sql(`SELECT id FROM {s}.tasks WHERE scope = $1 AND id = ANY($2) AND cancelled`), l.s.scope, ids)
	if err != nil {
		return
	}
	cancelled, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return
	}
	for _, id := range cancelled {
		l.fireCancel(id)
	}
}

package redisstore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"
)

// sweepEvery is how often the subscriber wakes every waiting stream and
// drops the subscriptions nobody used since the last sweep. The wake is
// the safety net for what pub/sub does not carry: a task that expired
// (its waiters must find it gone) and a message lost while the
// connection was down.
var sweepEvery = 30 * time.Second

// errNoSubscriber: the subscriber's connection is down (it reconnects by
// itself).
var errNoSubscriber = errors.New("redisstore: pub/sub connection down")

// subscriber multiplexes every wait of the store over one pub/sub
// connection: a task's event channel (prefix "e:" id) is published to by
// each write that appends, its cancel channel (prefix "c:" id) by
// SignalCancel. A task's waiters share one Go channel, closed by the next
// message, so 10,000 idle streams cost one connection and one
// subscription per task. Cancels come through one pattern subscription
// (prefix "c:*"), made with the connection: every run watches its task's
// cancel, and a SUBSCRIBE and an UNSUBSCRIBE per run were two commands of
// a send's few (bench/run.sh, the redis step); a cancel is rare, so every
// replica hearing every one costs little.
type subscriber struct {
	s *Store

	// order serialises (un)subscribe commands; it is taken before mu and
	// never by the connection's reader, which takes mu only.
	order sync.Mutex
	mu    sync.Mutex
	conn  rueidis.DedicatedClient // nil while down
	// up is closed when conn is set; a new one is made when it is lost.
	up chan struct{}
	// subs are the channels subscribed (or to subscribe on reconnect),
	// each with the time it was last asked for.
	subs map[string]*subscription
	// tails are the channels of tasks with waiters on their log, closed
	// and dropped by the task's next append.
	tails map[string]chan struct{}
	// cancels are the cancel watches by task id.
	cancels map[string]*cancelWatch
	// recent is what was heard of the logs of tasks whose event channel
	// is subscribed (tailcache.go), recentBytes their encoded size.
	recent      map[string]*tailCache
	recentBytes int
	// epoch counts the connections made (0: none yet).
	epoch uint64
	// fresh are the running tasks this process is creating, not watched
	// yet (expect): a cancel heard for one is kept for its watch.
	fresh  map[string]*freshTask
	closed bool
}

// freshTask is a task being created while the subscription of epoch was
// up: every cancel signalled after the task's creation is heard on it,
// so its run's watch needs no read of the task (the one read a send made
// besides its two writes: bench/run.sh, the redis step).
type freshTask struct {
	epoch     uint64
	cancelled bool
	at        time.Time
}

type subscription struct {
	used time.Time
}

type cancelWatch struct {
	ch   chan struct{}
	refs int
}

func (b *subscriber) init(s *Store) {
	b.s = s
	b.subs = map[string]*subscription{}
	b.tails = map[string]chan struct{}{}
	b.cancels = map[string]*cancelWatch{}
	b.fresh = map[string]*freshTask{}
	b.recent = map[string]*tailCache{}
	b.up = make(chan struct{})
}

func (b *subscriber) eventChannel(id string) string  { return b.s.base + "e:" + id }
func (b *subscriber) cancelChannel(id string) string { return b.s.base + "c:" + id }

// cancelPattern matches every cancel channel of the prefix. Glob
// characters in the prefix are escaped, so that only its own channels
// match.
func (b *subscriber) cancelPattern() string {
	var p strings.Builder
	for _, r := range b.s.base + "c:" {
		if strings.ContainsRune(`*?[]\`, r) {
			p.WriteByte('\\')
		}
		p.WriteRune(r)
	}
	p.WriteByte('*')
	return p.String()
}

// run keeps the pub/sub connection up: it connects, subscribes what is
// wanted, and after every (re)connect wakes every waiter and re-checks
// every cancel watch, since messages sent while it was down are lost.
func (b *subscriber) run() {
	defer b.s.done.Done()
	backoff := 50 * time.Millisecond
	for {
		select {
		case <-b.s.closedCh:
			return
		default:
		}
		dc, _ := b.s.cli().Dedicate()
		wait := dc.SetPubSubHooks(rueidis.PubSubHooks{OnMessage: b.onMessage})
		if b.resubscribe(dc) == nil {
			backoff = 50 * time.Millisecond
			b.recover()
			select {
			case <-wait:
			case <-b.s.closedCh:
			}
			b.mu.Lock()
			b.conn = nil
			b.up = make(chan struct{})
			// What was published meanwhile is lost: nothing heard before
			// can say where a log stands.
			b.dropCaches()
			b.mu.Unlock()
			// Waiters would miss what is published until the reconnect:
			// wake them to read (and find Redis gone, or their events).
			b.wakeAll()
		}
		dc.Close()
		select {
		case <-b.s.closedCh:
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}

// resubscribe subscribes dc to every wanted channel.
func (b *subscriber) resubscribe(dc rueidis.DedicatedClient) error {
	b.order.Lock()
	defer b.order.Unlock()
	b.mu.Lock()
	chans := make([]string, 0, len(b.subs))
	for ch := range b.subs {
		chans = append(chans, ch)
	}
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), b.s.opts.Timeout)
	defer cancel()
	err := dc.Do(ctx, dc.B().Psubscribe().Pattern(b.cancelPattern()).Build()).Error()
	if err == nil && len(chans) > 0 {
		err = dc.Do(ctx, dc.B().Subscribe().Channel(chans...).Build()).Error()
	}
	if err == nil {
		// Published while order is held: a subscribe that found no
		// connection left its channel in subs, which this one covered.
		b.mu.Lock()
		b.conn = dc
		b.epoch++
		close(b.up)
		b.mu.Unlock()
	}
	return err
}

// recover wakes every waiter and fires the cancel watches whose task was
// cancelled meanwhile.
func (b *subscriber) recover() {
	b.wakeAll()
	ids := b.cancelIDs()
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.s.opts.Timeout)
	defer cancel()
	cl := b.s.cli()
	cmds := make(rueidis.Commands, len(ids))
	for i, id := range ids {
		cmds[i] = cl.B().Hget().Key(taskKeys(b.s.base, id)[0]).Field("x").Build()
	}
	for i, r := range cl.DoMulti(ctx, cmds...) {
		if v, err := r.ToString(); err == nil && v == "1" {
			b.fire(ids[i])
		}
	}
}

// onMessage runs on the connection's reader: it closes channels and keeps
// what a write's message carries (heard), nothing that waits.
func (b *subscriber) onMessage(m rueidis.PubSubMessage) {
	rest, ok := strings.CutPrefix(m.Channel, b.s.base)
	if !ok {
		return
	}
	switch {
	case m.Pattern == "" && strings.HasPrefix(rest, "e:"):
		b.mu.Lock()
		b.heard(rest[2:], m.Message)
		b.mu.Unlock()
		b.wake(rest[2:])
	case m.Pattern != "" && strings.HasPrefix(rest, "c:"):
		b.fire(rest[2:])
	}
}

// subscribe makes sure ch is subscribed, waiting for the acknowledgement
// so that a read made after it misses no message. While the connection
// is down it waits (within ctx) for the reconnect, which subscribes
// every wanted channel, so that a store just made or recovering serves
// waits.
func (b *subscriber) subscribe(ctx context.Context, ch string) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return errNoSubscriber
	}
	if sub := b.subs[ch]; sub != nil && b.conn != nil {
		sub.used = time.Now()
		b.mu.Unlock()
		return nil
	}
	b.mu.Unlock()
	up, err := b.subscribeNow(ctx, ch)
	if up == nil {
		return err
	}
	select {
	case <-up:
		return nil
	case <-ctx.Done():
		return errNoSubscriber
	case <-b.s.closedCh:
		return errNoSubscriber
	}
}

// subscribeNow sends SUBSCRIBE for ch, or, with the connection down,
// marks it wanted and returns the channel closed when it is back. The
// SUBSCRIBE and UNSUBSCRIBE commands go out one at a time (order), so
// that a sweep's UNSUBSCRIBE never overtakes a SUBSCRIBE of the same
// channel.
func (b *subscriber) subscribeNow(ctx context.Context, ch string) (<-chan struct{}, error) {
	b.order.Lock()
	defer b.order.Unlock()
	b.mu.Lock()
	conn, up := b.conn, b.up
	if conn == nil {
		b.subs[ch] = &subscription{used: time.Now()}
		b.mu.Unlock()
		return up, nil
	}
	if sub := b.subs[ch]; sub != nil {
		sub.used = time.Now()
		b.mu.Unlock()
		return nil, nil
	}
	b.mu.Unlock()
	if err := conn.Do(ctx, conn.B().Subscribe().Channel(ch).Build()).Error(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.subs[ch] = &subscription{used: time.Now()}
	b.mu.Unlock()
	return nil, nil
}

// tail returns the channel the next append to task id closes, subscribed.
func (b *subscriber) tail(ctx context.Context, id string) (<-chan struct{}, error) {
	if err := b.subscribe(ctx, b.eventChannel(id)); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return closedChan, nil
	}
	return b.tailLocked(id), nil
}

// tailLocked is task id's wake channel, made if none (under b.mu).
func (b *subscriber) tailLocked(id string) chan struct{} {
	ch := b.tails[id]
	if ch == nil {
		ch = make(chan struct{})
		b.tails[id] = ch
	}
	return ch
}

// wake releases the waiters of task id.
func (b *subscriber) wake(id string) {
	b.mu.Lock()
	if ch := b.tails[id]; ch != nil {
		close(ch)
		delete(b.tails, id)
	}
	b.mu.Unlock()
}

func (b *subscriber) wakeAll() {
	b.mu.Lock()
	for id, ch := range b.tails {
		close(ch)
		delete(b.tails, id)
	}
	b.mu.Unlock()
}

// watchCancel registers an interest in task id's cancel and returns its
// channel.
func (b *subscriber) watchCancel(id string) *cancelWatch {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.watchLocked(id)
}

// watchLocked is watchCancel under b.mu.
func (b *subscriber) watchLocked(id string) *cancelWatch {
	w := b.cancels[id]
	if w == nil {
		w = &cancelWatch{ch: make(chan struct{})}
		b.cancels[id] = w
	}
	w.refs++
	return w
}

// releaseCancel drops one interest in w; the last one forgets it.
func (b *subscriber) releaseCancel(id string, w *cancelWatch) {
	b.mu.Lock()
	w.refs--
	if w.refs <= 0 && b.cancels[id] == w {
		delete(b.cancels, id)
	}
	b.mu.Unlock()
}

// fire closes the cancel watch of task id, or marks the fresh task.
func (b *subscriber) fire(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if w := b.cancels[id]; w != nil {
		close(w.ch)
		delete(b.cancels, id)
	} else if f := b.fresh[id]; f != nil {
		f.cancelled = true
	}
}

// expect notes that task id is being created running, before the write
// is sent: a cancel can only follow the write, so from here on the
// subscription hears it, if it is up (and stays up: the epoch).
func (b *subscriber) expect(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conn != nil && !b.closed {
		b.fresh[id] = &freshTask{epoch: b.epoch, at: time.Now()}
	}
}

// forget drops task id from the fresh tasks (its creation failed, or it
// settled unwatched).
func (b *subscriber) forget(id string) {
	b.mu.Lock()
	delete(b.fresh, id)
	b.mu.Unlock()
}

// watchFresh registers a watch on a fresh task without reading it: ok is
// false when id is not fresh or the subscription has been down since it
// was created. cancelled: a cancel was heard already.
func (b *subscriber) watchFresh(id string) (w *cancelWatch, cancelled, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.fresh[id]
	delete(b.fresh, id)
	if f == nil || f.epoch != b.epoch || b.conn == nil {
		return nil, false, false
	}
	if f.cancelled {
		return nil, true, true
	}
	return b.watchLocked(id), false, true
}

// dropStaleFresh forgets the fresh tasks no watch came for within a
// sweep (a run that never started).
func (b *subscriber) dropStaleFresh(now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, f := range b.fresh {
		if now.Sub(f.at) >= sweepEvery {
			delete(b.fresh, id)
		}
	}
}

// sweep wakes every waiter each sweepEvery and unsubscribes the channels
// nobody asked for since the sweep before.
func (b *subscriber) sweep() {
	defer b.s.done.Done()
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-b.s.closedCh:
			return
		case now := <-t.C:
			// Every stream reads its task again (one whose task expired
			// finds out), not what was heard.
			b.mu.Lock()
			b.dropCaches()
			b.mu.Unlock()
			b.wakeAll()
			b.dropGoneWatches()
			b.dropStaleFresh(now)
			b.unsubscribeIdle(now)
		}
	}
}

// dropGoneWatches forgets the cancel watches of tasks that are gone
// (expired or dropped): a watcher whose ctx never ends (Background) would
// otherwise hold its watch and subscription for good. Its channel then
// never closes, which CancelSignal allows.
func (b *subscriber) dropGoneWatches() {
	ids := b.cancelIDs()
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.s.opts.Timeout)
	defer cancel()
	cl := b.s.cli()
	cmds := make(rueidis.Commands, len(ids))
	for i, id := range ids {
		cmds[i] = cl.B().Exists().Key(taskKeys(b.s.base, id)[0]).Build()
	}
	for i, r := range cl.DoMulti(ctx, cmds...) {
		if n, err := r.AsInt64(); err == nil && n == 0 {
			b.mu.Lock()
			delete(b.cancels, ids[i])
			b.mu.Unlock()
		}
	}
}

// unsubscribeIdle drops the subscriptions not asked for since a sweep
// ago.
func (b *subscriber) unsubscribeIdle(now time.Time) {
	b.order.Lock()
	defer b.order.Unlock()
	b.mu.Lock()
	var idle []string
	for ch, sub := range b.subs {
		if now.Sub(sub.used) >= sweepEvery {
			idle = append(idle, ch)
			delete(b.subs, ch)
			if id, ok := strings.CutPrefix(ch, b.eventChannel("")); ok {
				b.dropCache(id)
			}
		}
	}
	conn := b.conn
	b.mu.Unlock()
	if conn != nil && len(idle) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), b.s.opts.Timeout)
		defer cancel()
		_ = conn.Do(ctx, conn.B().Unsubscribe().Channel(idle...).Build()).Error()
	}
}

// closeAll wakes every waiter for good: the store is closing.
func (b *subscriber) closeAll() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.wakeAll()
}

// closedChan is handed to waiters that need not wait.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// cancelIDs are the tasks with cancel watches now.
func (b *subscriber) cancelIDs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	ids := make([]string, 0, len(b.cancels))
	for id := range b.cancels {
		ids = append(ids, id)
	}
	return ids
}

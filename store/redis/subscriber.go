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
// subscription per task.
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
	// released are the tasks whose last cancel watcher let go since the
	// last dropReleased.
	released []string
	closed   bool
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
	b.up = make(chan struct{})
}

func (b *subscriber) eventChannel(id string) string  { return b.s.opts.KeyPrefix + "e:" + id }
func (b *subscriber) cancelChannel(id string) string { return b.s.opts.KeyPrefix + "c:" + id }

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
		dc, _ := b.s.client.Dedicate()
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
	var err error
	if len(chans) == 0 {
		// Nothing to subscribe: a PING proves the connection.
		err = dc.Do(ctx, dc.B().Ping().Build()).Error()
	} else {
		err = dc.Do(ctx, dc.B().Subscribe().Channel(chans...).Build()).Error()
	}
	if err == nil {
		// Published while order is held: a subscribe that found no
		// connection left its channel in subs, which this one covered.
		b.mu.Lock()
		b.conn = dc
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
	cmds := make(rueidis.Commands, len(ids))
	for i, id := range ids {
		cmds[i] = b.s.client.B().Hget().Key(taskKeys(b.s.opts.KeyPrefix, id)[0]).Field("x").Build()
	}
	for i, r := range b.s.client.DoMulti(ctx, cmds...) {
		if v, err := r.ToString(); err == nil && v == "1" {
			b.fire(ids[i])
		}
	}
}

// onMessage runs on the connection's reader: it only closes channels.
func (b *subscriber) onMessage(m rueidis.PubSubMessage) {
	rest, ok := strings.CutPrefix(m.Channel, b.s.opts.KeyPrefix)
	if !ok {
		return
	}
	switch {
	case strings.HasPrefix(rest, "e:"):
		b.wake(rest[2:])
	case strings.HasPrefix(rest, "c:"):
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
	ch := b.tails[id]
	if ch == nil {
		ch = make(chan struct{})
		b.tails[id] = ch
	}
	return ch, nil
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
	last := w.refs <= 0 && b.cancels[id] == w
	if last {
		delete(b.cancels, id)
	}
	if last {
		b.released = append(b.released, id)
	}
	b.mu.Unlock()
}

// releaseEvery is how often the cancel channels nobody watches any more
// are unsubscribed (dropReleased).
const releaseEvery = time.Second

// dropReleased unsubscribes, in one command, the cancel channels whose
// last watcher let go since the call before (every second). Left to the
// sweep, every run's subscription would outlive it by up to two sweeps:
// at a thousand sends a second that was a hundred thousand channels
// (bench/run.sh, the redis step); one UNSUBSCRIBE per run instead, in
// order with the SUBSCRIBEs, halved the sends per second there. A
// watcher that came meanwhile keeps its channel, and one that comes
// after subscribes again, in order (b.order).
func (b *subscriber) dropReleased() {
	b.order.Lock()
	defer b.order.Unlock()
	b.mu.Lock()
	var chs []string
	for _, id := range b.released {
		ch := b.cancelChannel(id)
		if _, subscribed := b.subs[ch]; subscribed && b.cancels[id] == nil {
			delete(b.subs, ch)
			chs = append(chs, ch)
		}
	}
	b.released = b.released[:0]
	conn := b.conn
	b.mu.Unlock()
	if conn != nil && len(chs) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), b.s.opts.Timeout)
		defer cancel()
		_ = conn.Do(ctx, conn.B().Unsubscribe().Channel(chs...).Build()).Error()
	}
}

// fire closes the cancel watch of task id.
func (b *subscriber) fire(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if w := b.cancels[id]; w != nil {
		close(w.ch)
		delete(b.cancels, id)
	}
}

// sweep wakes every waiter each sweepEvery and unsubscribes the channels
// nobody asked for since the sweep before.
func (b *subscriber) sweep() {
	defer b.s.done.Done()
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	released := time.NewTicker(releaseEvery)
	defer released.Stop()
	for {
		select {
		case <-b.s.closedCh:
			return
		case <-released.C:
			b.dropReleased()
		case now := <-t.C:
			b.wakeAll()
			b.dropGoneWatches()
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
	cmds := make(rueidis.Commands, len(ids))
	for i, id := range ids {
		cmds[i] = b.s.client.B().Exists().Key(taskKeys(b.s.opts.KeyPrefix, id)[0]).Build()
	}
	for i, r := range b.s.client.DoMulti(ctx, cmds...) {
		if n, err := r.AsInt64(); err == nil && n == 0 {
			b.mu.Lock()
			delete(b.cancels, ids[i])
			b.mu.Unlock()
		}
	}
}

// unsubscribeIdle drops the subscriptions not asked for since a sweep
// ago, but those of cancel watches still held.
func (b *subscriber) unsubscribeIdle(now time.Time) {
	b.order.Lock()
	defer b.order.Unlock()
	b.mu.Lock()
	var idle []string
	for ch, sub := range b.subs {
		rest := strings.TrimPrefix(ch, b.s.opts.KeyPrefix)
		if strings.HasPrefix(rest, "c:") && b.cancels[rest[2:]] != nil {
			continue
		}
		if now.Sub(sub.used) >= sweepEvery {
			idle = append(idle, ch)
			delete(b.subs, ch)
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

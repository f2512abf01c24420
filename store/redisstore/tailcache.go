package redisstore

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/internal/pack"
)

// A write publishes its events with its message (luaWrite), so that a
// stream waiting on the task is handed them by the subscriber instead of
// reading them back: a streamed chunk cost a write and, for every replica
// with a stream of the task, a read and a round trip more (bench/run.sh,
// the redis step: chunk latency and two replicas).

// Bounds of what the subscriber keeps of the events it hears: the newest
// of each task it tails, and a budget over all of them, past which it
// keeps no events (only where the log stands) until some are dropped.
const (
	tailCacheEvents = 32
	tailCacheBudget = 32 << 20
)

// tailCache is what the subscriber has heard of one task's log while it
// has been subscribed: base is the id of the event before evs (or, with
// evs empty, the newest id heard), evs the newest events, in order.
type tailCache struct {
	base  string
	evs   []store.StoredEvent
	sizes []int // each event's encoded size, counted against the budget
	bytes int
}

func (c *tailCache) newest() string {
	if n := len(c.evs); n > 0 {
		return c.evs[n-1].ID
	}
	return c.base
}

// eventMessage is a write's message: where the log was (prev) and is
// (last), and its events if they fit (ok false: they were left out).
type eventMessage struct {
	prev, last string
	ids        []string
	raw        [][]byte
	ok         bool
}

// parseEventMessage reads "<prev>\n<last>\n" and then, for each event,
// "<id>\n<length>\n<bytes>"; ok reports whether the message is of that
// form (a drop's message is empty).
func parseEventMessage(m string) (eventMessage, bool) {
	var out eventMessage
	prev, rest, ok1 := strings.Cut(m, "\n")
	last, rest, ok2 := strings.Cut(rest, "\n")
	if !ok1 || !ok2 || last == "" {
		return out, false
	}
	out.prev, out.last = prev, last
	for rest != "" {
		id, r, ok := strings.Cut(rest, "\n")
		if !ok {
			return out, false
		}
		ln, r, ok := strings.Cut(r, "\n")
		n, err := strconv.Atoi(ln)
		if !ok || err != nil || n < 0 || n > len(r) {
			return out, false
		}
		out.ids = append(out.ids, id)
		out.raw = append(out.raw, []byte(r[:n]))
		rest = r[n:]
	}
	out.ok = len(out.ids) > 0 && out.ids[len(out.ids)-1] == last
	return out, true
}

// heard records a write's message for task id (under b.mu). Events that
// continue the cache are added; a gap (a message lost, a write whose
// events were left out) starts it again from where the log now stands.
func (b *subscriber) heard(id, payload string) {
	m, ok := parseEventMessage(payload)
	if !ok {
		b.dropCache(id)
		return
	}
	c := b.recent[id]
	if c == nil {
		c = &tailCache{}
		b.recent[id] = c
	}
	if !m.ok || c.newest() != m.prev {
		b.resetCache(c, m.last)
		if !m.ok {
			return
		}
		c.base = m.prev
	}
	for i, raw := range m.raw {
		ev, err := pack.DecodeEvent(raw, id)
		if err != nil || b.recentBytes+len(raw) > tailCacheBudget {
			b.resetCache(c, m.last)
			return
		}
		c.evs = append(c.evs, store.StoredEvent{ID: m.ids[i], Event: ev})
		c.sizes = append(c.sizes, len(raw))
		c.bytes += len(raw)
		b.recentBytes += len(raw)
	}
	if drop := len(c.evs) - tailCacheEvents; drop > 0 {
		c.base = c.evs[drop-1].ID
		for _, n := range c.sizes[:drop] {
			c.bytes -= n
			b.recentBytes -= n
		}
		// A reslice, not a copy: the next append that outgrows the
		// array moves only what is kept, and the events handed out
		// (fromCache clips them) are never written over. Copying the
		// kept events at every message was a seventh of what a Caddy
		// streaming through store redis allocated (bench/run.sh's redis
		// step, "Chunk latency by store").
		c.evs = c.evs[drop:]
		c.sizes = c.sizes[drop:]
	}
}

// resetCache empties c, its log now at newest.
func (b *subscriber) resetCache(c *tailCache, newest string) {
	b.recentBytes -= c.bytes
	c.base, c.evs, c.sizes, c.bytes = newest, nil, nil, 0
}

// dropCache forgets what was heard of task id (under b.mu).
func (b *subscriber) dropCache(id string) {
	if c := b.recent[id]; c != nil {
		b.recentBytes -= c.bytes
		delete(b.recent, id)
	}
}

// dropCaches forgets everything heard (under b.mu): the connection was
// lost, or the sweep wants every stream to read its task again.
func (b *subscriber) dropCaches() {
	clear(b.recent)
	b.recentBytes = 0
}

// fromCache answers a waiting stream from what was heard of task id: the
// heard events after the id after (ok, evs non-empty), or, when after is
// the newest id heard, the channel the next write closes (ok, ch). ok
// false: the cache cannot tell; read the log.
func (b *subscriber) fromCache(id, after string) (evs []store.StoredEvent, ch <-chan struct{}, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.recent[id]
	sub := b.subs[b.eventChannel(id)]
	if c == nil || sub == nil || b.conn == nil || b.closed {
		return nil, nil, false
	}
	sub.used = time.Now() // the stream still tails the channel

	switch {
	case after == c.newest():
		return nil, b.tailLocked(id), true
	case after == c.base:
		// Clipped: the cache appends past what it hands out.
		return slices.Clip(c.evs), nil, true
	}
	for i := range c.evs {
		if c.evs[i].ID == after {
			return slices.Clip(c.evs[i+1:]), nil, true
		}
	}
	return nil, nil, false
}

var _ store.Tailer = (*Store)(nil)

// Next implements store.Tailer: what the subscriber heard when it can
// tell (no round trip), else the task's channel then a read of its log.
func (s *Store) Next(id, after string) ([]store.StoredEvent, <-chan struct{}, error) {
	if s.closed.Load() {
		return nil, nil, store.ErrClosed
	}
	start, err := xstart(after)
	if err != nil {
		return nil, nil, err
	}
	if evs, ch, ok := s.sub.fromCache(id, after); ok {
		return evs, ch, nil
	}
	ctx := context.Background()
	ch, err := s.tail(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	evs, err := s.read(ctx, id, start, 0)
	if err != nil || len(evs) > 0 {
		return evs, nil, err
	}
	return nil, ch, nil
}

package memory

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// The claims of sends whose answer may be a direct message
// (store.Replies): a map of their own, by owner and messageId, under a
// lock of their own (a reply touches no task). They are bounded as the
// tasks are, in count by MaxTasks and per owner by MaxTasksPerOwner, and
// in bytes by MaxBytes (the answers' content): over a bound, the claims
// lapsing soonest go first (the owner's own, over its share), found by a
// scan, which only a store at its bound makes.

var _ store.Replies = (*Store)(nil)

// replies is the store's claims of replies.
type replies struct {
	mu     sync.Mutex
	claims map[sendKey]*replyClaim
	bytes  int64
	// owned counts each owner's claims (the anonymous owner's are not).
	owned map[string]int
}

// replyClaim is a claimed reply: the answer (r), its size as counted,
// and when the claim lapses (store clock, unix ns).
type replyClaim struct {
	r     store.Reply
	size  int64
	until int64
}

// replyOverhead is what a claim is counted for beside its answer's
// content.
const replyOverhead = 128

// ClaimReply implements store.Replies.
func (s *Store) ClaimReply(ctx context.Context, owner string, send store.Send, pending time.Duration) (*store.Reply, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	now := s.opts.Now().UnixNano()
	k := sendKey{owner, send.MessageID}
	rs := &s.replies
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if c := rs.claims[k]; c != nil && now < c.until {
		r := c.r
		return &r, nil
	}
	rs.put(k, &replyClaim{r: store.Reply{Digest: send.Digest}, size: replyOverhead + int64(len(k.owner)+len(k.messageID)), until: now + int64(pending)}, s.opts.MaxTasks, s.opts.MaxTasksPerOwner, s.opts.MaxBytes, now)
	return nil, nil
}

// SettleReply implements store.Replies.
func (s *Store) SettleReply(ctx context.Context, owner string, send store.Send, r *store.Reply) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	now := s.opts.Now().UnixNano()
	until := int64(math.MaxInt64)
	switch {
	case !send.Until.IsZero():
		until = send.Until.UnixNano()
	case s.opts.TTL > 0:
		until = now + int64(s.opts.TTL)
	}
	k := sendKey{owner, send.MessageID}
	size := replyOverhead + int64(len(k.owner)+len(k.messageID)+len(r.TaskID))
	var msg *protocol.Message
	if r.Message != nil {
		m := *r.Message
		msg = &m
		size += int64(m.Size())
	}
	rs := &s.replies
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.put(k, &replyClaim{r: store.Reply{Digest: r.Digest, TaskID: r.TaskID, Message: msg}, size: size, until: until}, s.opts.MaxTasks, s.opts.MaxTasksPerOwner, s.opts.MaxBytes, now)
	return nil
}

// DropReply implements store.Replies.
func (s *Store) DropReply(ctx context.Context, owner, messageID string) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	rs := &s.replies
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.drop(sendKey{owner, messageID})
	return nil
}

// put sets k's claim to c, then makes room: over the owner's share
// (maxOwn, as its tasks; 0: none) the owner's own claims lapsing soonest
// go, so that no caller pushes another's out while under it; then, while
// there are more than maxN claims or more than maxBytes (0: no bound),
// lapsed claims, then those of anyone lapsing soonest. c stays, whatever
// it weighs.
func (rs *replies) put(k sendKey, c *replyClaim, maxN, maxOwn int, maxBytes int64, now int64) {
	if rs.claims == nil {
		rs.claims = make(map[sendKey]*replyClaim)
		rs.owned = make(map[string]int)
	}
	rs.drop(k)
	rs.claims[k] = c
	rs.bytes += c.size
	if k.owner != "" {
		rs.owned[k.owner]++
		for maxOwn > 0 && rs.owned[k.owner] > maxOwn && rs.dropSoonest(c, k.owner) {
		}
	}
	over := func() bool { return len(rs.claims) > maxN || (maxBytes > 0 && rs.bytes > maxBytes) }
	if !over() {
		return
	}
	rs.sweep(now)
	for over() && rs.dropSoonest(c, "") {
	}
}

// dropSoonest drops the claim lapsing soonest, but keep, of owner ("":
// of anyone); false if there is none.
func (rs *replies) dropSoonest(keep *replyClaim, owner string) bool {
	var first sendKey
	found := false
	var at int64 = math.MaxInt64
	for ok, oc := range rs.claims {
		if oc != keep && (owner == "" || ok.owner == owner) && (!found || oc.until < at) {
			first, at, found = ok, oc.until, true
		}
	}
	if found {
		rs.drop(first)
	}
	return found
}

// drop removes k's claim.
func (rs *replies) drop(k sendKey) {
	if c := rs.claims[k]; c != nil {
		rs.bytes -= c.size
		delete(rs.claims, k)
		if k.owner != "" {
			if rs.owned[k.owner]--; rs.owned[k.owner] <= 0 {
				delete(rs.owned, k.owner)
			}
		}
	}
}

// sweep removes the lapsed claims.
func (rs *replies) sweep(now int64) {
	for k, c := range rs.claims {
		if now >= c.until {
			rs.drop(k)
		}
	}
}

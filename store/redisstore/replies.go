package redisstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/internal/pack"
)

// The sends claimed before their answer (store.Replies): a key each,
// {<prefix>}r:<owner length>:<owner>:<messageId>, under the scope's hash
// tag, expiring when the claim lapses (Redis drops it: its bounds are
// the server's maxmemory and the expiry). Its value is the answer's
// kind (pack.EncodeReply), the digest, NUL, the answer's body.

var _ store.Replies = (*Store)(nil)

// errBadReply is a reply value that does not read back.
var errBadReply = errors.New("redisstore: malformed reply claim")

// luaClaimReply claims a reply: nil when it set KEYS[1] to ARGV[1] for
// ARGV[2] ms, else the value there.
const luaClaimReply = `
local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
`

// replyKey is the key of owner's claim of messageID.
func (s *Store) replyKey(owner, messageID string) string {
	return tag(s.base) + "r:" + strconv.Itoa(len(owner)) + ":" + owner + ":" + messageID
}

// ClaimReply implements store.Replies.
func (s *Store) ClaimReply(ctx context.Context, owner string, send store.Send, pending time.Duration) (*store.Reply, error) {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	ms := max(pending.Milliseconds(), 1)
	v, err := s.claimReply.Exec(c, s.cli(), []string{s.replyKey(owner, send.MessageID)},
		[]string{string(rune(pack.ReplyPending)) + send.Digest + "\x00", strconv.FormatInt(ms, 10)}).ToString()
	if isNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return decodeReply(v)
}

// SettleReply implements store.Replies.
func (s *Store) SettleReply(ctx context.Context, owner string, send store.Send, r *store.Reply) error {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	kind, body := pack.EncodeReply(r)
	v := string(kind) + r.Digest + "\x00" + string(body)
	cl := s.cli()
	if err := cl.Do(c, cl.B().Set().Key(s.replyKey(owner, send.MessageID)).Value(v).Pxat(send.Lapse(s.opts.TTL)).Build()).Error(); err != nil {
		return s.fail(ctx, err)
	}
	return nil
}

// DropReply implements store.Replies.
func (s *Store) DropReply(ctx context.Context, owner, messageID string) error {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	cl := s.cli()
	if err := cl.Do(c, cl.B().Del().Key(s.replyKey(owner, messageID)).Build()).Error(); err != nil {
		return s.fail(ctx, err)
	}
	return nil
}

// decodeReply reads a claim's value.
func decodeReply(v string) (*store.Reply, error) {
	if v == "" {
		return nil, errBadReply
	}
	digest, rest, ok := strings.Cut(v[1:], "\x00")
	if !ok {
		return nil, errBadReply
	}
	r, err := pack.DecodeReply(v[0], digest, []byte(rest))
	if err != nil {
		return nil, errBadReply
	}
	return r, nil
}

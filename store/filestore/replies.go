package filestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"time"

	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/internal/pack"
)

// The sends claimed before their answer (store.Replies), in bReplies,
// with bReplyLapse ordering them by when they lapse, for the sweep and
// for room: they are charged to the scope's bytes, and over MaxBytes a
// settle drops the claims lapsing soonest (never a task); bReplyOwners
// counts each owner's, and over its share (MaxTasksPerOwner, as its
// tasks) the owner's own lapsing soonest go first. A record is
// when it lapses (be64, store clock), the answer's kind, lp(digest), the
// answer's body (pack.EncodeReply).

var _ store.Replies = (*Store)(nil)

// errBadReply is a reply record that does not read back.
var errBadReply = errors.New("filestore: malformed reply claim")

// ClaimReply implements store.Replies.
func (s *Store) ClaimReply(ctx context.Context, owner string, send store.Send, pending time.Duration) (*store.Reply, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	var found *store.Reply
	err := s.write(func(x *txn) error {
		k := sendKey(owner, send.MessageID)
		if v := x.replies.Get(k); v != nil {
			until, r, err := decodeReply(v)
			if err != nil {
				return err
			}
			if x.now < until {
				found = r
				return nil
			}
		}
		return x.putReply(k, x.now+int64(pending), pack.ReplyPending, send.Digest, nil)
	})
	return found, err
}

// SettleReply implements store.Replies.
func (s *Store) SettleReply(ctx context.Context, owner string, send store.Send, r *store.Reply) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	until := int64(math.MaxInt64)
	kind, rest := pack.EncodeReply(r)
	return s.write(func(x *txn) error {
		switch {
		case !send.Until.IsZero():
			until = send.Until.UnixNano()
		case s.opts.TTL > 0:
			until = x.now + int64(s.opts.TTL)
		}
		k := sendKey(owner, send.MessageID)
		if err := x.putReply(k, until, kind, r.Digest, rest); err != nil {
			return err
		}
		return x.roomForReplies(k)
	})
}

// DropReply implements store.Replies.
func (s *Store) DropReply(ctx context.Context, owner, messageID string) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	return s.write(func(x *txn) error { return x.dropReply(sendKey(owner, messageID)) })
}

// putReply sets the claim k, charging its bytes.
func (x *txn) putReply(k []byte, until int64, kind byte, digest string, rest []byte) error {
	if err := x.dropReply(k); err != nil {
		return err
	}
	v := append(append(be64(nil, until), kind), lp(digest)...)
	v = append(v, rest...)
	if err := x.replies.Put(k, v); err != nil {
		return err
	}
	if err := x.replyLapse.Put(append(be64(nil, until), k...), nil); err != nil {
		return err
	}
	if err := x.charge(int64(len(k)+len(v)) + recordOverhead); err != nil {
		return err
	}
	return x.ownReply(k, 1)
}

// ownReply adds delta to the count of the claims of k's owner and, past
// the owner's share, drops the owner's claims lapsing soonest, but k.
// The anonymous owner's are not counted, as its tasks are not.
func (x *txn) ownReply(k []byte, delta int64) error {
	n, w := binary.Uvarint(k)
	if w <= 0 || n == 0 || uint64(len(k)-w) < n {
		return nil
	}
	ok := k[:w+int(n)]
	count := int64(0)
	if v := x.replyOwners.Get(ok); len(v) == 8 {
		count = int64(binary.BigEndian.Uint64(v))
	}
	count = max(count+delta, 0)
	var err error
	if count == 0 {
		err = x.replyOwners.Delete(ok)
	} else {
		err = x.replyOwners.Put(bytes.Clone(ok), binary.BigEndian.AppendUint64(nil, uint64(count)))
	}
	if err != nil || delta < 0 || x.opts.MaxTasksPerOwner <= 0 || count <= int64(x.opts.MaxTasksPerOwner) {
		return err
	}
	var first []byte
	var at int64
	c := x.replies.Cursor()
	for ck, cv := c.Seek(ok); ck != nil && bytes.HasPrefix(ck, ok); ck, cv = c.Next() {
		if len(cv) >= 8 && !bytes.Equal(ck, k) && (first == nil || unbe64(cv[:8]) < at) {
			first, at = bytes.Clone(ck), unbe64(cv[:8])
		}
	}
	if first == nil {
		return nil
	}
	return x.dropReply(first)
}

// dropReply removes the claim k, if any.
func (x *txn) dropReply(k []byte) error {
	v := x.replies.Get(k)
	if len(v) < 8 {
		return nil
	}
	size := int64(len(k)+len(v)) + recordOverhead
	if err := x.replyLapse.Delete(append(bytes.Clone(v[:8]), k...)); err != nil {
		return err
	}
	if err := x.replies.Delete(k); err != nil {
		return err
	}
	if err := x.charge(-size); err != nil {
		return err
	}
	return x.ownReply(k, -1)
}

// sweepReplies drops up to n lapsed claims; it returns how many.
func (x *txn) sweepReplies(n int) int {
	var victims [][]byte
	c := x.replyLapse.Cursor()
	for k, _ := c.First(); len(k) > 8 && len(victims) < n && unbe64(k[:8]) <= x.now; k, _ = c.Next() {
		victims = append(victims, bytes.Clone(k[8:]))
	}
	for _, k := range victims {
		_ = x.dropReply(k)
	}
	return len(victims)
}

// roomForReplies drops the claims lapsing soonest, but keep, while the
// scope is charged more than MaxBytes.
func (x *txn) roomForReplies(keep []byte) error {
	if x.opts.MaxBytes <= 0 {
		return nil
	}
	for x.bytes() > x.opts.MaxBytes {
		c := x.replyLapse.Cursor()
		k, _ := c.First()
		for len(k) > 8 && bytes.Equal(k[8:], keep) {
			k, _ = c.Next()
		}
		if len(k) <= 8 {
			return nil
		}
		if err := x.dropReply(bytes.Clone(k[8:])); err != nil {
			return err
		}
	}
	return nil
}

// decodeReply reads a claim's record: when it lapses, and the reply.
func decodeReply(v []byte) (int64, *store.Reply, error) {
	if len(v) < 9 {
		return 0, nil, errBadReply
	}
	until, kind := unbe64(v[:8]), v[8]
	n, k := binary.Uvarint(v[9:])
	if k <= 0 || uint64(len(v)-9-k) < n {
		return 0, nil, errBadReply
	}
	r, err := pack.DecodeReply(kind, string(v[9+k:9+k+int(n)]), v[9+k+int(n):])
	if err != nil {
		return 0, nil, errBadReply
	}
	return until, r, nil
}

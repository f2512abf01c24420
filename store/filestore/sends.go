package filestore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"

	"github.com/caddy-a2a/caddy-a2a/store"
)

// The sends claimed (store.Sends), in the write that starts a turn:
// bSends by owner and messageId, naming the task, the digest and when the
// claim lapses; bTaskSends lists each task's, so that its removal takes
// them along (they count against the task bounds).

var _ store.Sends = (*Store)(nil)

// errBadClaim is a claim record that does not read back.
var errBadClaim = errors.New("filestore: malformed send claim")

func sendKey(owner, messageID string) []byte { return append(lp(owner), messageID...) }

// claimed returns a *store.SentError if owner holds a live claim of
// send's messageId (one lapsed, or whose task is gone, is none).
func (x *txn) claimed(owner string, send *store.Send) error {
	v := x.sends.Get(sendKey(owner, send.MessageID))
	if len(v) < 8 {
		return nil
	}
	until := unbe64(v[:8])
	n, k := binary.Uvarint(v[8:])
	if k <= 0 || uint64(len(v)-8-k) < n {
		return errBadClaim
	}
	taskID := string(v[8+k : 8+k+int(n)])
	digest := v[8+k+int(n):]
	if x.now >= until {
		return nil
	}
	if h, err := x.live(taskID, &owner); err != nil || h == nil {
		return nil
	}
	return &store.SentError{TaskID: taskID, Same: bytes.Equal(digest, []byte(send.Digest))}
}

// claim claims send for owner on task id's behalf.
func (x *txn) claim(owner string, send *store.Send, id string) error {
	until := int64(math.MaxInt64)
	if !send.Until.IsZero() {
		until = send.Until.UnixNano()
	}
	v := append(append(be64(nil, until), lp(id)...), send.Digest...)
	if err := x.sends.Put(sendKey(owner, send.MessageID), v); err != nil {
		return err
	}
	return x.taskSends.Put(append(lp(id), send.MessageID...), nil)
}

// dropSends removes the claims task id (owned by owner) made.
func (x *txn) dropSends(id, owner string) error {
	p := lp(id)
	var ids []string
	c := x.taskSends.Cursor()
	for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, _ = c.Next() {
		ids = append(ids, string(k[len(p):]))
	}
	for _, mid := range ids {
		key := sendKey(owner, mid)
		if v := x.sends.Get(key); len(v) > 8 && bytes.HasPrefix(v[8:], p) {
			if err := x.sends.Delete(key); err != nil {
				return err
			}
		}
	}
	return deletePrefix(x.taskSends, p)
}

package filestore

import (
	"encoding/binary"
	"errors"
	"math"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// The buckets inside a scope's bucket (doc.go has the picture).
var (
	bHeaders = []byte("h") // id → header
	bSnaps   = []byte("t") // id → snapshot record
	bEvents  = []byte("e") // lp(id) pos → event record
	bOwners  = []byte("o") // lp(owner) ts id → state, updated, context id
	bLots    = []byte("l") // lot updated id → owner; 'r' id → owner
	bPush    = []byte("p") // id → push configs
	bClaims  = []byte("c") // lp(id) key → nothing
	bSecrets = []byte("s") // name → secret
	bMeta    = []byte("m") // metaBytes → what the scope is charged
	// bSends are the sends claimed (sends.go): lp(owner) messageId →
	// until, lp(task id), digest; bTaskSends each task's: lp(id)
	// messageId → nothing.
	bSends     = []byte("n")
	bTaskSends = []byte("N")
	// bReplies are the sends claimed before their answer (replies.go):
	// lp(owner) messageId → when it lapses, the answer; bReplyLapse
	// orders them by when they lapse: lapse lp(owner) messageId → nothing.
	bReplies    = []byte("r")
	bReplyLapse = []byte("R")
	// bReplyOwners counts each owner's claims: lp(owner) → count.
	bReplyOwners = []byte("O")
)

// metaBytes is the key of the scope's charge in bMeta.
var metaBytes = []byte("bytes")

// scopePrefix starts the name of every scope's top-level bucket: a
// later release can keep buckets of another kind beside them.
const scopePrefix = "scope "

// The lots are the first byte of a bLots key: finished and waiting tasks
// by their last write (the sweep and eviction take the oldest first),
// and the running ones, which the orphan rule looks for at open.
const (
	lotFinished = 'f'
	lotIdle     = 'i'
	lotRunning  = 'r'
)

// maxName bounds task ids, owners, push config ids and claim keys: they
// are names, and a bbolt key holds at most 32 KiB.
const maxName = 4096

var (
	errNoID     = errors.New("filestore: task has no id")
	errLongName = errors.New("filestore: id or owner longer than 4096 bytes")
	errMatchID  = errors.New("filestore: Update task id does not match")
)

// checkNames refuses an empty task id and names too long for a key.
func checkNames(id, owner string) error {
	if id == "" {
		return errNoID
	}
	if len(id) > maxName || len(owner) > maxName {
		return errLongName
	}
	return nil
}

// lp is s after its length: keys that start with one are prefix-free,
// so a prefix scan of lp(id) meets no other task's keys.
func lp(s string) []byte {
	return append(binary.AppendUvarint(make([]byte, 0, len(s)+2+16), uint64(len(s))), s...)
}

// be64 appends n biased to unsigned, big-endian: byte order is number
// order, negative numbers first.
func be64(b []byte, n int64) []byte { return binary.BigEndian.AppendUint64(b, uint64(n)^(1<<63)) }

// unbe64 reads what be64 wrote.
func unbe64(b []byte) int64 { return int64(binary.BigEndian.Uint64(b) ^ (1 << 63)) }

// eventKey is the key of the event at position pos of task id's log.
func eventKey(id string, pos uint64) []byte {
	return binary.BigEndian.AppendUint64(lp(id), pos)
}

// tsKey is the sort key of a status timestamp: the zero time first.
func tsKey(t *protocol.Task) int64 {
	if t.Status.Timestamp.IsZero() {
		return math.MinInt64
	}
	return t.Status.Timestamp.UnixNano()
}

// ownerKey is a task's key in its owner's index.
func ownerKey(owner string, ts int64, id string) []byte {
	return append(be64(lp(owner), ts), id...)
}

// lotOf is the lot of a task in state st.
func lotOf(st protocol.TaskState) byte {
	switch {
	case st.Terminal():
		return lotFinished
	case st.Interrupted():
		return lotIdle
	}
	return lotRunning
}

// lotKey is a task's key in its lot: running tasks have no order.
func lotKey(lot byte, updated int64, id string) []byte {
	if lot == lotRunning {
		return append([]byte{lotRunning}, id...)
	}
	return append(be64([]byte{lot}, updated), id...)
}

// ttlOf is how long a task of lot is kept after its last write (<= 0:
// until evicted).
func (o *Options) ttlOf(lot byte) time.Duration {
	switch lot {
	case lotFinished:
		return o.TTL
	case lotIdle:
		return o.IdleTTL
	}
	return 0
}

// expiredAt reports whether a task of lot last written at updated has
// outlived its TTL at now. The TTL is applied at read, not stored: a
// reload that changes ttl applies it to the tasks already kept.
func (o *Options) expiredAt(lot byte, updated, now int64) bool {
	ttl := o.ttlOf(lot)
	return ttl > 0 && now-updated >= int64(ttl)
}

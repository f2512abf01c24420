package filestore

import (
	"bytes"
	"encoding/binary"

	bolt "go.etcd.io/bbolt"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// txn is one transaction on a scope's buckets, with the store's options
// and clock, and the tasks a write appended to or removed (whose waiters
// Store.write wakes once it is committed).
type txn struct {
	opts                              *Options
	now                               int64
	headers, snaps, events, owners    *bolt.Bucket
	lots, push, claims, secrets, meta *bolt.Bucket
	sends, taskSends                  *bolt.Bucket
	replies, replyLapse, replyOwners  *bolt.Bucket
	appended, removed                 []string
	swept                             bool
}

func (s *Store) txn(tx *bolt.Tx) *txn {
	b := tx.Bucket(s.bucket)
	return &txn{
		opts: &s.opts, now: s.opts.Now().UnixNano(),
		headers: b.Bucket(bHeaders), snaps: b.Bucket(bSnaps), events: b.Bucket(bEvents), owners: b.Bucket(bOwners),
		lots: b.Bucket(bLots), push: b.Bucket(bPush), claims: b.Bucket(bClaims), secrets: b.Bucket(bSecrets), meta: b.Bucket(bMeta),
		sends: b.Bucket(bSends), taskSends: b.Bucket(bTaskSends),
		replies: b.Bucket(bReplies), replyLapse: b.Bucket(bReplyLapse), replyOwners: b.Bucket(bReplyOwners),
	}
}

// header returns task id's header, nil if there is none.
func (x *txn) header(id string) (*header, error) {
	v := x.headers.Get([]byte(id))
	if v == nil {
		return nil, nil
	}
	return decodeHeader(v)
}

// live returns task id's header if the task is there and not expired
// (and, unless owner is nil, belongs to *owner); store.ErrNotFound if not.
func (x *txn) live(id string, owner *string) (*header, error) {
	h, err := x.header(id)
	if err != nil {
		return nil, err
	}
	if h == nil || x.expired(h) || (owner != nil && h.owner != *owner) {
		return nil, store.ErrNotFound
	}
	return h, nil
}

func (x *txn) expired(h *header) bool { return x.opts.expiredAt(lotOf(h.state), h.updated, x.now) }

// index writes h's entries: its header, its owner index entry and its
// lot entry. unindex removes the last two of an earlier header.
func (x *txn) index(id string, h *header) error {
	if err := x.headers.Put([]byte(id), h.encode()); err != nil {
		return err
	}
	if err := x.owners.Put(ownerKey(h.owner, h.ts, id), h.ownerEntry()); err != nil {
		return err
	}
	return x.lots.Put(lotKey(lotOf(h.state), h.updated, id), []byte(h.owner))
}

func (x *txn) unindex(id string, h *header) error {
	if err := x.owners.Delete(ownerKey(h.owner, h.ts, id)); err != nil {
		return err
	}
	return x.lots.Delete(lotKey(lotOf(h.state), h.updated, id))
}

// bytes is what the scope is charged.
func (x *txn) bytes() int64 {
	v := x.meta.Get(metaBytes)
	if len(v) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

// charge adds delta to what the scope is charged.
func (x *txn) charge(delta int64) error {
	if delta == 0 {
		return nil
	}
	return x.meta.Put(metaBytes, binary.BigEndian.AppendUint64(nil, uint64(max(x.bytes()+delta, 0))))
}

// appendEvents writes events at the positions after h.last, counting
// their bytes into h (not yet written back).
func (x *txn) appendEvents(id string, h *header, recs [][]byte) error {
	for _, rec := range recs {
		h.last++
		if err := x.events.Put(eventKey(id, h.last), rec); err != nil {
			return err
		}
		h.events += int64(len(rec)) + recordOverhead
	}
	if len(recs) > 0 {
		x.appended = append(x.appended, id)
	}
	return nil
}

// remove deletes task id, whose header is h, and every record of it.
func (x *txn) remove(id string, h *header) error {
	if err := x.unindex(id, h); err != nil {
		return err
	}
	if err := x.dropSends(id, h.owner); err != nil {
		return err
	}
	for _, b := range []*bolt.Bucket{x.headers, x.snaps, x.push} {
		if err := b.Delete([]byte(id)); err != nil {
			return err
		}
	}
	for _, b := range []*bolt.Bucket{x.events, x.claims} {
		if err := deletePrefix(b, lp(id)); err != nil {
			return err
		}
	}
	x.removed = append(x.removed, id)
	return x.charge(-h.charge())
}

// deletePrefix deletes b's keys that start with p. bbolt's cursor
// skips a key after a Delete, so it seeks again after each one.
func deletePrefix(b *bolt.Bucket, p []byte) error {
	c := b.Cursor()
	for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, _ = c.Seek(p) {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}

// removeByLot removes the task of lot key k (a key of x.lots).
func (x *txn) removeByLot(k []byte) error {
	id := string(k[1:])
	if k[0] != lotRunning {
		id = string(k[9:])
	}
	h, err := x.header(id)
	if err != nil {
		return err
	}
	if h == nil {
		return x.lots.Delete(k)
	}
	return x.remove(id, h)
}

// sweep removes up to n expired tasks and returns how many it removed.
func (x *txn) sweep(n int) int {
	x.swept = true
	done := x.sweepReplies(n)
	for _, lot := range []byte{lotFinished, lotIdle} {
		ttl := x.opts.ttlOf(lot)
		if ttl <= 0 {
			continue
		}
		var victims [][]byte
		c := x.lots.Cursor()
		for k, _ := c.Seek([]byte{lot}); len(k) >= 9 && k[0] == lot && done+len(victims) < n; k, _ = c.Next() {
			if !x.opts.expiredAt(lot, unbe64(k[1:9]), x.now) {
				break
			}
			victims = append(victims, bytes.Clone(k))
		}
		for _, k := range victims {
			if x.removeByLot(k) == nil {
				done++
			}
		}
	}
	return done
}

// makeRoom makes room for a new task of size bytes owned by owner:
// within the owner's quota, then within the scope's bytes. It evicts
// finished tasks of any owner and waiting tasks of this owner only,
// oldest first, as the memory store does: no caller pushes another's
// waiting conversation out.
func (x *txn) makeRoom(owner string, size int64) error {
	if max := x.opts.MaxTasksPerOwner; max > 0 && owner != "" {
		for x.ownerCount(owner, max) >= max {
			if !x.swept {
				x.sweep(1 << 30)
				continue
			}
			ok, err := x.evictOwn(owner, protocol.TaskState.Terminal)
			if err == nil && !ok {
				ok, err = x.evictOwn(owner, protocol.TaskState.Interrupted)
			}
			if err != nil {
				return err
			}
			if !ok {
				return &store.LimitError{Err: store.ErrQuota, Limit: "max_tasks_per_owner", Max: int64(max)}
			}
		}
	}
	if x.opts.MaxBytes <= 0 {
		return nil
	}
	for x.bytes()+size > x.opts.MaxBytes {
		if !x.swept {
			x.sweep(1 << 30)
			continue
		}
		ok, err := x.evictLot(lotFinished, "", true)
		if err == nil && !ok {
			ok, err = x.evictLot(lotIdle, owner, false)
		}
		if err != nil {
			return err
		}
		if !ok {
			return &store.LimitError{Err: store.ErrFull, Limit: "max_bytes", Max: x.opts.MaxBytes}
		}
	}
	return nil
}

// shrink evicts finished tasks, oldest first, until the scope is within
// MaxBytes or none is left: an Update that took it over stands.
func (x *txn) shrink() error {
	for x.opts.MaxBytes > 0 && x.bytes() > x.opts.MaxBytes {
		ok, err := x.evictLot(lotFinished, "", true)
		if err != nil || !ok {
			return err
		}
	}
	return nil
}

// ownerCount counts owner's tasks, stopping at limit.
func (x *txn) ownerCount(owner string, limit int) int {
	p := lp(owner)
	n := 0
	c := x.owners.Cursor()
	for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p) && n < limit; k, _ = c.Next() {
		n++
	}
	return n
}

// evictOwn removes owner's task in a state is holds for whose status
// changed longest ago; false if there is none.
func (x *txn) evictOwn(owner string, is func(protocol.TaskState) bool) (bool, error) {
	p := lp(owner)
	c := x.owners.Cursor()
	for k, v := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, v = c.Next() {
		st, _, _, err := decodeOwnerEntry(v)
		if err != nil {
			return false, err
		}
		if is(st) {
			id := string(k[len(p)+8:])
			h, err := x.header(id)
			if err != nil || h == nil {
				return false, err
			}
			return true, x.remove(id, h)
		}
	}
	return false, nil
}

// evictLot removes the task of lot written longest ago (of owner only,
// unless anyOwner); false if there is none. Walking for an owner is
// slow, but it runs only when the scope is full of running and waiting
// tasks.
func (x *txn) evictLot(lot byte, owner string, anyOwner bool) (bool, error) {
	c := x.lots.Cursor()
	for k, v := c.Seek([]byte{lot}); len(k) > 0 && k[0] == lot; k, v = c.Next() {
		if anyOwner || string(v) == owner {
			return true, x.removeByLot(bytes.Clone(k))
		}
	}
	return false, nil
}

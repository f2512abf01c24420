package redisstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/internal/pack"
)

var (
	errNoID    = errors.New("redisstore: task has no id")
	errBadID   = errors.New("redisstore: task id holds a NUL byte")
	errMatchID = errors.New("redisstore: Update task id does not match")
	// errCorrupt: a record did not decode (a bug or a damaged key).
	errCorrupt = pack.ErrCorrupt
)

// checkID refuses ids the owner index cannot hold: NUL ends the id in an
// index member.
func checkID(id string) error {
	if id == "" {
		return errNoID
	}
	if strings.IndexByte(id, 0) >= 0 {
		return errBadID
	}
	return nil
}

// writeArgs builds the ARGV of luaWrite. The snapshot and the events
// are encoded into one pooled buffer that the arguments point into
// without a copy; the caller hands it back with release once Redis has
// answered the command, and not before (see release).
//
// A copy of the buffer into one string was half of what a Caddy
// streaming through store redis allocated (a chunk re-sends the task's
// snapshot, which grows with the stream): without it, a 12 s run of
// bench/run.sh's "Chunk latency by store" collects 12-14 times where it
// did 22-24 (its p99 stayed within the noise); BenchmarkWriteArgs counts
// the allocations.
func (s *Store) writeArgs(mode string, version uint64, owner string, send *store.Send, t *protocol.Task, events []protocol.Event) ([]string, *[]byte) {
	st := t.Status.State
	maxOwn := s.opts.MaxTasksPerOwner
	if maxOwn < 0 {
		maxOwn = 0
	}
	sec := s.secrets.writeArgs()
	args := make([]string, 16, 16+len(sec)+len(events))
	args[0] = mode
	args[1] = strconv.FormatUint(version, 10)
	args[2] = owner
	bp := encodeBufs.Get().(*[]byte)
	buf := pack.EncodeTask((*bp)[:0], t)
	ends := make([]int, 1, 1+len(events))
	ends[0] = len(buf)
	for i := range events {
		buf = pack.EncodeEvent(buf, t.ID, &events[i])
		ends = append(ends, len(buf))
	}
	*bp = buf
	all := rueidis.BinaryString(buf)
	args[3] = all[:ends[0]]
	args[4] = strconv.Itoa(int(st))
	args[5] = tsHex(t.Status.Timestamp)
	args[6] = t.ContextID
	args[7] = strconv.FormatInt(s.ttlMillis(st.Terminal(), st.Interrupted()), 10)
	args[8] = strconv.Itoa(s.opts.MaxEventsPerTask)
	args[9] = strconv.Itoa(maxOwn)
	args[10] = s.base
	args[11] = t.ID
	args[12] = strconv.FormatInt(s.lapse(), 10)
	if send != nil {
		args[13], args[14] = send.MessageID, send.Digest
		args[15] = strconv.FormatInt(s.claimLapse(send), 10)
	}
	args = append(args, sec...)
	for i := range events {
		args = append(args, all[ends[i]:ends[i+1]])
	}
	return args, bp
}

// release puts back a buffer of writeArgs whose command Redis answered:
// the client has written all of it, and nothing keeps the arguments.
// After an error it must not be called: a command whose wait was cut
// short by its context may still be written later, from the buffer.
func release(bp *[]byte) {
	if cap(*bp) <= maxPooledBuf {
		encodeBufs.Put(bp)
	}
}

// maxPooledBuf bounds the buffers kept: a task of megabytes does not
// leave one behind.
const maxPooledBuf = 64 << 10

// encodeBufs are writeArgs' encoding buffers.
var encodeBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// runWrite runs luaWrite and maps its status word.
func (s *Store) runWrite(ctx context.Context, id string, args []string, buf *[]byte) (uint64, string, error) {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return 0, "", err
	}
	defer cancel()
	tk := taskKeys(s.base, id)
	keys := []string{tk[0], tk[1], tk[2], s.runsKey()}
	r, err := s.write.Exec(c, s.cli(), keys, args).ToArray()
	if err != nil {
		return 0, "", s.fail(ctx, err)
	}
	release(buf)
	word, _ := r[0].ToString()
	switch word {
	case "ok":
	case "exists":
		return 0, "", store.ErrExists
	case "notfound":
		return 0, "", store.ErrNotFound
	case "conflict":
		return 0, "", store.ErrConflict
	case "toomany":
		return 0, "", store.ErrTooManyEvents
	case "sent", "reused":
		task := ""
		if len(r) > 1 {
			task, _ = r[1].ToString()
		}
		return 0, "", &store.SentError{TaskID: task, Same: word == "sent"}
	case "quota":
		return 0, "", &store.LimitError{Err: store.ErrQuota, Limit: "max_tasks_per_owner", Max: int64(s.opts.MaxTasksPerOwner)}
	default:
		return 0, "", errors.New("redisstore: unexpected script reply " + strconv.Quote(word))
	}
	if len(r) < 4 {
		return 0, "", errors.New("redisstore: short script reply")
	}
	// Secrets another process made anew while this one held the old.
	for i := 4; i+1 < len(r); i += 2 {
		key, _ := r[i].ToString()
		v, _ := r[i+1].ToString()
		s.secrets.adopt(key, []byte(v), false)
	}
	v, err := r[1].AsInt64()
	if err != nil {
		return 0, "", s.fail(ctx, err)
	}
	last, _ := r[2].ToString()
	if p, _ := r[3].AsInt64(); p == 1 {
		s.pushHints.Store(id, struct{}{})
	} else {
		s.pushHints.Delete(id)
	}
	return uint64(v), last, nil
}

// Create implements store.Store.
func (s *Store) Create(ctx context.Context, owner string, t *protocol.Task, events ...protocol.Event) (uint64, error) {
	return s.create(ctx, owner, nil, t, events)
}

// CreateSend implements store.Sends.
func (s *Store) CreateSend(ctx context.Context, owner string, send store.Send, t *protocol.Task, events ...protocol.Event) (uint64, error) {
	return s.create(ctx, owner, &send, t, events)
}

// create is Create, claiming send unless it is nil.
func (s *Store) create(ctx context.Context, owner string, send *store.Send, t *protocol.Task, events []protocol.Event) (uint64, error) {
	if t == nil {
		return 0, errNoID
	}
	if err := checkID(t.ID); err != nil {
		return 0, err
	}
	st := t.Status.State
	running := !st.Terminal() && !st.Interrupted()
	if running {
		s.sub.expect(t.ID)
	}
	args, buf := s.writeArgs("c", 0, owner, send, t, events)
	v, _, err := s.runWrite(ctx, t.ID, args, buf)
	if err == nil {
		s.noteState(t.ID, st, v)
	} else if running {
		s.sub.forget(t.ID)
	}
	return v, err
}

// Update implements store.Store.
func (s *Store) Update(ctx context.Context, id string, version uint64, t *protocol.Task, events ...protocol.Event) (uint64, string, error) {
	return s.update(ctx, "", nil, id, version, t, events)
}

// UpdateSend implements store.Sends.
func (s *Store) UpdateSend(ctx context.Context, owner string, send store.Send, id string, version uint64, t *protocol.Task, events ...protocol.Event) (uint64, string, error) {
	return s.update(ctx, owner, &send, id, version, t, events)
}

// update is Update, by owner claiming send unless it is nil.
func (s *Store) update(ctx context.Context, owner string, send *store.Send, id string, version uint64, t *protocol.Task, events []protocol.Event) (uint64, string, error) {
	if t == nil || t.ID != id {
		return 0, "", errMatchID
	}
	if err := checkID(id); err != nil {
		return 0, "", err
	}
	args, buf := s.writeArgs("u", version, owner, send, t, events)
	v, last, err := s.runWrite(ctx, id, args, buf)
	if err == nil {
		s.noteState(id, t.Status.State, v)
	}
	return v, last, err
}

// Get implements store.Store: one HMGET of the task hash.
func (s *Store) Get(ctx context.Context, owner, id string) (*store.Record, error) {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	keys := taskKeys(s.base, id)
	cl := s.cli()
	r, err := cl.Do(c, cl.B().Hmget().Key(keys[0]).Field("o", "v", "s", "n").Build()).ToArray()
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	if len(r) != 4 || r[0].IsNil() {
		return nil, store.ErrNotFound
	}
	if o, _ := r[0].ToString(); o != owner {
		return nil, store.ErrNotFound
	}
	vs, _ := r[1].ToString()
	v, err := strconv.ParseUint(vs, 10, 64)
	if err != nil {
		return nil, errCorrupt
	}
	snap, _ := r[2].ToString()
	t, err := pack.DecodeTask([]byte(snap), id, store.View{})
	if err != nil {
		return nil, err
	}
	rec := &store.Record{Task: t, Owner: owner, Version: v}
	if n, _ := r[3].ToString(); n != "0" {
		rec.LastEventID = n
	}
	return rec, nil
}

// isNil reports whether err is a nil reply (a script's false).
func isNil(err error) bool { return rueidis.IsRedisNil(err) }

var _ store.Sends = (*Store)(nil)

// claimLapse is when send's claim lapses (unix ms): its Until, else
// when the longer of the store's expiries would drop its task.
func (s *Store) claimLapse(send *store.Send) int64 {
	if !send.Until.IsZero() {
		return send.Until.UnixMilli()
	}
	d := max(s.opts.TTL, s.opts.IdleTTL)
	if d <= 0 {
		d = DefaultIdleTTL
	}
	return time.Now().Add(d).UnixMilli()
}

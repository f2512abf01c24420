package pgstore

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/internal/pack"
)

var (
	errNoID    = errors.New("pgstore: task has no id")
	errBadID   = errors.New("pgstore: task id holds a NUL byte")
	errMatchID = errors.New("pgstore: Update task id does not match")
)

// checkID refuses ids a text column cannot hold.
func checkID(id string) error {
	if id == "" {
		return errNoID
	}
	if strings.IndexByte(id, 0) >= 0 {
		return errBadID
	}
	return nil
}

// tsNanos is a status timestamp as the tables order it: unix
// nanoseconds, the zero time first (as the memory store sorts it).
func tsNanos(t time.Time) int64 {
	if t.IsZero() {
		return math.MinInt64
	}
	return t.UnixNano()
}

// write runs the write function (write.go) and maps its status word.
func (s *Store) write(ctx context.Context, create bool, version uint64, owner string, send *store.Send, t *protocol.Task, events []protocol.Event) (uint64, int64, error) {
	_, cancel, err := s.op(ctx)
	if err != nil {
		return 0, 0, err
	}
	cancel() // the group's round trip has a bound of its own
	st := t.Status.State
	kind := kindOf(st.Terminal(), st.Interrupted())
	maxOwn := max(s.opts.MaxTasksPerOwner, 0)
	evs := make([][]byte, len(events))
	for i := range events {
		evs[i] = pack.EncodeEvent(nil, t.ID, &events[i])
	}
	w := &writeCall{args: []any{
		s.scope, t.ID, create, int64(version), owner, pack.EncodeTask(nil, t), int32(st), kind, tsNanos(t.Status.Timestamp),
		t.ContextID, s.ttlMillis(kind), int32(s.opts.MaxEventsPerTask), int32(maxOwn), s.opts.Lease.Milliseconds(),
		s.channel, evs, nil, nil, nil,
	}}
	if send != nil {
		w.args[16], w.args[17] = send.MessageID, send.Digest
		if !send.Until.IsZero() {
			w.args[18] = send.Until
		}
	}
	s.groups.Do(w, s.send)
	if w.err != nil {
		return 0, 0, s.fail(ctx, w.err)
	}
	word, v, last, hasPush := w.word, w.v, w.last, w.hasPush
	switch word {
	case "ok":
	case "exists":
		return 0, 0, store.ErrExists
	case "notfound":
		return 0, 0, store.ErrNotFound
	case "conflict":
		return 0, 0, store.ErrConflict
	case "toomany":
		return 0, 0, store.ErrTooManyEvents
	case "sent", "reused":
		return 0, 0, &store.SentError{TaskID: w.sentTask, Same: word == "sent"}
	case "quota":
		return 0, 0, &store.LimitError{Err: store.ErrQuota, Limit: "max_tasks_per_owner", Max: int64(s.opts.MaxTasksPerOwner)}
	default:
		return 0, 0, errors.New("pgstore: unexpected write status " + strconv.Quote(word))
	}
	if hasPush {
		s.pushHints.Store(t.ID, struct{}{})
	} else {
		s.pushHints.Delete(t.ID)
	}
	// This process renews the lease the write took, until a write here
	// settles the task (lease.go).
	s.leases.Note(t.ID, kind == 0, uint64(v))
	if kind != 0 {
		s.lis.forget(t.ID)
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
		s.lis.expect(t.ID)
	}
	v, _, err := s.write(ctx, true, 0, owner, send, t, events)
	if err != nil && running {
		s.lis.forget(t.ID)
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
	v, last, err := s.write(ctx, false, version, owner, send, t, events)
	if err != nil || last == 0 {
		return v, "", err
	}
	return v, strconv.FormatInt(last, 10), nil
}

// live is the condition of a row of tasks (aliased t) that has not
// expired: an expired row stays until the sweep, unseen.
const live = `(t.expires IS NULL OR t.expires > now())`

// Get implements store.Store: one SELECT of the task's row.
func (s *Store) Get(ctx context.Context, owner, id string) (*store.Record, error) {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	var (
		o    string
		v, n int64
		snap []byte
	)
	err = s.pool.QueryRow(c, s.sql(`SELECT owner, version, snap, n FROM {s}.tasks t WHERE scope = $1 AND id = $2 AND `+live),
		s.scope, id).Scan(&o, &v, &snap, &n)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	if o != owner {
		return nil, store.ErrNotFound
	}
	t, err := pack.DecodeTask(snap, id, store.View{})
	if err != nil {
		return nil, err
	}
	rec := &store.Record{Task: t, Owner: owner, Version: uint64(v)}
	if n > 0 {
		rec.LastEventID = strconv.FormatInt(n, 10)
	}
	return rec, nil
}

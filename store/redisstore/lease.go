package redisstore

import (
	"context"
	"strconv"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// Leases of running tasks. The process that writes a task into a running
// state (submitted, working: a send, its run) holds a lease on it in one
// sorted set of the prefix, scored by when the lease lapses, taken by
// that write, and renews the leases of all its running tasks every third
// of Options.Lease; the write that settles the task drops it. A process that dies stops
// renewing: its leases lapse, and another process's Orphans claims each
// (for a lease of its own: one claimant at a time, and none lost if the
// claimant's write fails) so that the service records the task failed. A
// run that ends without the settling write (Redis kept failing it) stops
// the renewal of its task's lease too (Abandon), or the task would stay
// running for good once Redis is back. The set is one key of its own,
// under the prefix's hash tag (the scripts reach a task's hash from it).

var _ store.Orphans = (*Store)(nil)

var _ store.Abandoner = (*Store)(nil)

func (s *Store) runsKey() string { return tag(s.base) + "runs" }

// noteState keeps this process's set of running tasks in step with the
// state it wrote: the write itself took or dropped the lease in Redis
// (luaWrite), and the renewals go on for the tasks in the set.
func (s *Store) noteState(id string, st protocol.TaskState, version uint64) {
	running := !st.Terminal() && !st.Interrupted()
	s.leases.Note(id, running, version)
	if !running {
		s.sub.forget(id)
	}
}

// Abandon implements store.Abandoner. Nothing is sent to Redis (which
// may well be down): the lease lapses Lease after its last renewal, and
// the next Orphans pass of any process, this one's included, claims the
// task then.
func (s *Store) Abandon(id string, version uint64) { s.leases.Abandon(id, version) }

// Lease is how long a lease lasts unrenewed (Options.Lease).
func (s *Store) Lease() time.Duration { return s.opts.Lease }

// lapse is when a lease renewed now lapses, in unix ms.
func (s *Store) lapse() int64 { return time.Now().Add(s.opts.Lease).UnixMilli() }

// renewLeases renews every lease of this process, every third of Lease.
func (s *Store) renewLeases() {
	defer s.done.Done()
	t := time.NewTicker(s.opts.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-s.closedCh:
			return
		case <-t.C:
		}
		ids := s.leases.IDs()
		if len(ids) == 0 {
			continue
		}
		c, cancel, err := s.op(context.Background())
		if err != nil {
			continue
		}
		// A task settled by another process (a cancel there) has left
		// the set: this process's run of it has stopped, so its lease
		// goes from here too, and ZADD XX below never brings it back.
		cl := s.cli()
		scores, err := cl.Do(c, cl.B().Zmscore().Key(s.runsKey()).Member(ids...).Build()).ToArray()
		if err == nil && len(scores) == len(ids) {
			s.leases.Drop(ids, func(i int) bool { return !scores[i].IsNil() })
			kept := ids[:0]
			for i, sc := range scores {
				if !sc.IsNil() {
					kept = append(kept, ids[i])
				}
			}
			ids = kept
		}
		if len(ids) == 0 {
			cancel()
			continue
		}
		cmd := cl.B().Zadd().Key(s.runsKey()).Xx().ScoreMember()
		score := float64(s.lapse())
		for _, id := range ids {
			cmd = cmd.ScoreMember(score, id)
		}
		_ = cl.Do(c, cmd.Build()).Error()
		cancel()
	}
}

// maxOrphans bounds the tasks one Orphans call claims.
const maxOrphans = 100

// Orphans implements store.Orphans: the running tasks whose lease lapsed
// (their process stopped renewing), each claimed for the caller for a
// lease (luaOrphans), read and claimed in one script. A claimant that
// cannot record the task failed need do nothing: its claim lapses and a
// later pass, on any process, claims the task again.
// A lease of this process lapses only once abandoned (it renews the
// others), so what is found is a dead process's or an abandoned run's.
func (s *Store) Orphans(ctx context.Context) ([]store.Orphan, error) {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	now := time.Now().UnixMilli()
	args := []string{strconv.FormatInt(now, 10), strconv.FormatInt(s.lapse(), 10), s.base, strconv.Itoa(maxOrphans)}
	r, err := s.orphans.Exec(c, s.cli(), []string{s.runsKey()}, args).AsStrSlice()
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := make([]store.Orphan, 0, len(r)/2)
	for i := 0; i+1 < len(r); i += 2 {
		out = append(out, store.Orphan{ID: r[i], Owner: r[i+1]})
	}
	return out, nil
}

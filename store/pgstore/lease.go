package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/caddy-a2a/caddy-a2a/store"
)

// Leases of running tasks. The write that makes a task running sets its
// row's lease to the server's now() + Lease, the one that settles it
// clears it (write.go), and the process renews the leases of all its
// running tasks every third of Lease. A process that dies stops
// renewing: once a lease is past, another process's Orphans claims the
// task (for a lease of its own: one claimant at a time, and none lost if
// the claimant's write fails) so that the service records it failed.
// Every time is the server's clock, so the processes' clocks need not
// agree.

var (
	_ store.Orphans   = (*Store)(nil)
	_ store.Abandoner = (*Store)(nil)
)

// Abandon implements store.Abandoner. Nothing is sent to the server
// (which may well be down): the lease lapses Lease after its last
// renewal, and the next Orphans pass of any process claims the task.
func (s *Store) Abandon(id string, version uint64) { s.leases.Abandon(id, version) }

// Lease is how long a lease lasts unrenewed (Options.Lease).
func (s *Store) Lease() time.Duration { return s.opts.Lease }

// renewLeases renews every lease of this process, every third of Lease.
// A task settled elsewhere (a cancel on another replica) has no lease
// left: the UPDATE does not bring it back, and the task leaves the set.
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
		if ids := s.leases.IDs(); len(ids) > 0 {
			s.renew(ids)
		}
	}
}

func (s *Store) renew(ids []string) {
	c, cancel, err := s.op(context.Background())
	if err != nil {
		return
	}
	defer cancel()
	// The rows are locked in id order, as a group of writes locks them
	// (group.go): no cycle of waits with one.
	rows, err := s.pool.Query(c, s.sql(`UPDATE {s}.tasks SET lease = now() + $3 * interval '1 millisecond'
WHERE scope = $1 AND id IN (
	SELECT id FROM {s}.tasks WHERE scope = $1 AND id = ANY($2) AND lease IS NOT NULL ORDER BY id FOR NO KEY UPDATE)
RETURNING id`), s.scope, ids, s.opts.Lease.Milliseconds())
	if err != nil {
		return
	}
	kept, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return
	}
	held := make(map[string]bool, len(kept))
	for _, id := range kept {
		held[id] = true
	}
	s.leases.Drop(ids, func(i int) bool { return held[ids[i]] })
}

// maxOrphans bounds the tasks one Orphans call claims.
const maxOrphans = 100

// Orphans implements store.Orphans: the running tasks whose lease is
// past, each claimed for the caller by moving its lease a Lease ahead,
// in the statement that finds them. Rows another claimant has locked
// are skipped, and a row it claimed is no longer past when re-checked,
// so each orphan has one claimant. A claimant that cannot record the
// task failed need do nothing: its claim lapses and a later pass, on any
// process, claims the task again.
func (s *Store) Orphans(ctx context.Context) ([]store.Orphan, error) {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	rows, err := s.pool.Query(c, s.sql(`UPDATE {s}.tasks SET lease = now() + $2 * interval '1 millisecond'
WHERE scope = $1 AND lease < now() AND id IN (
	SELECT id FROM {s}.tasks WHERE scope = $1 AND lease < now() ORDER BY lease LIMIT $3 FOR UPDATE SKIP LOCKED)
RETURNING id, owner`), s.scope, s.opts.Lease.Milliseconds(), maxOrphans)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Orphan, error) {
		var o store.Orphan
		return o, r.Scan(&o.ID, &o.Owner)
	})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return out, nil
}

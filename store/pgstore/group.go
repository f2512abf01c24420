package pgstore

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// The writes of a process go to the server in groups
// (store/internal/group): a write that finds none on its way is sent at
// once, alone (no added wait); the writes that arrive while a group is on
// its way go together in the next one, one round trip and one commit for
// all. On the bench machine a write's cost
// was mostly its round trip's: the wake-ups of the server's backend and
// of the writer, and the commit's flush (bench/run.sh's durable step).
//
// A group is one pipeline of write function calls (pgx.Batch), which the
// server runs as one implicit transaction: each call sees the ones
// before it, as if each were a transaction of its own, and all commit
// together or none does. A call refused for its own sake answers with a
// status word, not an error, so one write's conflict does not undo the
// others; a group that fails with an error (a deadlock with another
// process's group, say) is sent again one write at a time, each
// answering for itself.

// maxGroup bounds the writes of one group: a group holds its tasks' rows
// until it commits.
const maxGroup = 64

// writeCall is one call of the write function: its arguments, and its
// answer once its group is done.
type writeCall struct {
	args    []any
	word    string
	v, last int64
	hasPush bool
	// sentTask is the task a claimed send names ("sent", "reused").
	sentTask string
	err      error
}

// send runs group's calls, one round trip when they all go through.
func (s *Store) send(group []*writeCall) {
	if len(group) == 1 {
		s.sendOne(group[0])
		return
	}
	// Rows are locked in id order, as the lease renewal locks them, so
	// that no two groups (of two processes) nor a group and a renewal
	// wait on each other in a cycle: the server would break it only
	// after deadlock_timeout (1s by default), stalling every write of the
	// group. Writes of one task keep their order.
	slices.SortStableFunc(group, func(a, b *writeCall) int { return strings.Compare(a.args[1].(string), b.args[1].(string)) })
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.Timeout)
	defer cancel()
	b := &pgx.Batch{}
	for _, c := range group {
		b.Queue(s.writeSQL, c.args...)
	}
	br := s.pool.SendBatch(ctx, b)
	var err error
	for _, c := range group {
		if err = br.QueryRow().Scan(&c.word, &c.v, &c.last, &c.hasPush, &c.sentTask); err != nil {
			break
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		return
	}
	if lostServer(err) || errors.Is(err, context.DeadlineExceeded) || s.closed.Load() {
		// Whether it committed is not known: each write says so, as one
		// sent alone would.
		for _, c := range group {
			c.err = err
		}
		return
	}
	for _, c := range group {
		s.sendOne(c)
	}
}

// sendOne runs c alone.
func (s *Store) sendOne(c *writeCall) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.Timeout)
	defer cancel()
	c.err = s.pool.QueryRow(ctx, s.writeSQL, c.args...).Scan(&c.word, &c.v, &c.last, &c.hasPush, &c.sentTask)
}

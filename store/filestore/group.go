package filestore

import (
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// group commits the writes of every Store on one file in shared
// transactions: a write that finds none committing commits at once, alone
// (no added wait); the writes that arrive while a commit is on disk go in
// the next one, together. Each commit costs two fsyncs whatever it holds,
// and on the bench machine those syscalls were most of a write's CPU: one
// transaction per write held a file store to a tenth of the memory
// store's sends. bbolt's own DB.Batch waits MaxBatchDelay to gather a
// batch, which a lone stream's chunks would pay every time.
//
// The writes of one commit apply in arrival order, each seeing the ones
// before it, as if each had been a transaction of its own: one that fails
// is taken out (its error is its answer, found in the state the earlier
// ones made) and the rest applied again in a fresh transaction, since
// bbolt cannot roll back one write of a transaction. A write function may
// thus run more than once; each only sets what it reports.
type group struct {
	mu sync.Mutex
	// queue holds the writes waiting for the next commit.
	queue []*pending
	// busy is set while a writer commits; the first queued write leads
	// the next commit once it is done.
	busy bool
}

// pending is one write waiting in a group.
type pending struct {
	s   *Store
	fn  func(*txn) error
	x   *txn
	err error
	// wake is sent true when the write is committed (or failed), false
	// when its writer is to lead the next commit.
	wake chan bool
}

// do applies w's write: at once if no commit is under way, else in the
// next one.
func (g *group) do(db *bolt.DB, w *pending) {
	g.mu.Lock()
	g.queue = append(g.queue, w)
	if g.busy {
		g.mu.Unlock()
		if <-w.wake {
			return
		}
	} else {
		g.busy = true
		g.mu.Unlock()
	}
	g.lead(db, w)
}

// lead commits what is queued (w's write first among them), hands the
// next commit to the first write queued since, and wakes the writers of
// this one.
func (g *group) lead(db *bolt.DB, w *pending) {
	g.mu.Lock()
	batch := g.queue
	g.queue = nil
	g.mu.Unlock()
	commit(db, batch)
	g.mu.Lock()
	if len(g.queue) > 0 {
		next := g.queue[0]
		g.mu.Unlock()
		next.wake <- false
	} else {
		g.busy = false
		g.mu.Unlock()
	}
	for _, p := range batch {
		if p != w {
			p.wake <- true
		}
	}
}

// commit applies batch, in order, in as few transactions as its failures
// allow, leaving each write's result in it.
func commit(db *bolt.DB, batch []*pending) {
	for len(batch) > 0 {
		failed := -1
		err := db.Update(func(tx *bolt.Tx) error {
			for i, p := range batch {
				p.x = p.s.txn(tx)
				if p.err = apply(p); p.err != nil {
					failed = i
					return p.err
				}
			}
			return nil
		})
		if failed < 0 {
			for _, p := range batch {
				p.err = err
			}
			return
		}
		// The failed write's answer stands; the others go again without it.
		batch = append(batch[:failed:failed], batch[failed+1:]...)
	}
}

// apply runs p's write function. A panic in it is its write's error: the
// others of the commit, waiting on it, go on without it.
func apply(p *pending) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("filestore: write panicked: %v", r)
		}
	}()
	return p.fn(p.x)
}

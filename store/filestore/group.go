package filestore

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// The writes of every Store on one file are committed in shared
// transactions (store/internal/group): a write that finds none
// committing commits at once, alone (no added wait); the writes that
// arrive while a commit is on disk go in the next one, together. Each commit costs two fsyncs whatever it holds,
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
// pending is one write waiting for its commit, and its result.
type pending struct {
	s   *Store
	fn  func(*txn) error
	x   *txn
	err error
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

package filestore

import (
	"context"
	"time"

	"github.com/caddy-a2a/caddy-a2a/store"
)

// Lease is the file store's store.Orphans lease: no process renews
// anything (one process holds the file), so it only paces the handler,
// which looks for orphans every half lease, and bounds a claim.
const Lease = 2 * time.Second

// orphan is a task found running when the file was opened.
type orphan struct {
	owner   string
	version uint64
	// claimed is when the last claim on it lapses (zero: unclaimed).
	claimed time.Time
}

// Orphans implements store.Orphans: the tasks that were running when
// the previous process on the file stopped, found when this process
// opened it (shared.findOrphans). Each is handed out once per lease
// until it is written: a task written since the open (its version
// moved: recorded failed, or run again by this process) or gone is
// dropped, so a task this process runs is never an orphan.
func (s *Store) Orphans(ctx context.Context) ([]store.Orphan, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	sh := s.sh
	sh.mu.Lock()
	defer sh.mu.Unlock()
	found := sh.orphans[s.opts.Scope]
	if len(found) == 0 {
		return nil, nil
	}
	now := time.Now()
	var out []store.Orphan
	err := s.view(func(x *txn) error {
		for id, o := range found {
			h, err := x.header(id)
			if err != nil {
				return err
			}
			if h == nil || h.version != o.version || lotOf(h.state) != lotRunning {
				delete(found, id)
				continue
			}
			if now.Before(o.claimed) {
				continue
			}
			o.claimed = now.Add(Lease)
			out = append(out, store.Orphan{ID: id, Owner: o.owner})
		}
		return nil
	})
	return out, err
}

// Lease implements store.Orphans.
func (s *Store) Lease() time.Duration { return Lease }

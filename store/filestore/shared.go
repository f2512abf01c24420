package filestore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/caddy-a2a/caddy-a2a/store/internal/group"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// FileName is the database's name in the store's directory.
const FileName = "tasks.db"

// lockWait is how long Open waits for another process's lock on the
// file: long enough for a process that is exiting to let go, short
// enough that a second Caddy on the directory is told at once.
const lockWait = time.Second

// ErrLocked is what Open returns (wrapped, with the path) when another
// process holds the database.
var ErrLocked = errors.New("the file is locked by another process")

// A database file is opened once per process, whatever the number of
// Stores on it: bbolt locks the file (flock) for its process, and a
// second open in the same process would wait for the first to close. A
// `caddy reload` that changes a store setting opens the new Store before
// the old one closes, and mounts in several scopes share one directory:
// each holds a reference to the one shared database of the path.
var registry = struct {
	sync.Mutex
	open map[string]*shared
}{open: map[string]*shared{}}

// shared is one open database file and what the Stores on it share:
// the waiters of its tasks and the orphans found when it was opened.
type shared struct {
	db   *bolt.DB
	path string
	refs int // guarded by registry
	hub  hub
	// group commits the writes of every Store on the file (group.go).
	group group.Group[*pending]

	mu sync.Mutex
	// orphans are the tasks found running at open, by scope and id:
	// their process is gone (this one had not opened the file).
	orphans map[string]map[string]*orphan
}

// acquire returns the shared database of dir's file, opening it (and
// making dir) when no Store of this process has it open.
func acquire(dir string) (*shared, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("filestore: %w", err)
	}
	path := filepath.Join(abs, FileName)
	registry.Lock()
	defer registry.Unlock()
	if sh := registry.open[path]; sh != nil {
		sh.refs++
		return sh, nil
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("filestore: %w", err)
	}
	// NoSync stays off: a commit returns once the file is synced, so
	// what a caller is told is stored survives a crash.
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockWait})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("filestore: %s: %w: a file store belongs to one Caddy process (is another Caddy running with this directory?); for several replicas use `store redis` or `store postgres`", path, ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("filestore: opening %s: %w", path, err)
	}
	sh := &shared{db: db, path: path, refs: 1, orphans: map[string]map[string]*orphan{}}
	if err := sh.findOrphans(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("filestore: reading %s: %w", path, err)
	}
	registry.open[path] = sh
	return sh, nil
}

// release drops a reference; the last closes the file.
func (sh *shared) release() error {
	registry.Lock()
	defer registry.Unlock()
	sh.refs--
	if sh.refs > 0 {
		return nil
	}
	delete(registry.open, sh.path)
	return sh.db.Close()
}

// findOrphans records the running tasks of every scope: at open, no
// run of this process has written any of them.
func (sh *shared) findOrphans() error {
	return sh.db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			scope, ok := strings.CutPrefix(string(name), scopePrefix)
			if !ok {
				return nil
			}
			lots, headers := b.Bucket(bLots), b.Bucket(bHeaders)
			if lots == nil || headers == nil {
				return nil
			}
			c := lots.Cursor()
			for k, _ := c.Seek([]byte{lotRunning}); len(k) > 0 && k[0] == lotRunning; k, _ = c.Next() {
				id := string(k[1:])
				h, err := decodeHeader(headers.Get(k[1:]))
				if err != nil {
					return err
				}
				if sh.orphans[scope] == nil {
					sh.orphans[scope] = map[string]*orphan{}
				}
				sh.orphans[scope][id] = &orphan{owner: h.owner, version: h.version}
			}
			return nil
		})
	})
}

// commit commits a batch of the file's writes (group.go).
func (sh *shared) commit(batch []*pending) { commit(sh.db, batch) }

package memory

import (
	"context"
	"encoding/base64"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// defaultPageSize applies when ListQuery.PageSize < 1 (the A2A default).
const defaultPageSize = 50

// ownerIndex keeps one owner's tasks sorted ascending by (status timestamp,
// id), so List walks it backwards. Ascending order puts recently updated
// tasks at the end, where moving them is a short copy.
type ownerIndex struct {
	mu    sync.RWMutex
	items []*entry
}

// search returns the position of the first item whose key is >= (ts, id).
func (x *ownerIndex) search(ts int64, id string) int {
	return sort.Search(len(x.items), func(i int) bool {
		e := x.items[i]
		return e.ixTS > ts || (e.ixTS == ts && e.id >= id)
	})
}

// len is how many tasks the owner holds.
func (x *ownerIndex) len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.items)
}

func (x *ownerIndex) insert(e *entry) {
	i := x.search(e.ixTS, e.id)
	x.items = append(x.items, nil)
	copy(x.items[i+1:], x.items[i:])
	x.items[i] = e
}

// remove deletes e, shifting whichever side of it is shorter: eviction
// takes the oldest task (the front) and an update re-sorts a recent one
// (near the back), so both cost O(1) instead of copying the whole index.
// Reslicing past the front leaves spare capacity there, which the next
// growing append drops.
func (x *ownerIndex) remove(e *entry) {
	i := x.search(e.ixTS, e.id)
	n := len(x.items)
	if i >= n || x.items[i] != e {
		return
	}
	if i < n/2 {
		copy(x.items[1:i+1], x.items[:i])
		x.items[0] = nil
		x.items = x.items[1:]
		return
	}
	copy(x.items[i:], x.items[i+1:])
	x.items[n-1] = nil
	x.items = x.items[:n-1]
}

// move re-sorts e under its new timestamp.
func (x *ownerIndex) move(e *entry, ts int64) {
	if e.ixTS == ts {
		return
	}
	x.remove(e)
	e.ixTS = ts
	x.insert(e)
}

// The page token is base64url("<unixnano>:<id>") of the last task returned:
// the next page starts strictly after that key, so tasks inserted meanwhile
// shift no page (unlike an offset).
func encodeCursor(ts int64, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(ts, 10) + ":" + id))
}

func decodeCursor(tok string) (int64, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return 0, "", store.ErrBadPageToken
	}
	tsPart, id, ok := strings.Cut(string(b), ":")
	if !ok || id == "" {
		return 0, "", store.ErrBadPageToken
	}
	ts, err := strconv.ParseInt(tsPart, 10, 64)
	if err != nil {
		return 0, "", store.ErrBadPageToken
	}
	return ts, id, nil
}

// List implements store.Store. Ties of the status timestamp are ordered by
// task id, descending (the order of a reversed sorted set). TotalSize is
// computed by one walk of the owner's index, so List costs O(owner's tasks)
// plus the copies of one page.
func (s *Store) List(ctx context.Context, owner string, q store.ListQuery) (*store.ListPage, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	size := q.PageSize
	if size < 1 {
		size = defaultPageSize
	}
	curTS, curID := int64(math.MaxInt64), ""
	hasCursor := q.PageToken != ""
	if hasCursor {
		var err error
		if curTS, curID, err = decodeCursor(q.PageToken); err != nil {
			return nil, err
		}
	}
	s.mu.RLock()
	idx := s.owners[owner]
	s.mu.RUnlock()
	page := &store.ListPage{Tasks: []*protocol.Task{}}
	if idx == nil {
		return page, nil
	}
	now := s.opts.Now().UnixNano()

	picked := make([]*entry, 0, min(size, 64))
	var last *entry
	more := false
	idx.mu.RLock()
	lo := 0
	if !q.After.IsZero() {
		lo = idx.search(q.After.UnixNano(), "")
	}
	hi := len(idx.items) // items[:hi] are strictly before the cursor
	if hasCursor {
		hi = idx.search(curTS, curID)
	}
	for i := len(idx.items) - 1; i >= lo; i-- {
		e := idx.items[i]
		if (q.ContextID != "" && e.ixCtx != q.ContextID) ||
			(q.Status != protocol.StateUnspecified && e.ixState != q.Status) ||
			s.expired(e, now) {
			continue
		}
		page.TotalSize++
		if i < hi {
			if len(picked) < size {
				picked = append(picked, e)
				last = e
			} else {
				more = true
			}
		}
	}
	var lastTS int64
	if last != nil {
		lastTS = last.ixTS
	}
	idx.mu.RUnlock()

	for _, e := range picked {
		e.mu.Lock()
		var t *protocol.Task
		var err error
		if !e.gone {
			t, err = e.snapshot(q.View)
		}
		e.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if t != nil {
			page.Tasks = append(page.Tasks, t)
		}
	}
	if more {
		page.NextPageToken = encodeCursor(lastTS, last.id)
	}
	return page, nil
}

package filestore

import (
	"bytes"
	"context"
	"encoding/base64"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/internal/pack"
)

// defaultPageSize applies when ListQuery.PageSize < 1 (the A2A default).
const defaultPageSize = 50

// The page token is the owner index key of the last task returned, past
// the owner: (status timestamp, id), which orders as the index does, so
// the next page starts strictly after it whatever was written meanwhile.
// A tag byte first tells a token of this store from other base64.
func encodeCursor(k []byte) string {
	return base64.RawURLEncoding.EncodeToString(append([]byte{cursorTag}, k...))
}

const cursorTag = 1

func decodeCursor(tok string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) < 10 || b[0] != cursorTag {
		return nil, store.ErrBadPageToken
	}
	return b[1:], nil
}

// List implements store.Store: one walk of the owner's index from its
// newest entry (ties by id descending), counting every match for
// TotalSize and decoding the snapshots of one page.
func (s *Store) List(ctx context.Context, owner string, q store.ListQuery) (*store.ListPage, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	size := q.PageSize
	if size < 1 {
		size = defaultPageSize
	}
	var cursor []byte
	if q.PageToken != "" {
		var err error
		if cursor, err = decodeCursor(q.PageToken); err != nil {
			return nil, err
		}
	}
	page := &store.ListPage{Tasks: []*protocol.Task{}}
	err := s.view(func(x *txn) error {
		p := lp(owner)
		end := prefixEnd(p)
		c := x.owners.Cursor()
		k, v := c.Seek(end)
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
		var lastKey []byte
		for ; k != nil && bytes.HasPrefix(k, p); k, v = c.Prev() {
			rest := k[len(p):]
			ts := unbe64(rest[:8])
			if !q.After.IsZero() && ts < q.After.UnixNano() {
				break
			}
			st, updated, ctxID, err := decodeOwnerEntry(v)
			if err != nil {
				return err
			}
			if (q.ContextID != "" && string(ctxID) != q.ContextID) ||
				(q.Status != protocol.StateUnspecified && st != q.Status) ||
				x.opts.expiredAt(lotOf(st), updated, x.now) {
				continue
			}
			page.TotalSize++
			if cursor != nil && bytes.Compare(rest, cursor) >= 0 {
				continue
			}
			if len(page.Tasks) == size {
				page.NextPageToken = encodeCursor(lastKey)
				continue
			}
			id := string(rest[8:])
			t, err := pack.DecodeTask(x.snaps.Get([]byte(id)), id, q.View)
			if err != nil {
				return err
			}
			page.Tasks = append(page.Tasks, t)
			lastKey = bytes.Clone(rest)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return page, nil
}

// prefixEnd is the first key past every key that starts with p (p
// never ends in 0xff bytes only: it is a length and a name).
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

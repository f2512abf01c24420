package pgstore

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/internal/pack"
)

// defaultPageSize applies when ListQuery.PageSize < 1 (the A2A default).
const defaultPageSize = 50

// The page token is base64url of the last returned task's status
// timestamp (16 hex digits, biased to unsigned) and id: the next page
// starts strictly below that (ts, id), so tasks inserted meanwhile shift
// no page, on any replica.
func encodeCursor(ts int64, id string) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%016x%s", uint64(ts)^(1<<63), id))
}

func decodeCursor(tok string) (int64, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) < 17 || strings.IndexByte(string(b), 0) >= 0 {
		return 0, "", store.ErrBadPageToken
	}
	u, err := strconv.ParseUint(string(b[:16]), 16, 64)
	if err != nil || fmt.Sprintf("%016x", u) != string(b[:16]) {
		return 0, "", store.ErrBadPageToken
	}
	return int64(u ^ (1 << 63)), string(b[16:]), nil
}

// listMatch selects the owner's live tasks that pass the query's
// filters; the owner index covers it (it includes state, context and
// expiry), so the count reads no row.
const listMatch = `scope = $1 AND owner = $2 AND ` + live + ` AND ts >= $3
	AND ($4 = '' OR context_id = $4) AND ($5 = 0 OR state = $5)`

// List implements store.Store: one statement counts the owner's matching
// tasks and reads the page after the cursor, both by the (scope, owner,
// ts, id) index. The anonymous owner's tasks are not listed (the service
// never asks: an anonymous caller can prove no task is its own).
func (s *Store) List(ctx context.Context, owner string, q store.ListQuery) (*store.ListPage, error) {
	curTS, curID, hasCur := int64(math.MaxInt64), "", false
	if q.PageToken != "" {
		var err error
		if curTS, curID, err = decodeCursor(q.PageToken); err != nil {
			return nil, err
		}
		hasCur = true
	}
	if owner == "" {
		return &store.ListPage{Tasks: []*protocol.Task{}}, nil
	}
	size := q.PageSize
	if size < 1 {
		size = defaultPageSize
	}
	after := int64(math.MinInt64)
	if !q.After.IsZero() {
		after = tsNanos(q.After)
	}
	c, cancel, err := s.op(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	rows, err := s.pool.Query(c, s.sql(`SELECT (SELECT count(*) FROM {s}.tasks t WHERE `+listMatch+`), p.id, p.ts, p.snap
FROM (SELECT) one LEFT JOIN LATERAL (
	SELECT id, ts, snap FROM {s}.tasks t WHERE `+listMatch+` AND (NOT $6 OR (ts, id) < ($7, $8))
	ORDER BY ts DESC, id DESC LIMIT $9) p ON true`),
		s.scope, owner, after, q.ContextID, int32(q.Status), hasCur, curTS, curID, size+1)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	defer rows.Close()
	page := &store.ListPage{Tasks: []*protocol.Task{}}
	var lastTS int64
	var lastID string
	for rows.Next() {
		var (
			total int64
			id    *string
			ts    *int64
			snap  []byte
		)
		if err := rows.Scan(&total, &id, &ts, &snap); err != nil {
			return nil, s.fail(ctx, err)
		}
		page.TotalSize = int(total)
		if id == nil {
			continue
		}
		if len(page.Tasks) == size {
			page.NextPageToken = encodeCursor(lastTS, lastID)
			break
		}
		t, err := pack.DecodeTask(snap, *id, q.View)
		if err != nil {
			return nil, err
		}
		page.Tasks = append(page.Tasks, t)
		lastTS, lastID = *ts, *id
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail(ctx, err)
	}
	return page, nil
}

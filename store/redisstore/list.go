package redisstore

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/redis/rueidis"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/internal/pack"
)

// defaultPageSize applies when ListQuery.PageSize < 1 (the A2A default).
const defaultPageSize = 50

// The page token is base64url of the index member's (timestamp, id)
// prefix of the last task returned: the next page starts strictly below
// it, so tasks inserted meanwhile shift no page, on any replica.
func encodeCursor(member string) string {
	if i := strings.IndexByte(member, 0); i >= 0 {
		member = member[:i]
	}
	return base64.RawURLEncoding.EncodeToString([]byte(member))
}

func decodeCursor(tok string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) < 17 {
		return "", store.ErrBadPageToken
	}
	for _, c := range b[:16] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", store.ErrBadPageToken
		}
	}
	if strings.IndexByte(string(b), 0) >= 0 {
		return "", store.ErrBadPageToken
	}
	return string(b), nil
}

// List implements store.Store: one script selects the page's members
// from the owner's index (without a filter on context or state a count
// and a slice, O(log n + page); with one a walk of the owner's tasks, as
// the memory store), and one pipelined read fetches their snapshots.
// The anonymous owner's tasks are not indexed (luaWrite): its list is
// empty.
func (s *Store) List(ctx context.Context, owner string, q store.ListQuery) (*store.ListPage, error) {
	if owner == "" {
		if q.PageToken != "" {
			if _, err := decodeCursor(q.PageToken); err != nil {
				return nil, err
			}
		}
		return &store.ListPage{}, nil
	}
	size := q.PageSize
	if size < 1 {
		size = defaultPageSize
	}
	hi := "+"
	if q.PageToken != "" {
		cur, err := decodeCursor(q.PageToken)
		if err != nil {
			return nil, err
		}
		hi = "(" + cur
	}
	lo := "-"
	if !q.After.IsZero() {
		lo = "[" + tsHex(q.After)
	}
	c, cancel, err := s.op(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	ok := ownerKeys(s.base, owner)
	r, err := s.list.Exec(c, s.cli(), ok[:], []string{lo, hi, q.ContextID, strconv.Itoa(int(q.Status)), strconv.Itoa(size)}).ToArray()
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	if len(r) < 2 {
		return nil, errCorrupt
	}
	total, _ := r[0].AsInt64()
	more, _ := r[1].AsInt64()
	page := &store.ListPage{Tasks: []*protocol.Task{}, TotalSize: int(total)}
	members := make([]string, 0, len(r)-2)
	for _, m := range r[2:] {
		v, _ := m.ToString()
		members = append(members, v)
	}
	if len(members) == 0 {
		return page, nil
	}
	ids := make([]string, len(members))
	cl := s.cli()
	cmds := make(rueidis.Commands, len(members))
	for i, m := range members {
		end := strings.IndexByte(m, 0)
		if len(m) < 17 || end < 16 {
			return nil, errCorrupt
		}
		ids[i] = m[16:end]
		cmds[i] = cl.B().Hget().Key(taskKeys(s.base, ids[i])[0]).Field("s").Build()
	}
	for i, res := range cl.DoMulti(c, cmds...) {
		snap, err := res.ToString()
		if isNil(err) {
			continue // expired or dropped since the index was read
		}
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		t, err := pack.DecodeTask([]byte(snap), ids[i], q.View)
		if err != nil {
			return nil, err
		}
		page.Tasks = append(page.Tasks, t)
	}
	if more == 1 {
		page.NextPageToken = encodeCursor(members[len(members)-1])
	}
	return page, nil
}

package filestore

import (
	"context"
	"encoding/binary"
	"strconv"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/store"
)

// Over its share (MaxTasksPerOwner) an owner's own reply claims lapsing
// soonest go; another owner's stay; a claim settled anew is not counted
// twice; the anonymous owner's are not counted.
func TestRepliesOwnerShare(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir(), Options{Scope: "s", MaxTasksPerOwner: 2})
	claim := func(owner, id string, pending time.Duration) *store.Reply {
		t.Helper()
		r, err := s.ClaimReply(ctx, owner, store.Send{MessageID: id, Digest: "d"}, pending)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	claim("bob", "b1", time.Second)
	for i := range 4 {
		claim("alice", "a"+strconv.Itoa(i), time.Duration(i+2)*time.Second)
	}
	// Settled anew: still one claim of alice's.
	if err := s.SettleReply(ctx, "alice", store.Send{MessageID: "a3", Digest: "d", Until: time.Now().Add(time.Hour)}, &store.Reply{Digest: "d", TaskID: "t"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		owner, id string
		kept      bool
	}{{"bob", "b1", true}, {"alice", "a0", false}, {"alice", "a1", false}, {"alice", "a2", true}, {"alice", "a3", true}} {
		var found bool
		if err := s.view(func(x *txn) error { found = x.replies.Get(sendKey(tc.owner, tc.id)) != nil; return nil }); err != nil {
			t.Fatal(err)
		}
		if found != tc.kept {
			t.Fatalf("%s's %s kept %v, want %v", tc.owner, tc.id, found, tc.kept)
		}
	}
	var n uint64
	if err := s.view(func(x *txn) error { n = binary.BigEndian.Uint64(x.replyOwners.Get(lp("alice"))); return nil }); err != nil || n != 2 {
		t.Fatalf("alice's claims counted %d (%v), want 2", n, err)
	}
	for i := range 5 {
		claim("", "n"+strconv.Itoa(i), time.Minute)
	}
	if r := claim("", "n0", time.Minute); r == nil {
		t.Fatal("the anonymous owner's claims were held to a share")
	}
}

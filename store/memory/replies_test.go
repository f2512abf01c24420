package memory

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// Reply claims are bounded as tasks are, in count by MaxTasks and in
// bytes by MaxBytes: over either, the claims lapsing soonest go first.
func TestRepliesBounded(t *testing.T) {
	ctx := context.Background()
	s := New(Options{MaxTasks: 3, MaxBytes: 64 << 10})
	defer s.Close()
	// m0 lapses first, m4 last.
	for i := range 5 {
		send := store.Send{MessageID: "m" + strconv.Itoa(i), Digest: "d"}
		if r, err := s.ClaimReply(ctx, "alice", send, time.Duration(i+1)*time.Minute); r != nil || err != nil {
			t.Fatalf("claim %d: %+v %v", i, r, err)
		}
	}
	if n := len(s.replies.claims); n != 3 {
		t.Fatalf("%d claims kept, want MaxTasks 3", n)
	}
	for i, kept := range []bool{false, false, true, true, true} {
		_, ok := s.replies.claims[sendKey{"alice", "m" + strconv.Itoa(i)}]
		if ok != kept {
			t.Fatalf("m%d kept %v, want %v", i, ok, kept)
		}
	}
	// A 40KiB answer, then another: the first goes (it lapses sooner).
	big := &protocol.Message{ID: "a", Role: protocol.RoleAgent, Parts: []protocol.Part{{Kind: protocol.PartText, Text: strings.Repeat("x", 40<<10)}}}
	for i, until := range []time.Duration{time.Hour, 2 * time.Hour} {
		send := store.Send{MessageID: "big" + strconv.Itoa(i), Digest: "d", Until: time.Now().Add(until)}
		if err := s.SettleReply(ctx, "alice", send, &store.Reply{Digest: "d", Message: big}); err != nil {
			t.Fatal(err)
		}
	}
	if s.replies.bytes > 64<<10 {
		t.Fatalf("the claims hold %d bytes, over MaxBytes", s.replies.bytes)
	}
	if _, ok := s.replies.claims[sendKey{"alice", "big0"}]; ok {
		t.Fatal("the answer lapsing sooner was kept over MaxBytes")
	}
	if r, _ := s.ClaimReply(ctx, "alice", store.Send{MessageID: "big1", Digest: "d"}, time.Minute); r == nil || r.Message == nil || len(r.Message.Parts[0].Text) != 40<<10 {
		t.Fatalf("the newest answer: %+v", r)
	}
}

// Over its share (MaxTasksPerOwner) an owner's own claims lapsing
// soonest go: another owner's stay, however soon they lapse.
func TestRepliesOwnerShare(t *testing.T) {
	ctx := context.Background()
	s := New(Options{MaxTasks: 100, MaxTasksPerOwner: 2})
	defer s.Close()
	claim := func(owner, id string, pending time.Duration) {
		t.Helper()
		if r, err := s.ClaimReply(ctx, owner, store.Send{MessageID: id, Digest: "d"}, pending); r != nil || err != nil {
			t.Fatalf("%s's %s: %+v %v", owner, id, r, err)
		}
	}
	claim("bob", "b1", time.Second)
	for i := range 4 {
		claim("alice", "a"+strconv.Itoa(i), time.Duration(i+2)*time.Second)
	}
	if _, ok := s.replies.claims[sendKey{"bob", "b1"}]; !ok {
		t.Fatal("alice's claims pushed bob's out")
	}
	for i, kept := range []bool{false, false, true, true} {
		if _, ok := s.replies.claims[sendKey{"alice", "a" + strconv.Itoa(i)}]; ok != kept {
			t.Fatalf("alice's a%d kept %v, want %v", i, ok, kept)
		}
	}
	if n := s.replies.owned["alice"]; n != 2 {
		t.Fatalf("alice holds %d claims, want 2", n)
	}
}

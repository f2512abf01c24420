package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// replies is the Replies suite's store, or a skip for a store without
// the capability.
func replies(t *testing.T, s store.Store) store.Replies {
	return capability[store.Replies](t, s, "claim replies (store.Replies)")
}

// claimReply claims owner's send, failing the test on an error.
func claimReply(t *testing.T, rs store.Replies, owner string, send store.Send, pending time.Duration) *store.Reply {
	t.Helper()
	r, err := rs.ClaimReply(ctxT(t), owner, send, pending)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A reply claimed is pending to every later claim of its id, whatever
// its digest, until settled with a message or a task, which later claims
// read; another owner's id is its own; a dropped claim is claimed anew.
func testRepliesClaim(t *testing.T, s store.Store) {
	rs := replies(t, s)
	ctx := ctxT(t)
	send := store.Send{MessageID: "m1", Digest: "d1"}
	if r := claimReply(t, rs, "alice", send, time.Minute); r != nil {
		t.Fatalf("the first claim found %+v", r)
	}
	for _, d := range []string{"d1", "other"} {
		r := claimReply(t, rs, "alice", store.Send{MessageID: "m1", Digest: d}, time.Minute)
		if r == nil || !r.Pending() || r.Digest != "d1" {
			t.Fatalf("a claim with digest %s while pending: %+v", d, r)
		}
	}
	if r := claimReply(t, rs, "bob", send, time.Minute); r != nil {
		t.Fatalf("bob's m1 found %+v", r)
	}
	msg := &protocol.Message{ID: "a1", Role: protocol.RoleAgent, Parts: []protocol.Part{{Kind: protocol.PartText, Text: "hello"}},
		Metadata: []byte(`{"k":1}`)}
	if err := rs.SettleReply(ctx, "alice", send, &store.Reply{Digest: "d1", Message: msg}); err != nil {
		t.Fatal(err)
	}
	r := claimReply(t, rs, "alice", send, time.Minute)
	if r == nil || r.Pending() || r.Digest != "d1" || r.TaskID != "" || r.Message == nil || r.Message.ID != "a1" ||
		r.Message.Role != protocol.RoleAgent || len(r.Message.Parts) != 1 || r.Message.Parts[0].Text != "hello" ||
		string(r.Message.Metadata) != `{"k":1}` {
		t.Fatalf("the settled reply: %+v", r)
	}
	if err := rs.SettleReply(ctx, "bob", send, &store.Reply{Digest: "d1", TaskID: "t1"}); err != nil {
		t.Fatal(err)
	}
	if r := claimReply(t, rs, "bob", send, time.Minute); r == nil || r.TaskID != "t1" || r.Message != nil || r.Digest != "d1" {
		t.Fatalf("bob's reply settled with a task: %+v", r)
	}
	if err := rs.DropReply(ctx, "alice", "m1"); err != nil {
		t.Fatal(err)
	}
	if r := claimReply(t, rs, "alice", send, time.Minute); r != nil {
		t.Fatalf("a claim after the drop found %+v", r)
	}
}

// A pending claim lapses after its pending time (its claimant died); a
// settled one at the send's Until.
func testRepliesLapse(t *testing.T, s store.Store) {
	rs := replies(t, s)
	ctx := ctxT(t)
	if r := claimReply(t, rs, "alice", store.Send{MessageID: "m1", Digest: "d1"}, 300*time.Millisecond); r != nil {
		t.Fatalf("the first claim found %+v", r)
	}
	send := store.Send{MessageID: "m2", Digest: "d2", Until: time.Now().Add(300 * time.Millisecond)}
	claimReply(t, rs, "alice", send, time.Minute)
	if err := rs.SettleReply(ctx, "alice", send, &store.Reply{Digest: "d2", TaskID: "t2"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	for _, id := range []string{"m1", "m2"} {
		if r := claimReply(t, rs, "alice", store.Send{MessageID: id, Digest: "d"}, time.Minute); r != nil {
			t.Fatalf("%s after its claim lapsed: %+v", id, r)
		}
	}
}

// Twenty claims of one reply at once: one makes it, every other finds it.
func testRepliesRace(t *testing.T, s store.Store) {
	rs := replies(t, s)
	ctx := ctxT(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	made := 0
	for range 20 {
		wg.Go(func() {
			r, err := rs.ClaimReply(ctx, "alice", store.Send{MessageID: "m1", Digest: "d1"}, time.Minute)
			if err != nil {
				t.Error(err)
				return
			}
			if r == nil {
				mu.Lock()
				made++
				mu.Unlock()
			} else if !r.Pending() || r.Digest != "d1" {
				t.Errorf("a claim found %+v", r)
			}
		})
	}
	wg.Wait()
	if made != 1 {
		t.Fatalf("%d claims made the claim, want 1", made)
	}
}

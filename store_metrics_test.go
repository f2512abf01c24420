package caddya2a

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/memory"
)

// The metered store counts each operation under the outcome its error
// names, leaves the store's capabilities reachable, and counts without
// allocating once a label set has been seen.
func TestMeteredStoreCountsOutcomes(t *testing.T) {
	ctx := context.Background()
	mem := memory.New(memory.Options{})
	defer mem.Close()
	reg := prometheus.NewRegistry()
	st, err := newMeteredStore(reg, "memory", mem)
	if err != nil {
		t.Fatal(err)
	}
	mr, ok := st.(*meteredReplies)
	if !ok {
		t.Fatalf("the memory store, which claims sends and replies, is metered as %T", st)
	}
	m := mr.meteredSends
	task := &protocol.Task{ID: "t1", ContextID: "c", Status: protocol.TaskStatus{State: protocol.StateWorking}}
	v, err := m.Create(ctx, "o", task)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create(ctx, "o", task); err == nil {
		t.Fatal("a second Create of t1 succeeded")
	}
	if _, err := m.Get(ctx, "o", "nope"); err == nil {
		t.Fatal("Get of an unknown task succeeded")
	}
	if _, _, err := m.Update(ctx, "t1", v+7, task); err == nil {
		t.Fatal("Update at a stale version succeeded")
	}
	if _, err := m.Events(ctx, "t1", "not-an-id", false); err == nil {
		t.Fatal("Events after a malformed id succeeded")
	}
	if _, err := m.Get(ctx, "o", "t1"); err != nil {
		t.Fatal(err)
	}
	// A send claimed, then sent again: the retry is "sent".
	send := store.Send{MessageID: "m", Digest: "d"}
	t2 := &protocol.Task{ID: "t2", ContextID: "c", Status: protocol.TaskStatus{State: protocol.StateWorking}}
	if _, err := m.CreateSend(ctx, "o", send, t2); err != nil {
		t.Fatal(err)
	}
	t3 := *t2
	t3.ID = "t3"
	if _, err := m.CreateSend(ctx, "o", send, &t3); !errors.Is(err, store.ErrSent) {
		t.Fatalf("a retried send: %v, want store.ErrSent", err)
	}
	if _, _, err := m.UpdateSend(ctx, "o", send, "t2", 0, t2); !errors.Is(err, store.ErrSent) {
		t.Fatalf("a retried send as an update: %v, want store.ErrSent", err)
	}
	if s, ok := store.As[store.Sends](st); !ok || s != store.Sends(mr) {
		t.Error("store.As does not find the metered store's Sends first")
	}
	// A reply claimed, claimed again (found), settled, dropped.
	for range 2 {
		if _, err := mr.ClaimReply(ctx, "o", send, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if err := mr.SettleReply(ctx, "o", send, &store.Reply{Digest: "d", TaskID: "t2"}); err != nil {
		t.Fatal(err)
	}
	if err := mr.DropReply(ctx, "o", "m"); err != nil {
		t.Fatal(err)
	}
	if r, ok := store.As[store.Replies](st); !ok || r != store.Replies(mr) {
		t.Error("store.As does not find the metered store's Replies first")
	}
	want := map[[2]string]float64{
		{"create", "ok"}: 2, {"create", "exists"}: 1, {"get", "not_found"}: 1, {"get", "ok"}: 1,
		{"update", "conflict"}: 1, {"events", "invalid"}: 1, {"create", "sent"}: 1, {"update", "sent"}: 1,
		{"claim_reply", "ok"}: 2, {"settle_reply", "ok"}: 1, {"drop_reply", "ok"}: 1,
	}
	for k, n := range want {
		c, err := m.total.GetMetricWithLabelValues("memory", k[0], k[1])
		if err != nil {
			t.Fatal(err)
		}
		if got := testutil.ToFloat64(c); got != n {
			t.Errorf("store_operations_total{op=%q,outcome=%q} = %v, want %v", k[0], k[1], got, n)
		}
	}
	if got := testutil.CollectAndCount(m.total); got != len(want) {
		t.Errorf("%d label sets, want %d (one per outcome seen)", got, len(want))
	}
	if _, ok := store.As[store.Notifier](m); !ok {
		t.Error("the memory store's Notifier is hidden behind the metered store")
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = m.count(opGet, store.ErrNotFound) }); allocs != 0 {
		t.Errorf("counting an operation allocates %v times, want 0", allocs)
	}
}

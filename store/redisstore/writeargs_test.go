package redisstore

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// BenchmarkWriteArgs is the encoding of one write's arguments: a
// snapshot and two events in one pooled buffer, which the arguments
// point into.
func BenchmarkWriteArgs(b *testing.B) {
	s := &Store{opts: Options{KeyPrefix: "a2a:", TTL: time.Hour, IdleTTL: time.Hour, MaxEventsPerTask: 100, Lease: time.Second}}
	t := &protocol.Task{ID: "01a23b94-38ca-7806-b590-7b4b1de582a3", ContextID: "524c9eb4-5a9a-4960-befd-cfeb80343b35",
		Status:  protocol.TaskStatus{State: protocol.StateCompleted, Timestamp: time.Unix(1, 0)},
		History: []protocol.Message{{ID: "m1", Role: protocol.RoleUser, Parts: []protocol.Part{{Kind: protocol.PartText, Text: "hello there"}}}}}
	evs := []protocol.Event{chunk("hello there"), {Status: &protocol.StatusUpdate{TaskID: t.ID, Status: t.Status, Final: true}}}
	b.ReportAllocs()
	for b.Loop() {
		_, buf := s.writeArgs("u", 3, "", nil, t, evs)
		release(buf)
	}
}

// A write that fails does not put its buffer back: its command may still
// be queued in the client, to be written from that buffer, after the
// wait for it was cut short. Eight failed writes against a frozen server,
// then none of their buffers comes out of the pool (had they gone back, a
// Get on this goroutine would hand most of them out again).
func TestFailedWriteKeepsItsBuffer(t *testing.T) {
	url, srv := startRedis(t)
	s := newStore(t, url, Options{KeyPrefix: newPrefix(), Timeout: 100 * time.Millisecond})
	ctx := context.Background()
	if _, err := s.Create(ctx, "alice", task("t1", protocol.StateWorking)); err != nil {
		t.Fatal(err)
	}
	if err := srv.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Cmd.Process.Signal(syscall.SIGCONT) }()
	failed := map[*[]byte]bool{}
	for range 8 {
		args, buf := s.writeArgs("u", 1, "", nil, task("t1", protocol.StateWorking), []protocol.Event{chunk("b")})
		if _, _, err := s.runWrite(ctx, "t1", args, buf); err == nil {
			t.Fatal("a write to a frozen server succeeded")
		}
		failed[buf] = true
	}
	for range 16 {
		if bp := encodeBufs.Get().(*[]byte); failed[bp] {
			t.Fatal("the buffer of a failed write went back to the pool")
		}
	}
}

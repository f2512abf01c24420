package redisstore

import (
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// BenchmarkWriteArgs is the encoding of one write's arguments: a
// snapshot and two events in one pooled buffer and one string.
func BenchmarkWriteArgs(b *testing.B) {
	s := &Store{opts: Options{KeyPrefix: "a2a:", TTL: time.Hour, IdleTTL: time.Hour, MaxEventsPerTask: 100, Lease: time.Second}}
	t := &protocol.Task{ID: "01a23b94-38ca-7806-b590-7b4b1de582a3", ContextID: "524c9eb4-5a9a-4960-befd-cfeb80343b35",
		Status:  protocol.TaskStatus{State: protocol.StateCompleted, Timestamp: time.Unix(1, 0)},
		History: []protocol.Message{{ID: "m1", Role: protocol.RoleUser, Parts: []protocol.Part{{Kind: protocol.PartText, Text: "hello there"}}}}}
	evs := []protocol.Event{chunk("hello there"), {Status: &protocol.StatusUpdate{TaskID: t.ID, Status: t.Status, Final: true}}}
	b.ReportAllocs()
	for b.Loop() {
		_ = s.writeArgs("u", 3, "", t, evs)
	}
}

package protocol

import "testing"

// BenchmarkMessageDigest is the digest every deduplicated send computes:
// a small message stays on the stack (two allocations, both for the
// digest's text).
func BenchmarkMessageDigest(b *testing.B) {
	m := &Message{ID: "m-1", Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "hello there"}}}
	b.ReportAllocs()
	for b.Loop() {
		_ = MessageDigest(m)
	}
}

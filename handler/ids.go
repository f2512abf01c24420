package handler

import (
	"crypto/rand"

	"github.com/google/uuid"
)

// newID returns a random (version 4) UUID in its canonical text form: the
// ids the server gives contexts, messages and artifacts. The 16 random
// bytes are read here, into the stack, rather than by uuid.NewRandom,
// whose read through an io.Reader moves them to the heap: one allocation
// for each of the ids a send makes (BenchmarkSendMessageBlocking in
// binding/jsonrpc, 53 allocations per send against 50). crypto/rand.Read
// does not fail: since Go 1.24 it aborts the program instead.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return formatUUID(&b, 4)
}

// newTaskID returns a version 7 UUID: its first 48 bits are the creation
// time in milliseconds, so task ids sort by creation in logs, in a store's
// keys and for a person reading a list. Listing still orders by status
// timestamp, which a later turn moves. A failure of the system's random
// source is not an error to handle: crypto/rand aborts the program rather
// than return one (Go 1.24+).
func newTaskID() string { return uuid.Must(uuid.NewV7()).String() }

// formatUUID sets b's version and RFC 9562 variant bits and returns its
// canonical text form.
func formatUUID(b *[16]byte, version byte) string {
	b[6] = b[6]&0x0f | version<<4
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	return uuid.UUID(*b).String()
}

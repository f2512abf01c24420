package handler

import (
	"crypto/rand"
	"encoding/hex"
)

// newID returns a random (version 4) UUID in its canonical text form: the
// ids the server gives tasks, contexts, messages and artifacts. It costs
// one allocation, the string; github.com/google/uuid's NewString costs two
// and a reader interface call, three times per task.
func newID() string {
	var b [16]byte
	// crypto/rand.Read does not fail: since Go 1.24 it aborts the program
	// rather than return an error, so the result needs no check.
	_, _ = rand.Read(b[:])
	return formatUUID(&b, 4)
}

// formatUUID sets b's version and RFC 9562 variant bits and returns its
// canonical text form.
func formatUUID(b *[16]byte, version byte) string {
	b[6] = b[6]&0x0f | version<<4
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

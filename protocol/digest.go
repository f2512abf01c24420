package protocol

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"

	"github.com/gowebpki/jcs"
)

// MessageDigest is a digest of m as decoded, its id left out: two sends
// of one message under one messageId have the same digest whatever
// binding, version, member order or whitespace carried them, and a
// different message under the same id has another. Exactly-once sends
// tell a retry from a reused id by it. JSON values (data parts, metadata)
// count in their canonical form (RFC 8785), so that only what they say
// counts; a value that cannot be made canonical counts as its bytes.
func MessageDigest(m *Message) string {
	// The values are gathered, length-prefixed, in one buffer (on the
	// stack while the message is small) and hashed once: a hash.Hash
	// written value by value moved every value to the heap (its Write is
	// an interface call), 24 allocations a send where this makes one,
	// the digest's string. A large message costs one copy of it.
	var scratch [1024]byte
	b := appendDigestStr(scratch[:0], "a2a message digest v1")
	b = appendDigestStr(b, m.ContextID)
	b = appendDigestStr(b, m.TaskID)
	b = binary.BigEndian.AppendUint64(b, uint64(m.Role))
	b = binary.BigEndian.AppendUint64(b, uint64(len(m.Parts)))
	for i := range m.Parts {
		p := &m.Parts[i]
		b = binary.BigEndian.AppendUint64(b, uint64(p.Kind))
		b = appendDigestStr(b, p.Text)
		b = appendDigestJSON(b, p.Data)
		b = appendDigestStr(b, p.URL)
		b = appendDigestBytes(b, p.Raw)
		b = appendDigestStr(b, p.Filename)
		b = appendDigestStr(b, p.MediaType)
		b = appendDigestJSON(b, p.Metadata)
	}
	b = appendDigestJSON(b, m.Metadata)
	b = appendDigestStrs(b, m.Extensions)
	b = appendDigestStrs(b, m.ReferenceTaskIDs)
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// The digest's values are each written after their length, so that no
// two sequences of values write the same bytes.

func appendDigestBytes(b, v []byte) []byte {
	return append(binary.BigEndian.AppendUint64(b, uint64(len(v))), v...)
}

func appendDigestStr(b []byte, s string) []byte {
	return append(binary.BigEndian.AppendUint64(b, uint64(len(s))), s...)
}

func appendDigestStrs(b []byte, ss []string) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendDigestStr(b, s)
	}
	return b
}

// appendDigestJSON writes v canonical; an absent value and JSON null are
// one.
func appendDigestJSON(b, v []byte) []byte {
	if len(v) == 0 {
		return appendDigestBytes(b, nil)
	}
	if c, err := jcs.Transform(v); err == nil {
		v = c
	}
	if string(v) == "null" {
		v = nil
	}
	return appendDigestBytes(b, v)
}

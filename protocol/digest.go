package protocol

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash"

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
	h := sha256.New()
	d := digester{h: h}
	d.str("a2a message digest v1")
	d.str(m.ContextID)
	d.str(m.TaskID)
	d.num(uint64(m.Role))
	d.num(uint64(len(m.Parts)))
	for i := range m.Parts {
		p := &m.Parts[i]
		d.num(uint64(p.Kind))
		d.str(p.Text)
		d.json(p.Data)
		d.str(p.URL)
		d.bytes(p.Raw)
		d.str(p.Filename)
		d.str(p.MediaType)
		d.json(p.Metadata)
	}
	d.json(m.Metadata)
	d.strs(m.Extensions)
	d.strs(m.ReferenceTaskIDs)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// digester writes each value length-prefixed, so that no two sequences
// of values write the same bytes.
type digester struct{ h hash.Hash }

func (d digester) num(n uint64) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	d.h.Write(b[:])
}

func (d digester) bytes(b []byte) {
	d.num(uint64(len(b)))
	d.h.Write(b)
}

func (d digester) str(s string) {
	d.num(uint64(len(s)))
	d.h.Write([]byte(s))
}

func (d digester) strs(ss []string) {
	d.num(uint64(len(ss)))
	for _, s := range ss {
		d.str(s)
	}
}

// json writes v canonical; an absent value and JSON null are one.
func (d digester) json(v []byte) {
	if len(v) == 0 {
		d.bytes(nil)
		return
	}
	if c, err := jcs.Transform(v); err == nil {
		v = c
	}
	if string(v) == "null" {
		v = nil
	}
	d.bytes(v)
}

package jsonwire

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"unicode/utf8"
)

// The encoders append JSON by hand: no reflection, no intermediate maps,
// and output that is byte-for-byte deterministic. These are the pieces
// every hand-written encoder of the module (the codecs, the card, the
// agent request body) shares, so that all of them escape the one same way.

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string literal. The escaping is that
// of encoding/json with SetEscapeHTML(false): quote, backslash and control
// characters are escaped, U+2028/U+2029 too (so the output is also safe
// JavaScript), invalid UTF-8 becomes \ufffd, and <, >, & stay as they are.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = AppendStringBody(dst, s)
	return append(dst, '"')
}

// AppendStringBody appends the escaped contents of a JSON string
// literal without its quotes, so that several strings can be joined into
// one literal.
func AppendStringBody(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// AppendStringArray appends ss as a JSON array of strings.
func AppendStringArray(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, s)
	}
	return append(dst, ']')
}

// AppendRaw appends a JSON value held as raw bytes (metadata, data
// parts, extension params). Such values come from callers and agents,
// so they are checked: valid, single-line JSON in valid UTF-8 is copied as
// is; anything else is compacted or re-encoded; what cannot be parsed at
// all becomes null. The output is therefore always one line of valid JSON,
// as SSE framing requires.
func AppendRaw(dst []byte, raw []byte) []byte {
	if len(raw) == 0 {
		return append(dst, "null"...)
	}
	if _, ok := Valid(raw); ok && utf8.Valid(raw) && bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return append(dst, TrimSpace(raw)...)
	}
	return appendRawSlow(dst, raw)
}

func appendRawSlow(dst, raw []byte) []byte {
	if utf8.Valid(raw) {
		if _, ok := Valid(raw); !ok {
			return append(dst, "null"...)
		}
		buf := bytes.NewBuffer(dst)
		if json.Compact(buf, raw) == nil {
			return buf.Bytes()
		}
		return append(dst, "null"...)
	}
	// Invalid UTF-8 inside strings (Valid refuses it; json.Valid
	// checks the syntax alone): a decode/encode round trip replaces it
	// with U+FFFD, keeping numbers exact through json.Number.
	if !json.Valid(raw) {
		return append(dst, "null"...)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return append(dst, "null"...)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return append(dst, "null"...)
	}
	return append(dst, out...)
}

// IsObject reports whether raw holds a JSON object (by its first byte:
// raw is expected to be valid JSON).
func IsObject(raw []byte) bool {
	t := TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

// HasValue reports whether raw holds a value worth emitting (not absent
// and not null): encoders leave such members out.
func HasValue(raw []byte) bool {
	t := TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

// AppendStringMap appends m as a JSON object with sorted keys, so the same
// map always gives the same bytes.
func AppendStringMap(dst []byte, m map[string]string) []byte {
	// Sized up front: one allocation, where slices.Sorted(maps.Keys(m))
	// would grow its slice key by key.
	keys := slices.AppendSeq(make([]string, 0, len(m)), maps.Keys(m))
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, k)
		dst = append(dst, ':')
		dst = AppendString(dst, m[k])
	}
	return append(dst, '}')
}

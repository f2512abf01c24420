package protocol

import (
	"bytes"
	"encoding/json"
	"sort"
	"time"
	"unicode/utf8"
)

// The encoders append JSON by hand: no reflection, no intermediate maps,
// and output that is byte-for-byte deterministic. These are the shared
// pieces both wire versions use.

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string literal (see AppendJSONString).
func appendString(dst []byte, s string) []byte { return AppendJSONString(dst, s) }

// AppendJSONString appends s as a JSON string literal. The escaping is that
// of encoding/json with SetEscapeHTML(false): quote, backslash and control
// characters are escaped, U+2028/U+2029 too (so the output is also safe
// JavaScript), invalid UTF-8 becomes \ufffd, and <, >, & stay as they are.
// It is exported so that every hand-written encoder of the module (the
// codecs, the agent request body) escapes strings the one same way.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = AppendJSONStringBody(dst, s)
	return append(dst, '"')
}

// AppendJSONStringBody appends the escaped contents of a JSON string
// literal without its quotes, so that several strings can be joined into
// one literal.
func AppendJSONStringBody(dst []byte, s string) []byte {
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

// appendStringArray appends ss as a JSON array of strings.
func appendStringArray(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s)
	}
	return append(dst, ']')
}

// appendRawJSON appends a JSON value held by the neutral model (metadata,
// data parts, extension params). Such values come from callers and agents,
// so they are checked: valid, single-line JSON in valid UTF-8 is copied as
// is; anything else is compacted or re-encoded; what cannot be parsed at
// all becomes null. The output is therefore always one line of valid JSON,
// as SSE framing requires.
func appendRawJSON(dst []byte, raw []byte) []byte {
	if len(raw) == 0 {
		return append(dst, "null"...)
	}
	if _, ok := validJSON(raw); ok && utf8.Valid(raw) && bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return append(dst, trimSpace(raw)...)
	}
	return appendRawSlow(dst, raw)
}

func appendRawSlow(dst, raw []byte) []byte {
	if utf8.Valid(raw) {
		if _, ok := validJSON(raw); !ok {
			return append(dst, "null"...)
		}
		buf := bytes.NewBuffer(dst)
		if json.Compact(buf, raw) == nil {
			return buf.Bytes()
		}
		return append(dst, "null"...)
	}
	// Invalid UTF-8 inside strings (validJSON refuses it; json.Valid
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

// isJSONObject reports whether raw holds a JSON object.
func isJSONObject(raw []byte) bool {
	t := trimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

// hasJSON reports whether raw holds a value worth emitting (not absent and
// not null).
func hasJSON(raw []byte) bool {
	t := trimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

// timestampLayout is ProtoJSON's Timestamp form at millisecond precision,
// as 1.0 asks for; 0.3 accepts it too (ISO 8601).
const timestampLayout = "2006-01-02T15:04:05.000Z"

// appendTimestamp appends t in UTC as a quoted timestamp.
func appendTimestamp(dst []byte, t time.Time) []byte {
	dst = append(dst, '"')
	dst = t.UTC().AppendFormat(dst, timestampLayout)
	return append(dst, '"')
}

// parseTimestamp reads a timestamp leniently: RFC 3339 with any offset or
// fraction, or (as some 0.3 SDKs wrote) no zone at all, taken as UTC.
func parseTimestamp(s string) (time.Time, bool) {
	for _, layout := range [...]string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// appendStringMap appends m as a JSON object with sorted keys, so the same
// map always gives the same bytes.
func appendStringMap(dst []byte, m map[string]string) []byte {
	dst = append(dst, '{')
	for i, k := range sortedKeys(m) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		dst = appendString(dst, m[k])
	}
	return append(dst, '}')
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

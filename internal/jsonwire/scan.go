package jsonwire

import (
	"encoding/json"
	"unicode/utf8"
)

// The decoders walk already-validated JSON with these small scanners instead
// of unmarshalling into maps or reflection-built structs: values come out as
// sub-slices of the input (no copies until a field is kept), every field
// name can be matched exactly, and an error can name the precise field path.
//
// Every scanner tolerates malformed input (it reports failure, never
// panics or loops), but callers validate with Valid first so that a
// malformed document is a parse error, not a confusing field error.

// Kind is the type of a JSON value, told by its first byte.
type Kind uint8

// The kinds of JSON value; Invalid is what KindOf says of anything that
// cannot start one.
const (
	Invalid Kind = iota
	Null
	Bool
	Number
	String
	Array
	Object
)

// KindOf classifies the value v (no leading whitespace). It looks at one
// byte only: v is expected to come from a scanner over valid JSON.
func KindOf(v []byte) Kind {
	if len(v) == 0 {
		return Invalid
	}
	switch v[0] {
	case 'n':
		return Null
	case 't', 'f':
		return Bool
	case '"':
		return String
	case '[':
		return Array
	case '{':
		return Object
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return Number
	}
	return Invalid
}

// IsNull reports whether the value v is null; readers of protocol objects
// take null as absent.
func IsNull(v []byte) bool { return KindOf(v) == Null }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// TrimSpace drops the JSON whitespace around a value (only the four
// characters JSON calls whitespace, unlike bytes.TrimSpace).
func TrimSpace(b []byte) []byte {
	i := skipSpace(b, 0)
	j := len(b)
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

// valueEnd returns the index just past the value that starts at b[i], or -1
// if the value does not end inside b.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e := stringEnd(b, j)
				if e < 0 {
					return -1
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r', ':':
			if j == i {
				return -1
			}
			return j
		}
		j++
	}
	return j
}

// stringEnd returns the index just past the string literal at b[i].
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// ObjIter walks the members of one JSON object.
type ObjIter struct {
	b   []byte
	i   int
	bad bool
}

// NewObjIter starts at the object obj (which must begin with '{').
func NewObjIter(obj []byte) ObjIter {
	it := ObjIter{b: obj, i: 1}
	if len(obj) == 0 || obj[0] != '{' {
		it.bad = true
	}
	return it
}

// Next returns the next member; key is unquoted (a sub-slice unless it held
// escapes). ok is false at the end of the object or on malformed input
// (then Malformed reports it).
func (it *ObjIter) Next() (key, val []byte, ok bool) {
	if it.bad {
		return nil, nil, false
	}
	b := it.b
	i := skipSpace(b, it.i)
	if i < len(b) && b[i] == ',' {
		i = skipSpace(b, i+1)
	}
	if i >= len(b) || b[i] == '}' {
		if i >= len(b) {
			it.bad = true
		}
		it.i = len(b)
		return nil, nil, false
	}
	if b[i] != '"' {
		it.bad = true
		return nil, nil, false
	}
	ke := stringEnd(b, i)
	if ke < 0 {
		it.bad = true
		return nil, nil, false
	}
	key, ok = UnquoteBytes(b[i:ke])
	if !ok {
		it.bad = true
		return nil, nil, false
	}
	i = skipSpace(b, ke)
	if i >= len(b) || b[i] != ':' {
		it.bad = true
		return nil, nil, false
	}
	i = skipSpace(b, i+1)
	ve := valueEnd(b, i)
	if ve < 0 {
		it.bad = true
		return nil, nil, false
	}
	it.i = ve
	return key, b[i:ve], true
}

// Malformed reports whether the walk stopped on malformed input rather
// than at the end of the object: an object whose members cannot all be
// read is refused, not read in part.
func (it *ObjIter) Malformed() bool { return it.bad }

// ArrIter walks the elements of one JSON array.
type ArrIter struct {
	b   []byte
	i   int
	bad bool
}

// NewArrIter starts at the array arr (which must begin with '[').
func NewArrIter(arr []byte) ArrIter {
	it := ArrIter{b: arr, i: 1}
	if len(arr) == 0 || arr[0] != '[' {
		it.bad = true
	}
	return it
}

// Next returns the next element; ok is false at the end of the array or
// on malformed input (then Malformed reports it).
func (it *ArrIter) Next() (val []byte, ok bool) {
	if it.bad {
		return nil, false
	}
	b := it.b
	i := skipSpace(b, it.i)
	if i < len(b) && b[i] == ',' {
		i = skipSpace(b, i+1)
	}
	if i >= len(b) || b[i] == ']' {
		if i >= len(b) {
			it.bad = true
		}
		it.i = len(b)
		return nil, false
	}
	ve := valueEnd(b, i)
	if ve < 0 {
		it.bad = true
		return nil, false
	}
	it.i = ve
	return b[i:ve], true
}

// Malformed reports whether the walk stopped on malformed input rather
// than at the end of the array.
func (it *ArrIter) Malformed() bool { return it.bad }

// UnquoteBytes returns the content of the string literal q. Without escapes
// it is a sub-slice of q; with escapes (or invalid UTF-8) encoding/json
// does the decoding, so \u surrogates and bad bytes are handled exactly as
// everywhere else (invalid UTF-8 becomes U+FFFD).
func UnquoteBytes(q []byte) ([]byte, bool) {
	if s, ok := PlainString(q); ok {
		return s, true
	}
	out, ok := unquoteSlow(q)
	return []byte(out), ok
}

// Unquote is UnquoteBytes returning a fresh string.
func Unquote(q []byte) (string, bool) {
	if s, ok := PlainString(q); ok {
		return string(s), true
	}
	return unquoteSlow(q)
}

// PlainString returns the inside of the string literal q when it needs
// no decoding (no escape, valid UTF-8): a sub-slice of q, no copy.
func PlainString(q []byte) ([]byte, bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return nil, false
	}
	s := q[1 : len(q)-1]
	ascii := true
	for _, c := range s {
		if c == '\\' || c == '"' || c < 0x20 {
			return nil, false
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	if !ascii && !utf8.Valid(s) {
		return nil, false
	}
	return s, true
}

func unquoteSlow(q []byte) (string, bool) {
	var out string
	if len(q) < 2 || q[0] != '"' {
		return "", false
	}
	if err := json.Unmarshal(q, &out); err != nil {
		return "", false
	}
	return out, true
}

package protocol

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// The decoders walk already-validated JSON with these small scanners instead
// of unmarshalling into maps or reflection-built structs: values come out as
// sub-slices of the input (no copies until a field is kept), every field
// name is matched exactly (plus the ProtoJSON snake_case alias where a
// version has one), and an error can name the precise field path.
//
// Every scanner tolerates malformed input (it reports failure, never
// panics or loops), but callers validate with validJSON first so that a
// malformed document is a parse error, not a confusing field error.

// jsonKind is the type of a JSON value, told by its first byte.
type jsonKind uint8

const (
	kindInvalid jsonKind = iota
	kindNull
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// kindOf classifies the value v (no leading whitespace).
func kindOf(v []byte) jsonKind {
	if len(v) == 0 {
		return kindInvalid
	}
	switch v[0] {
	case 'n':
		return kindNull
	case 't', 'f':
		return kindBool
	case '"':
		return kindString
	case '[':
		return kindArray
	case '{':
		return kindObject
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return kindNumber
	}
	return kindInvalid
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// trimSpace drops the JSON whitespace around a value.
func trimSpace(b []byte) []byte {
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

// objIter walks the members of one JSON object.
type objIter struct {
	b   []byte
	i   int
	bad bool
}

// newObjIter starts at the object obj (which must begin with '{').
func newObjIter(obj []byte) objIter {
	it := objIter{b: obj, i: 1}
	if len(obj) == 0 || obj[0] != '{' {
		it.bad = true
	}
	return it
}

// next returns the next member; key is unquoted (a sub-slice unless it held
// escapes). ok is false at the end of the object or on malformed input
// (then it.bad is set).
func (it *objIter) next() (key, val []byte, ok bool) {
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
	key, ok = unquoteBytes(b[i:ke])
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

// arrIter walks the elements of one JSON array.
type arrIter struct {
	b   []byte
	i   int
	bad bool
}

func newArrIter(arr []byte) arrIter {
	it := arrIter{b: arr, i: 1}
	if len(arr) == 0 || arr[0] != '[' {
		it.bad = true
	}
	return it
}

func (it *arrIter) next() (val []byte, ok bool) {
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

// unquoteBytes returns the content of the string literal q. Without escapes
// it is a sub-slice of q; with escapes (or invalid UTF-8) encoding/json
// does the decoding, so \u surrogates and bad bytes are handled exactly as
// everywhere else (invalid UTF-8 becomes U+FFFD).
func unquoteBytes(q []byte) ([]byte, bool) {
	if s, ok := plainString(q); ok {
		return s, true
	}
	out, ok := unquoteSlow(q)
	return []byte(out), ok
}

// unquote is unquoteBytes returning a fresh string.
func unquote(q []byte) (string, bool) {
	if s, ok := plainString(q); ok {
		return string(s), true
	}
	return unquoteSlow(q)
}

// plainString returns the inside of q when it needs no decoding.
func plainString(q []byte) ([]byte, bool) {
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

// eachMember calls fn for every member of the object obj (at field, for
// errors) whose value is not null (ProtoJSON and 0.3 alike treat null as
// absent), in order, and stops at fn's first error. Every decoder walks
// its objects this one way, so every protocol object refuses a member
// given twice (null or not, under its camelCase or snake_case name) with
// -32602: read last-wins, `"taskId":"","taskId":"x"` would be one request
// to a proxy that reads the first value and another to this server. Data
// and metadata objects are the caller's own JSON and never walked here.
func eachMember(obj []byte, field string, fn func(key, val []byte) *Error) *Error {
	var small [16][]byte
	seen := small[:0]
	it := newObjIter(obj)
	for {
		key, val, ok := it.next()
		if !ok {
			return nil
		}
		if len(seen) == maxMembers {
			return invalidField(field, "has more than "+strconv.Itoa(maxMembers)+" members")
		}
		for _, k := range seen {
			if sameMember(k, key) {
				return invalidField(join(field, string(key)), "is given more than once")
			}
		}
		seen = append(seen, key)
		if isNull(val) {
			continue
		}
		if e := fn(key, val); e != nil {
			return e
		}
	}
}

// maxMembers bounds the members of one protocol object: none has more
// than a dozen, and the duplicate check compares each with the ones
// before it.
const maxMembers = 64

// sameMember reports whether two member names name one field: equal, or
// equal once snake_case is read as the camelCase ProtoJSON also accepts
// for it (message_id and messageId).
func sameMember(a, b []byte) bool {
	i, j := 0, 0
	for {
		ca, okA := memberByte(a, &i)
		cb, okB := memberByte(b, &j)
		if okA != okB || ca != cb {
			return false
		}
		if !okA {
			return true
		}
	}
}

// memberByte returns the next byte of name at *i, past any underscores (a
// letter after them reads as upper case); ok is false at the end.
func memberByte(name []byte, i *int) (c byte, ok bool) {
	up := false
	for *i < len(name) && name[*i] == '_' {
		*i++
		up = true
	}
	if *i >= len(name) {
		return 0, false
	}
	c = name[*i]
	*i++
	if up {
		c = upper(c)
	}
	return c, true
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

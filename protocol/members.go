package protocol

import (
	"strconv"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
)

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
	it := jsonwire.NewObjIter(obj)
	for {
		key, val, ok := it.Next()
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
		if jsonwire.IsNull(val) {
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

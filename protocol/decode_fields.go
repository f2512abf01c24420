package protocol

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
)

// Typed readers for one member value found by jsonwire.ObjIter. Each names
// the field path in its -32602 error, so a client learns exactly what to
// fix.
// A null value never reaches them: ProtoJSON reads null as "not set", and
// the decoders skip null members for both versions.

// invalidField is the -32602 error for one bad field.
func invalidField(field, desc string) *Error {
	return ErrInvalidParams("Invalid parameters: "+field+": "+desc, FieldViolation{Field: field, Description: desc})
}

// join builds a field path; prefix may be empty.
func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// indexPath is prefix[i].
func indexPath(prefix string, i int) string {
	return prefix + "[" + strconv.Itoa(i) + "]"
}

// The readers take the field path as parent and name, joined only when
// there is an error to report: the happy path builds no strings.

// readString reads a JSON string.
func readString(v []byte, parent, name string) (string, *Error) {
	if jsonwire.KindOf(v) == jsonwire.String {
		if s, ok := jsonwire.Unquote(v); ok {
			return s, nil
		}
	}
	return "", invalidField(join(parent, name), "must be a string")
}

// readBool reads a JSON boolean.
func readBool(v []byte, parent, name string) (bool, *Error) {
	switch string(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, invalidField(join(parent, name), "must be a boolean")
}

// readInt32 reads an int32: a JSON number with no fractional part or, as
// ProtoJSON allows, the same number in a string.
func readInt32(v []byte, parent, name string) (int, *Error) {
	lit := v
	if jsonwire.KindOf(v) == jsonwire.String {
		s, ok := jsonwire.PlainString(v)
		if !ok {
			return 0, invalidField(join(parent, name), "must be an integer")
		}
		lit = s
	} else if jsonwire.KindOf(v) != jsonwire.Number {
		return 0, invalidField(join(parent, name), "must be an integer")
	}
	if n, err := strconv.ParseInt(string(lit), 10, 32); err == nil {
		return int(n), nil
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil || f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
		return 0, invalidField(join(parent, name), "must be an integer")
	}
	return int(f), nil
}

// readNonNegative reads an int32 that may not be negative (historyLength).
func readNonNegative(v []byte, parent, name string) (*int, *Error) {
	n, e := readInt32(v, parent, name)
	if e != nil {
		return nil, e
	}
	if n < 0 {
		return nil, invalidField(join(parent, name), "must not be negative")
	}
	return &n, nil
}

// readObject copies a JSON object (metadata, push config): the copy keeps
// the neutral model independent of the request body buffer.
func readObject(v []byte, parent, name string) (json.RawMessage, *Error) {
	if jsonwire.KindOf(v) != jsonwire.Object {
		return nil, invalidField(join(parent, name), "must be an object")
	}
	return append(json.RawMessage(nil), v...), nil
}

// readStrings reads an array of at most max strings at parent.name, each
// by read (given its index for its own errors): notArray is the error of
// a value that is not an array, tooMany makes the error of one entry too
// many. The field path is built on failure alone.
func readStrings(v []byte, parent, name, notArray string, max int, tooMany func(field string) *Error, read func(el []byte, i int) (string, *Error)) ([]string, *Error) {
	if jsonwire.KindOf(v) != jsonwire.Array {
		return nil, invalidField(join(parent, name), notArray)
	}
	var out []string
	it := jsonwire.NewArrIter(v)
	for i := 0; ; i++ {
		el, ok := it.Next()
		if !ok {
			break
		}
		if i == max {
			return nil, tooMany(join(parent, name))
		}
		s, e := read(el, i)
		if e != nil {
			return nil, e
		}
		out = append(out, s)
	}
	if it.Malformed() {
		return nil, invalidField(join(parent, name), notArray)
	}
	return out, nil
}

// checkParams validates the raw params handed to a codec: absent and null
// read as {} (so required-field errors name the field), anything else must
// be a well-formed object. Codecs can be called without DecodeRequestLimit
// in front of them, so the JSON is checked here as well.
func checkParams(params []byte) ([]byte, *Error) {
	p := jsonwire.TrimSpace(params)
	if len(p) == 0 || jsonwire.IsNull(p) {
		return []byte("{}"), nil
	}
	if _, ok := jsonwire.Valid(p); !ok {
		return nil, ErrInvalidParams("params must be valid JSON", FieldViolation{Field: "params", Description: "must be valid JSON"})
	}
	if jsonwire.KindOf(p) != jsonwire.Object {
		return nil, ErrInvalidParams("params must be an object", FieldViolation{Field: "params", Description: "must be an object"})
	}
	return p, nil
}

// ParamsError is a codec's decode error as the caller is sent it: the
// *Error it is, or a bare -32602 for anything else. Every binding answers
// a decode failure through it.
func ParamsError(err error) *Error {
	if pe, ok := errors.AsType[*Error](err); ok {
		return pe
	}
	return ErrInvalidParams("")
}

// asError converts a decoder's *Error into the error interface without the
// typed-nil trap.
func asError(e *Error) error {
	if e == nil {
		return nil
	}
	return e
}

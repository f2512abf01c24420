package protocol

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
)

// DefaultMaxDepth bounds how deeply a request body may nest arrays and
// objects. The envelope and params take five or six levels, which leaves
// plenty for metadata and data parts while keeping hostile bodies cheap.
const DefaultMaxDepth = 32

// maxIDBytes bounds a request id, in bytes of its JSON text as sent
// (quotes and escapes included). The id is kept for the whole request, and
// echoed in every frame of a stream, so it must be small; clients send
// UUIDs or counters. It is fixed, not a setting.
const maxIDBytes = 1 << 10

// Request is a decoded JSON-RPC 2.0 request envelope.
type Request struct {
	// ID is the id exactly as sent (a string or number literal, or null);
	// nil when the member was absent. It is a copy: safe to keep after the
	// body is reused. Echo it with AppendResultHead / AppendErrorHead.
	ID json.RawMessage
	// Method is the method name.
	Method string
	// Params is the params object as sent, nil when absent or null. It
	// aliases the request body: decode it before the body is reused.
	Params json.RawMessage
	// NoID marks a request refused as a notification (no id member) that
	// is otherwise well formed: Method and Params are set, so that a
	// caller can answer an unknown method (-32601) or bad params (-32602)
	// first, as JSON-RPC clients expect of the request's own faults.
	NoID bool
}

// decodeRequest decodes a JSON-RPC request body with DefaultMaxDepth (the
// tests' shorthand).
func decodeRequest(body []byte) (*Request, *Error) {
	return DecodeRequestLimit(body, DefaultMaxDepth)
}

// DecodeRequestLimit decodes a JSON-RPC request body whose nesting may not
// exceed maxDepth (<= 0 means DefaultMaxDepth).
//
// The returned Request is never nil, even with an error: its ID then holds
// the id to echo in the error response (nil, rendered as null, when the id
// could not be read or must not be trusted). The rules, per JSON-RPC 2.0
// and A2A:
//
//   - malformed JSON → -32700, id null;
//   - a value that is not an object (an array is a batch, which A2A does
//     not define) → -32600, id null;
//   - an envelope member (jsonrpc, method, params, id) given twice, however
//     its name is escaped → -32600, id null, method not read: parsers
//     disagree on which copy wins (first, last, error), so a request that
//     a proxy in front reads one way must not run here another way. Other
//     members are ignored, repeated or not;
//   - no id member (a notification) → -32600, id null: A2A defines no
//     notifications, and running a request nobody may answer is refused.
//     It is the last check: an envelope that is otherwise well formed is
//     returned with NoID, Method and Params set, for the caller to check
//     the method and its params first;
//   - an id over 1 KiB of JSON text → -32600, id null (a huge id is not echoed),
//     with the limit's name and value in the metadata;
//   - an id that is an object, array or boolean → -32600, id null;
//   - jsonrpc other than "2.0", a missing, empty or non-string method →
//     -32600 with the id echoed;
//   - nesting deeper than maxDepth → -32600 with the id echoed: the limit
//     is about the payload as a whole, not one parameter, and the id can
//     still be read because the envelope scan does not recurse;
//   - params present but neither an object nor null → -32602.
//
// An id sent as null is not a notification (the member is there): the
// request runs and is answered with id null, as JSON-RPC 2.0 allows while
// it discourages such ids. Method stays "" for the duplicate-member and
// id refusals: nothing in such a request is trusted enough to route by, so
// a caller answers them in the version its headers name.
func DecodeRequestLimit(body []byte, maxDepth int) (*Request, *Error) {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	req := &Request{}
	depth, valid := jsonwire.Valid(body)
	if !valid {
		return req, errParse()
	}
	obj := jsonwire.TrimSpace(body)
	switch jsonwire.KindOf(obj) {
	case jsonwire.Object:
	case jsonwire.Array:
		return req, errInvalidRequest("Batch requests are not supported")
	default:
		return req, errInvalidRequest("Request must be a JSON object")
	}

	var (
		version, method, params, id []byte
		// seen has one bit per envelope member met so far.
		seen uint8
	)
	it := jsonwire.NewObjIter(obj)
	for {
		key, val, ok := it.Next()
		if !ok {
			break
		}
		var bit uint8
		switch string(key) {
		case "jsonrpc":
			bit, version = 1, val
		case "method":
			bit, method = 2, val
		case "params":
			bit, params = 4, val
		case "id":
			bit, id = 8, val
		default:
			continue
		}
		if seen&bit != 0 {
			return req, errInvalidRequest(`Request has more than one "` + string(key) + `" member`)
		}
		seen |= bit
	}
	if it.Malformed() {
		return req, errParse()
	}
	if id != nil {
		if perr := req.readID(id); perr != nil {
			return req, perr
		}
	}
	if jsonwire.KindOf(version) != jsonwire.String {
		return req, errInvalidRequest(`jsonrpc must be "2.0"`)
	}
	if v, _ := jsonwire.UnquoteBytes(version); string(v) != "2.0" {
		return req, errInvalidRequest(`jsonrpc must be "2.0"`)
	}
	if jsonwire.KindOf(method) != jsonwire.String {
		return req, errInvalidRequest("method must be a non-empty string")
	}
	m, ok := jsonwire.Unquote(method)
	if !ok || m == "" {
		return req, errInvalidRequest("method must be a non-empty string")
	}
	req.Method = m
	if depth > maxDepth {
		return req, depthError(maxDepth)
	}
	switch jsonwire.KindOf(params) {
	case jsonwire.Invalid, jsonwire.Null:
	case jsonwire.Object:
		req.Params = params
	default:
		return req, ErrInvalidParams("params must be an object", FieldViolation{Field: "params", Description: "must be an object"})
	}
	if id == nil {
		req.NoID = true
		return req, errInvalidRequest("Request has no id: notifications are not supported")
	}
	return req, nil
}

// readID sets req.ID from the id member as sent, or refuses it (-32600,
// id null): over 1 KiB of JSON text, or not a string, number or null.
func (req *Request) readID(id []byte) *Error {
	if len(id) > maxIDBytes {
		e := errInvalidRequest("Request id " + overBytes(len(id), LimitMaxIDBytes, maxIDBytes))
		e.Metadata = map[string]string{"limit": LimitMaxIDBytes, "max": strconv.Itoa(maxIDBytes)}
		return e
	}
	switch jsonwire.KindOf(id) {
	case jsonwire.String, jsonwire.Number, jsonwire.Null:
		req.ID = copyID(id)
		return nil
	}
	return errInvalidRequest("Request id must be a string, a number or null")
}

// depthError is -32600 for a body nesting deeper than maxDepth.
func depthError(maxDepth int) *Error {
	e := errInvalidRequest("Request nests deeper than " + strconv.Itoa(maxDepth) + " levels (the " + LimitMaxJSONDepth + " limit)")
	e.Metadata = map[string]string{"limit": LimitMaxJSONDepth, "max": strconv.Itoa(maxDepth)}
	return e
}

// CheckBody holds a body that is the params themselves (the HTTP+JSON
// binding's) to what DecodeRequestLimit holds a JSON-RPC body to: JSON
// and UTF-8 (-32700), nesting within maxDepth (0: DefaultMaxDepth;
// -32600 naming the limit), and an object (-32602).
func CheckBody(body []byte, maxDepth int) *Error {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	depth, valid := jsonwire.Valid(body)
	if !valid {
		return errParse()
	}
	if depth > maxDepth {
		return depthError(maxDepth)
	}
	if jsonwire.KindOf(jsonwire.TrimSpace(body)) != jsonwire.Object {
		return ErrInvalidParams("The request body must be a JSON object", FieldViolation{Field: "body", Description: "must be an object"})
	}
	return nil
}

// copyID copies the raw id (valid UTF-8: the body was checked).
func copyID(id []byte) json.RawMessage {
	return append(json.RawMessage(nil), id...)
}

// AppendResultHead appends `{"jsonrpc":"2.0","id":<id>,"result":`. Append
// the result and then '}' (AppendResponseEnd) to finish the response; this
// lets a codec encode straight into the response buffer.
func AppendResultHead(dst, id []byte) []byte {
	dst = appendIDHead(dst, id)
	return append(dst, `,"result":`...)
}

// AppendErrorHead is AppendResultHead for an error response.
func AppendErrorHead(dst, id []byte) []byte {
	dst = appendIDHead(dst, id)
	return append(dst, `,"error":`...)
}

// AppendResponseEnd closes a response begun with AppendResultHead or
// AppendErrorHead.
func AppendResponseEnd(dst []byte) []byte { return append(dst, '}') }

func appendIDHead(dst, id []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	if len(id) == 0 {
		return append(dst, "null"...)
	}
	return append(dst, id...)
}

// appendResult appends a whole success response; a nil id is null.
func appendResult(dst, id, result []byte) []byte {
	dst = AppendResultHead(dst, id)
	if len(result) == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, result...)
	}
	return AppendResponseEnd(dst)
}

// appendErrorResponse appends a whole error response; errObj is the error
// object a codec's AppendError produced.
func appendErrorResponse(dst, id, errObj []byte) []byte {
	dst = AppendErrorHead(dst, id)
	dst = append(dst, errObj...)
	return AppendResponseEnd(dst)
}

// ParseVersionHeader reads an A2A-Version header value. Absent or empty
// means 0.3 (as the spec requires). The value is Major.Minor with an
// optional patch that is ignored: 0.3 → V03, and any 1.x → V10, because a
// minor release is backward compatible and a2a-python does the same. Any
// other value, including a bare "1" or a "v" prefix, is not ok; the caller
// answers -32009.
func ParseVersionHeader(s string) (Version, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return V03, true
	}
	major, rest, ok := cutNumber(s)
	if !ok || rest == "" || rest[0] != '.' {
		return 0, false
	}
	minor, rest, ok := cutNumber(rest[1:])
	if !ok {
		return 0, false
	}
	if rest != "" {
		if rest[0] != '.' {
			return 0, false
		}
		if _, rest, ok = cutNumber(rest[1:]); !ok || rest != "" {
			return 0, false
		}
	}
	switch {
	case major == 0 && minor == 3:
		return V03, true
	case major == 1:
		return V10, true
	}
	return 0, false
}

// cutNumber splits a leading run of decimal digits (at most 6) off s.
func cutNumber(s string) (n int, rest string, ok bool) {
	i := 0
	for i < len(s) && i < 7 && s[i] >= '0' && s[i] <= '9' {
		n = n*10 + int(s[i]-'0')
		i++
	}
	if i == 0 || i > 6 {
		return 0, s, false
	}
	return n, s[i:], true
}

// DialectOf tells which version a method name belongs to: 0.3 names hold a
// slash (message/send), 1.0 names are PascalCase (SendMessage).
func DialectOf(method string) Version {
	if strings.IndexByte(method, '/') >= 0 {
		return V03
	}
	return V10
}

// codecFor returns the codec of v, or nil for an unknown version.
func codecFor(v Version) Codec {
	switch v {
	case V03:
		return codecV03
	case V10:
		return codecV10
	}
	return nil
}

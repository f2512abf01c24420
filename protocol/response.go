package protocol

import (
	"encoding/json"
	"strconv"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
)

// The client's JSON-RPC envelope: the request the module sends to an A2A
// agent, and the response (or stream frame) it reads back. The response
// is held to what the module asks of a caller's request (valid UTF-8 JSON,
// no repeated envelope member, the depth limit); what is wrong is -32006
// naming the field.

// AppendRequest appends a JSON-RPC 2.0 request with a numeric id (the
// client chooses its ids, and numbers need no escaping). params is the
// JSON a codec's Append*Params wrote; empty leaves the member out.
func AppendRequest(dst []byte, id int64, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `,"method":`...)
	dst = jsonwire.AppendString(dst, method)
	if len(params) > 0 {
		dst = append(dst, `,"params":`...)
		dst = jsonwire.AppendRaw(dst, params)
	}
	return append(dst, '}')
}

// DecodeResponse is DecodeResponseLimit with DefaultMaxDepth.
func DecodeResponse(body []byte) (id int64, result json.RawMessage, rpcErr *Error, err error) {
	return DecodeResponseLimit(body, DefaultMaxDepth)
}

// DecodeResponseLimit decodes a JSON-RPC 2.0 response (a whole body, or
// one SSE frame's data) whose nesting may not exceed maxDepth (<= 0 means
// DefaultMaxDepth). On success exactly one of result and rpcErr is set:
// result is the raw result, aliasing body (decode it with a codec before
// body is reused), "null" when the agent answered null; rpcErr is the
// agent's error with Code, Message and Data as sent, and, when data is
// 1.0's array of details, Reason and Metadata from its ErrorInfo and
// Violations from its BadRequest. id is the response's id; a null id
// (the agent could not read the request) reads as 0.
//
// err is a *Error -32006 naming the field when the body is not such a
// response: not JSON, not an object, an envelope member (jsonrpc, id,
// result, error) given twice, jsonrpc other than "2.0", an id that is
// not an integer or null, both or neither of result and error, an error
// without an integer code or with a non-string message, or nesting
// deeper than maxDepth.
func DecodeResponseLimit(body []byte, maxDepth int) (id int64, result json.RawMessage, rpcErr *Error, err error) {
	id, result, rpcErr, e := decodeResponse(body, maxDepth)
	if e != nil {
		return 0, nil, nil, agentError(e)
	}
	return id, result, rpcErr, nil
}

// responseField names the body as a whole in errors.
const responseField = "response"

func decodeResponse(body []byte, maxDepth int) (int64, json.RawMessage, *Error, *Error) {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	depth, ok := jsonwire.Valid(body)
	if !ok {
		return 0, nil, nil, invalidField(responseField, "must be valid JSON")
	}
	obj := jsonwire.TrimSpace(body)
	if jsonwire.KindOf(obj) != jsonwire.Object {
		return 0, nil, nil, invalidField(responseField, "must be an object")
	}
	if depth > maxDepth {
		return 0, nil, nil, limitError(responseField, "nests "+strconv.Itoa(depth)+" levels deep, over the "+LimitMaxJSONDepth+" limit of "+strconv.Itoa(maxDepth),
			LimitMaxJSONDepth, maxDepth)
	}
	// The envelope is walked by hand, not with eachMember: a null result
	// is a result (push delete answers one), not an absent member.
	var version, rawID, result, errObj []byte
	it := jsonwire.NewObjIter(obj)
	for {
		key, val, ok := it.Next()
		if !ok {
			break
		}
		var slot *[]byte
		switch string(key) {
		case "jsonrpc":
			slot = &version
		case "id":
			slot = &rawID
		case "result":
			slot = &result
		case "error":
			slot = &errObj
		default:
			continue
		}
		if *slot != nil {
			return 0, nil, nil, invalidField(string(key), "is given more than once")
		}
		*slot = val
	}
	if v, _ := jsonwire.UnquoteBytes(version); jsonwire.KindOf(version) != jsonwire.String || string(v) != "2.0" {
		return 0, nil, nil, invalidField("jsonrpc", `must be "2.0"`)
	}
	var id int64
	switch jsonwire.KindOf(rawID) {
	case jsonwire.Null:
	case jsonwire.Number:
		n, perr := strconv.ParseInt(string(rawID), 10, 64)
		if perr != nil {
			return 0, nil, nil, invalidField("id", "must be an integer or null")
		}
		id = n
	case jsonwire.Invalid:
		return 0, nil, nil, invalidField("id", "is required")
	default:
		return 0, nil, nil, invalidField("id", "must be an integer or null")
	}
	switch {
	case result != nil && errObj != nil:
		return 0, nil, nil, invalidField(resultField, `must not be given with "error"`)
	case result != nil:
		return id, result, nil, nil
	case errObj == nil:
		return 0, nil, nil, invalidField(resultField, `is required when there is no "error"`)
	}
	rpcErr, e := decodeRPCError(errObj)
	if e != nil {
		return 0, nil, nil, e
	}
	return id, nil, rpcErr, nil
}

// decodeRPCError reads a JSON-RPC error object: code (an integer) is
// required, message must be a string, data is kept as sent, and 1.0's
// details are read into the neutral error where they have its shape.
func decodeRPCError(v []byte) (*Error, *Error) {
	const field = "error"
	if jsonwire.KindOf(v) != jsonwire.Object {
		return nil, invalidField(field, "must be an object")
	}
	out := &Error{}
	hasCode := false
	if e := eachMember(v, field, func(key, val []byte) (e *Error) {
		switch string(key) {
		case "code":
			hasCode = true
			out.Code, e = readInt32(val, field, "code")
		case "message":
			out.Message, e = readString(val, field, "message")
		case "data":
			out.Data = append(json.RawMessage(nil), val...)
		}
		return e
	}); e != nil {
		return nil, e
	}
	if !hasCode {
		return nil, invalidField(join(field, "code"), "is required")
	}
	if jsonwire.KindOf(out.Data) == jsonwire.Array {
		readDetails(out)
	}
	return out, nil
}

// readDetails fills e's Reason, Metadata and Violations from 1.0 error
// data: an array of Any objects, told apart by @type. It is best effort:
// data is the agent's to shape, so what does not fit is left in Data
// alone, never an error.
func readDetails(e *Error) {
	var details []struct {
		Type            string            `json:"@type"`
		Reason          string            `json:"reason"`
		Metadata        map[string]string `json:"metadata"`
		FieldViolations []struct {
			Field       string `json:"field"`
			Description string `json:"description"`
		} `json:"fieldViolations"`
	}
	if json.Unmarshal(e.Data, &details) != nil {
		return
	}
	for _, d := range details {
		switch d.Type {
		case typeErrorInfo:
			e.Reason, e.Metadata = d.Reason, d.Metadata
		case typeBadRequest:
			for _, fv := range d.FieldViolations {
				e.Violations = append(e.Violations, FieldViolation{Field: fv.Field, Description: fv.Description})
			}
		}
	}
}

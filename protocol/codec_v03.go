package protocol

import (
	"strconv"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
)

// The A2A 0.3 JSON-RPC dialect: "kind" discriminators, kebab-case states,
// lowercase roles, parts {kind, text|file|data}, and errors without data
// (see appendErrorV03).
var v03 = dialect{
	version:       V03,
	tagged:        true,
	final:         true,
	messageParts:  "parts",
	unsetBlocking: true,
	methods: map[string]Method{
		"message/send":                        MethodSend,
		"message/stream":                      MethodStream,
		"tasks/get":                           MethodGetTask,
		"tasks/cancel":                        MethodCancelTask,
		"tasks/resubscribe":                   MethodSubscribe,
		"tasks/pushNotificationConfig/set":    MethodPushSet,
		"tasks/pushNotificationConfig/get":    MethodPushGet,
		"tasks/pushNotificationConfig/list":   MethodPushList,
		"tasks/pushNotificationConfig/delete": MethodPushDelete,
		"agent/getAuthenticatedExtendedCard":  MethodExtendedCard,
	},
	stateNames: stateNames[V03],
	roleNames: [...]string{
		RoleUnspecified: "unspecified",
		RoleUser:        "user",
		RoleAgent:       "agent",
	},
	appendPart:  appendPartV03,
	decodePart:  decodePartV03,
	appendError: appendErrorV03,
	blockingKey: "blocking",
	pushKey:     [2]string{"pushNotificationConfig", "push_notification_config"},
	lim:         DefaultLimits(),
}

// appendPartV03 writes {kind, text|file|data, metadata?}. 0.3 has no media
// type on text and data parts, so it is dropped there; a data part must be
// an object, so any other value is wrapped as {"value": …}.
func appendPartV03(dst []byte, p *Part) []byte {
	switch p.Kind {
	case PartFile:
		dst = append(dst, `{"kind":"file","file":{`...)
		if p.URL != "" {
			dst = append(dst, `"uri":`...)
			dst = jsonwire.AppendString(dst, p.URL)
		} else {
			dst = append(dst, `"bytes":`...)
			dst = appendBase64(dst, p.Raw)
		}
		dst = appendOptString(dst, `,"name":`, p.Filename)
		dst = appendOptString(dst, `,"mimeType":`, p.MediaType)
		dst = append(dst, '}')
	case PartData:
		dst = append(dst, `{"kind":"data","data":`...)
		dst = appendDataObject(dst, p.Data)
	default:
		dst = append(dst, `{"kind":"text","text":`...)
		dst = jsonwire.AppendString(dst, p.Text)
	}
	dst = appendOptRaw(dst, `,"metadata":`, p.Metadata)
	return append(dst, '}')
}

// appendDataObject writes a data part's value as 0.3 needs it, an object:
// any other value is wrapped as {"value": …}.
func appendDataObject(dst, data []byte) []byte {
	if jsonwire.IsObject(data) {
		return jsonwire.AppendRaw(dst, data)
	}
	dst = append(dst, `{"value":`...)
	dst = jsonwire.AppendRaw(dst, data)
	return append(dst, '}')
}

// decodePartV03 reads {kind, …}. kind is required: 0.3's JSON-RPC schema
// makes it the part's discriminator, so a part without one is not a
// text part that forgot it ({"type":"…","text":…} is some other format)
// and is -32602; an unknown kind is an error too. The kind-less parts of
// 0.3's HTTP+JSON are its proto dialect's (decodePartV03Proto).
func decodePartV03(d *dialect, v []byte, field string) (Part, *Error) {
	var p Part
	if jsonwire.KindOf(v) != jsonwire.Object {
		return p, invalidField(field, "must be an object")
	}
	var kind string
	var text, file, data []byte
	if e := eachMember(v, field, func(key, val []byte) (e *Error) {
		switch string(key) {
		case "kind":
			kind, e = readString(val, field, "kind")
		case "text":
			text = val
		case "file":
			file = val
		case "data":
			data = val
		case "metadata":
			p.Metadata, e = d.readMetadata(val, field, "metadata")
		}
		return e
	}); e != nil {
		return p, e
	}
	if kind == "" {
		return p, invalidField(join(field, "kind"), "is required")
	}
	var e *Error
	switch kind {
	case "text":
		p.Kind = PartText
		if text == nil {
			return p, invalidField(join(field, "text"), "is required")
		}
		p.Text, e = d.readText(text, field, "text")
	case "file":
		p.Kind = PartFile
		if file == nil {
			return p, invalidField(join(field, "file"), "is required")
		}
		e = decodeFileV03(d, file, join(field, "file"), &p)
	case "data":
		p.Kind = PartData
		if data == nil {
			return p, invalidField(join(field, "data"), "is required")
		}
		p.Data, e = readObject(data, field, "data")
	default:
		return p, invalidField(join(field, "kind"), `must be "text", "file" or "data"`)
	}
	return p, e
}

// fileKeys name a 0.3 file part's content members, in one flavour: the
// JSON-RPC objects' and the proto's (with its snake_case spelling).
type fileKeys struct{ bytes, bytesSnake, uri, uriSnake string }

var (
	fileKeysV03      = fileKeys{bytes: "bytes", uri: "uri"}
	fileKeysV03Proto = fileKeys{bytes: "fileWithBytes", bytesSnake: "file_with_bytes", uri: "fileWithUri", uriSnake: "file_with_uri"}
)

// decodeFileV03 reads {bytes|uri, name?, mimeType?} into p.
func decodeFileV03(d *dialect, v []byte, field string, p *Part) *Error {
	return decodeFile03(d, v, field, p, fileKeysV03)
}

// decodeFile03 reads a 0.3 file object, its content members named k.
func decodeFile03(d *dialect, v []byte, field string, p *Part, k fileKeys) *Error {
	if jsonwire.KindOf(v) != jsonwire.Object {
		return invalidField(field, "must be an object")
	}
	var hasBytes, hasURI bool
	if e := eachMember(v, field, func(key, val []byte) (e *Error) {
		switch name := string(key); {
		case name == k.bytes || (k.bytesSnake != "" && name == k.bytesSnake):
			hasBytes = true
			p.Raw, e = d.readFileBytes(val, field, k.bytes)
		case name == k.uri || (k.uriSnake != "" && name == k.uriSnake):
			hasURI = true
			if p.URL, e = readString(val, field, k.uri); e == nil && p.URL == "" {
				e = invalidField(join(field, k.uri), "must not be empty")
			}
		case name == "name":
			p.Filename, e = readString(val, field, "name")
		case name == "mimeType" || name == "mime_type":
			p.MediaType, e = readString(val, field, "mimeType")
		}
		return e
	}); e != nil {
		return e
	}
	switch {
	case hasBytes && hasURI:
		return invalidField(field, `must have only one of "`+k.bytes+`" or "`+k.uri+`"`)
	case !hasBytes && !hasURI:
		return invalidField(field, `must have "`+k.bytes+`" or "`+k.uri+`"`)
	}
	return nil
}

// appendErrorV03 writes a 0.3 error with no data member at all. The two
// real 0.3 client lines disagree on its type: a2a-go v0.3.x decodes data only
// as an object, a2a-go v2's 0.3 compat transport only as an array, and each
// fails the whole response on the other shape. So what 1.0 puts in data goes
// into the message on 0.3: the field violations (already in the message of
// a -32602), the error id of a -32603, and the 0.3 wording of -32007.
func appendErrorV03(dst []byte, e *Error) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	msg := e.Message
	switch {
	case e.Code == CodeExtendedCardNotConfigured:
		msg = "Authenticated Extended Card is not configured"
	case e.Metadata["errorId"] != "":
		msg += " (error id " + e.Metadata["errorId"] + ")"
	}
	dst = jsonwire.AppendString(dst, msg)
	return append(dst, '}')
}

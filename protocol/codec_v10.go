package protocol

import (
	"strconv"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
)

// The A2A 1.0 dialect: ProtoJSON of lf.a2a.v1. No "kind"; enums are
// TASK_STATE_* / ROLE_* names (their integer values are accepted too);
// parts are {text|raw|url|data, filename?, mediaType?, metadata?}; results
// are wrapped ({"task":…}); errors carry data as an array of typed details.
var v10 = dialect{
	version:       V10,
	messageParts:  "parts",
	unsetBlocking: true,
	methods: map[string]Method{
		"SendMessage":                      MethodSend,
		"SendStreamingMessage":             MethodStream,
		"GetTask":                          MethodGetTask,
		"ListTasks":                        MethodListTasks,
		"CancelTask":                       MethodCancelTask,
		"SubscribeToTask":                  MethodSubscribe,
		"CreateTaskPushNotificationConfig": MethodPushSet,
		"GetTaskPushNotificationConfig":    MethodPushGet,
		"ListTaskPushNotificationConfigs":  MethodPushList,
		"DeleteTaskPushNotificationConfig": MethodPushDelete,
		"GetExtendedAgentCard":             MethodExtendedCard,
	},
	stateNames: stateNames[V10],
	roleNames: [...]string{
		RoleUnspecified: "ROLE_UNSPECIFIED",
		RoleUser:        "ROLE_USER",
		RoleAgent:       "ROLE_AGENT",
	},
	numericEnums: true,
	appendPart:   appendPartV10,
	decodePart:   decodePartV10,
	appendError:  appendErrorV10,
	immediateKey: [2]string{"returnImmediately", "return_immediately"},
	pushKey:      [2]string{"taskPushNotificationConfig", "task_push_notification_config"},
	tenants:      true,
	lim:          DefaultLimits(),
}

// appendPartV10 writes the oneof member, then metadata, filename and
// mediaType in proto field order.
func appendPartV10(dst []byte, p *Part) []byte {
	switch p.Kind {
	case PartFile:
		if p.URL != "" {
			dst = append(dst, `{"url":`...)
			dst = jsonwire.AppendString(dst, p.URL)
		} else {
			dst = append(dst, `{"raw":`...)
			dst = appendBase64(dst, p.Raw)
		}
	case PartData:
		dst = append(dst, `{"data":`...)
		dst = jsonwire.AppendRaw(dst, p.Data)
	default:
		dst = append(dst, `{"text":`...)
		dst = jsonwire.AppendString(dst, p.Text)
	}
	dst = appendOptRaw(dst, `,"metadata":`, p.Metadata)
	dst = appendOptString(dst, `,"filename":`, p.Filename)
	dst = appendOptString(dst, `,"mediaType":`, p.MediaType)
	return append(dst, '}')
}

// decodePartV10 reads a part whose content is exactly one of text, raw,
// url and data (a proto oneof: none or two is an error).
func decodePartV10(d *dialect, v []byte, field string) (Part, *Error) {
	var p Part
	if jsonwire.KindOf(v) != jsonwire.Object {
		return p, invalidField(field, "must be an object")
	}
	members := 0
	if e := eachMember(v, field, func(key, val []byte) (e *Error) {
		switch string(key) {
		case "text":
			members++
			p.Kind = PartText
			p.Text, e = d.readText(val, field, "text")
		case "raw":
			members++
			p.Kind = PartFile
			p.Raw, e = d.readFileBytes(val, field, "raw")
		case "url":
			members++
			p.Kind = PartFile
			if p.URL, e = readString(val, field, "url"); e == nil && p.URL == "" {
				e = invalidField(join(field, "url"), "must not be empty")
			}
		case "data":
			members++
			p.Kind = PartData
			p.Data = append([]byte(nil), val...)
		case "metadata":
			p.Metadata, e = d.readMetadata(val, field, "metadata")
		case "filename":
			p.Filename, e = readString(val, field, "filename")
		case "mediaType", "media_type":
			p.MediaType, e = readString(val, field, "mediaType")
		}
		return e
	}); e != nil {
		return p, e
	}
	switch {
	case members == 0:
		return p, invalidField(field, "must have one of text, raw, url or data")
	case members > 1:
		return p, invalidField(field, "must have only one of text, raw, url or data")
	}
	return p, nil
}

// Detail type URLs of 1.0 error data.
const (
	typeErrorInfo  = "type.googleapis.com/google.rpc.ErrorInfo"
	typeBadRequest = "type.googleapis.com/google.rpc.BadRequest"
)

// jsonrpcReasons names the plain JSON-RPC codes when they need an
// ErrorInfo (they have no A2A reason of their own).
var jsonrpcReasons = map[int]string{
	CodeParseError:     "PARSE_ERROR",
	CodeInvalidRequest: "INVALID_REQUEST",
	CodeMethodNotFound: "METHOD_NOT_FOUND",
	CodeInvalidParams:  "INVALID_PARAMS",
	CodeInternal:       "INTERNAL_ERROR",
}

// appendErrorV10 appends a 1.0 JSON-RPC error object, its data the
// [ErrorInfo, BadRequest?] array.
func appendErrorV10(dst []byte, e *Error) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	dst = jsonwire.AppendString(dst, e.Message)
	dst = appendErrorDataV10(dst, e)
	return append(dst, '}')
}

// appendErrorDataV10 writes data as [ErrorInfo?, BadRequest?]. Every A2A
// error (Reason set) gets an ErrorInfo, as the TCK checks. A plain JSON-RPC
// error gets one only when it has metadata to carry (the method not found,
// the errorId of an internal error), with a reason named after its code;
// otherwise it would be an ErrorInfo that says nothing. Field violations
// become a BadRequest. With neither, data is omitted.
func appendErrorDataV10(dst []byte, e *Error) []byte {
	if !hasDetails(e) {
		return dst
	}
	return appendErrorDetails(append(dst, `,"data":`...), e)
}

// hasDetails reports whether e has an ErrorInfo or a BadRequest to carry
// (appendErrorDataV10 says which).
func hasDetails(e *Error) bool {
	return ErrorReason(e) != "" || len(e.Violations) > 0
}

// ErrorReason is the ErrorInfo reason of e: its own, or, for a plain
// JSON-RPC error with metadata to carry, one named after its code; ""
// for none.
func ErrorReason(e *Error) string {
	reason := e.Reason
	if reason == "" && len(e.Metadata) > 0 {
		reason = jsonrpcReasons[e.Code]
		if reason == "" {
			reason = "UNKNOWN"
		}
	}
	return reason
}

// appendErrorDetails appends the [ErrorInfo?, BadRequest?] array of e: the
// data of a 1.0 JSON-RPC error and the details of a google.rpc.Status.
func appendErrorDetails(dst []byte, e *Error) []byte {
	reason := ErrorReason(e)
	dst = append(dst, '[')
	if reason != "" {
		dst = append(dst, `{"@type":"`+typeErrorInfo+`","reason":`...)
		dst = jsonwire.AppendString(dst, reason)
		dst = append(dst, `,"domain":"`+ErrorDomain+`"`...)
		if len(e.Metadata) > 0 {
			dst = append(dst, `,"metadata":`...)
			dst = jsonwire.AppendStringMap(dst, e.Metadata)
		}
		dst = append(dst, '}')
		if len(e.Violations) > 0 {
			dst = append(dst, ',')
		}
	}
	if len(e.Violations) > 0 {
		dst = append(dst, `{"@type":"`+typeBadRequest+`","fieldViolations":`...)
		dst = appendViolations(dst, e.Violations)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

package protocol

import (
	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
)

// The A2A 0.3 proto-JSON dialect: the ProtoJSON of the 0.3 proto
// (package a2a.v1), which 0.3's HTTP+JSON binding carries and its real
// clients send (a2a-go v2's 0.3 compat REST transport, @a2a-js/sdk's
// legacy REST transport): no "kind", results wrapped ({"task":…} or
// {"message":…}, stream events also {"statusUpdate":…} with "final"),
// states TASK_STATE_* with the proto's TASK_STATE_CANCELLED, roles
// ROLE_*, a message's parts under "content", parts {text} |
// {file:{fileWithUri|fileWithBytes, mimeType, name}} | {data:{data:…}},
// and configuration.blocking a plain bool (unset: false).
var v03proto = dialect{
	version:       V03,
	final:         true,
	messageParts:  "content",
	unsetBlocking: false,
	stateNames: func() [StateAuthRequired + 1]string {
		n := stateNames[V10]
		n[StateCanceled] = "TASK_STATE_CANCELLED"
		return n
	}(),
	roleNames:    v10.roleNames,
	numericEnums: true,
	appendPart:   appendPartV03Proto,
	decodePart:   decodePartV03Proto,
	appendError:  appendErrorV03,
	blockingKey:  "blocking",
	pushKey:      [2]string{"pushNotification", "push_notification"},
	lim:          DefaultLimits(),
}

// NewRESTCodecV03 is the codec of 0.3's HTTP+JSON bodies (the 0.3 proto's
// ProtoJSON), enforcing l as NewCodec's codecs do.
func NewRESTCodecV03(l Limits) Codec {
	d := v03proto
	d.lim = l.WithDefaults()
	return dialectCodec{d: &d}
}

// NewGRPCCodecV03 is the codec of 0.3's gRPC messages read as ProtoJSON:
// the proto a2a-go v0.3 generated its gRPC service from, which is 0.3's
// HTTP+JSON dialect but for a message's parts, under "parts" there (the
// field numbers differ too, which only gRPC's binary form sees).
func NewGRPCCodecV03(l Limits) Codec {
	d := v03proto
	d.messageParts = "parts"
	d.lim = l.WithDefaults()
	return dialectCodec{d: &d}
}

// appendPartV03Proto writes {text} | {file:{…}} | {data:{data:…}}, with
// metadata. A data part's value must be an object in 0.3 (Struct)
// (appendDataObject).
func appendPartV03Proto(dst []byte, p *Part) []byte {
	switch p.Kind {
	case PartFile:
		dst = append(dst, `{"file":{`...)
		if p.URL != "" {
			dst = append(dst, `"fileWithUri":`...)
			dst = jsonwire.AppendString(dst, p.URL)
		} else {
			dst = append(dst, `"fileWithBytes":`...)
			dst = appendBase64(dst, p.Raw)
		}
		dst = appendOptString(dst, `,"mimeType":`, p.MediaType)
		dst = appendOptString(dst, `,"name":`, p.Filename)
		dst = append(dst, '}')
	case PartData:
		dst = append(dst, `{"data":{"data":`...)
		dst = appendDataObject(dst, p.Data)
		dst = append(dst, '}')
	default:
		dst = append(dst, `{"text":`...)
		dst = jsonwire.AppendString(dst, p.Text)
	}
	dst = appendOptRaw(dst, `,"metadata":`, p.Metadata)
	return append(dst, '}')
}

// decodePartV03Proto reads a part of exactly one of text, file or data.
func decodePartV03Proto(d *dialect, v []byte, field string) (Part, *Error) {
	var p Part
	if jsonwire.KindOf(v) != jsonwire.Object {
		return p, invalidField(field, "must be an object")
	}
	var text, file, data []byte
	members := 0
	if e := eachMember(v, field, func(key, val []byte) (e *Error) {
		switch string(key) {
		case "text":
			text, members = val, members+1
		case "file":
			file, members = val, members+1
		case "data":
			data, members = val, members+1
		case "metadata":
			p.Metadata, e = d.readMetadata(val, field, "metadata")
		}
		return e
	}); e != nil {
		return p, e
	}
	if members != 1 {
		return p, invalidField(field, "must have exactly one of text, file or data")
	}
	var e *Error
	switch {
	case text != nil:
		p.Kind = PartText
		p.Text, e = d.readText(text, field, "text")
	case file != nil:
		p.Kind = PartFile
		e = decodeFile03(d, file, join(field, "file"), &p, fileKeysV03Proto)
	default:
		p.Kind = PartData
		field = join(field, "data")
		if jsonwire.KindOf(data) != jsonwire.Object {
			return p, invalidField(field, "must be an object")
		}
		var inner []byte
		if e := eachMember(data, field, func(key, val []byte) *Error {
			if string(key) == "data" {
				inner = val
			}
			return nil
		}); e != nil {
			return p, e
		}
		if inner == nil {
			return p, invalidField(join(field, "data"), "is required")
		}
		p.Data, e = readObject(inner, field, "data")
	}
	return p, e
}

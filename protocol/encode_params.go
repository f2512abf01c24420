package protocol

import (
	"strconv"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
)

// The params encoders of both versions: what the module sends when it is
// the client of an A2A agent. They are the mirror of decode_shared.go's
// params decoders and write what those read, in the 1.0 proto field order
// (as the result encoders do), leaving empty optional members out.

// appendTenant opens the params object, with the tenant first where the
// version has one (proto field 1 of every 1.0 request).
func appendTenant(d *dialect, dst []byte, tenant string) []byte {
	dst = append(dst, '{')
	if d.tenants && tenant != "" {
		dst = append(dst, `"tenant":`...)
		dst = jsonwire.AppendString(dst, tenant)
		dst = append(dst, ',')
	}
	return dst
}

// appendSendParams appends MessageSendParams (0.3) or SendMessageRequest
// (1.0).
func appendSendParams(d *dialect, dst []byte, p *SendParams) []byte {
	dst = appendTenant(d, dst, p.Tenant)
	dst = append(dst, `"message":`...)
	dst = appendMessage(d, dst, &p.Message)
	dst = appendSendConfig(d, dst, p)
	dst = appendOptRaw(dst, `,"metadata":`, p.Metadata)
	return append(dst, '}')
}

// appendSendConfig appends `,"configuration":{…}`, or nothing when it
// would be empty. 0.3 always says blocking, whichever way: the spec gives
// no default and 0.3 servers differ on it, so only an explicit value means
// the same to all of them. 1.0's returnImmediately defaults to false
// (blocking) everywhere, so it is written only when true.
func appendSendConfig(d *dialect, dst []byte, p *SendParams) []byte {
	start := len(dst)
	dst = append(dst, `,"configuration":{`...)
	open := len(dst)
	if len(p.AcceptedOutputModes) > 0 {
		dst = append(dst, `"acceptedOutputModes":`...)
		dst = jsonwire.AppendStringArray(dst, p.AcceptedOutputModes)
	}
	if p.HistoryLength != nil {
		dst = appendConfigKey(dst, open, "historyLength")
		dst = strconv.AppendInt(dst, int64(*p.HistoryLength), 10)
	}
	switch {
	case d.blockingKey != "":
		dst = appendConfigKey(dst, open, d.blockingKey)
		dst = strconv.AppendBool(dst, p.Blocking)
	case !p.Blocking && d.immediateKey[0] != "":
		dst = appendConfigKey(dst, open, d.immediateKey[0])
		dst = append(dst, "true"...)
	}
	if len(dst) == open {
		return dst[:start]
	}
	return append(dst, '}')
}

// appendConfigKey appends `"key":`, after a comma unless it is the first
// member of the object opened at open.
func appendConfigKey(dst []byte, open int, key string) []byte {
	if len(dst) > open {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, `":`...)
}

// appendGetTaskParams appends TaskQueryParams (0.3) or GetTaskRequest
// (1.0).
func appendGetTaskParams(d *dialect, dst []byte, p *GetTaskParams) []byte {
	dst = appendTenant(d, dst, p.Tenant)
	dst = append(dst, `"id":`...)
	dst = jsonwire.AppendString(dst, p.ID)
	if p.HistoryLength != nil {
		dst = append(dst, `,"historyLength":`...)
		dst = strconv.AppendInt(dst, int64(*p.HistoryLength), 10)
	}
	return append(dst, '}')
}

// appendTaskIDParams appends TaskIdParams (0.3) or CancelTaskRequest and
// SubscribeToTaskRequest (1.0). 1.0 subscribe has no metadata: a caller
// leaves it empty there.
func appendTaskIDParams(d *dialect, dst []byte, p *TaskIDParams) []byte {
	dst = appendTenant(d, dst, p.Tenant)
	dst = append(dst, `"id":`...)
	dst = jsonwire.AppendString(dst, p.ID)
	dst = appendOptRaw(dst, `,"metadata":`, p.Metadata)
	return append(dst, '}')
}

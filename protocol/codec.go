package protocol

import "encoding/json"

// Version is an A2A wire version this server speaks.
type Version uint8

// The wire versions. The zero value is not a version.
const (
	V03 Version = iota + 1
	V10
)

// String renders the version as Major.Minor, the form of A2A-Version and
// of supportedInterfaces[].protocolVersion.
func (v Version) String() string {
	switch v {
	case V03:
		return "0.3"
	case V10:
		return "1.0"
	}
	return "unknown"
}

// Codec translates one wire version to and from the neutral model. The
// Append* methods append JSON to dst and return it, so callers can reuse
// pooled buffers; they never fail because the neutral model is always
// encodable.
type Codec interface {
	// Version is the wire version this codec speaks.
	Version() Version
	// Method maps a wire method name to the neutral operation; false if the
	// name is not a method of this version.
	Method(name string) (Method, bool)

	// DecodeSend decodes send/stream params. Errors are *Error (-32602
	// with field violations naming what is wrong).
	DecodeSend(params json.RawMessage) (*SendParams, error)
	// DecodeGetTask decodes tasks/get / GetTask params.
	DecodeGetTask(params json.RawMessage) (*GetTaskParams, error)
	// DecodeTaskID decodes cancel and subscribe params.
	DecodeTaskID(params json.RawMessage) (*TaskIDParams, error)
	// DecodeListTasks decodes ListTasks params (1.0; 0.3 has no such method).
	DecodeListTasks(params json.RawMessage) (*ListTasksParams, error)

	// AppendTask appends a bare Task (the result of get and cancel).
	AppendTask(dst []byte, t *Task) []byte
	// AppendSendResult appends the result of a non-streaming send: exactly
	// one of ev.Task or ev.Message is set.
	AppendSendResult(dst []byte, ev *Event) []byte
	// AppendStreamResult appends the result member of one SSE frame.
	AppendStreamResult(dst []byte, ev *Event) []byte
	// AppendListTasks appends a ListTasksResponse.
	AppendListTasks(dst []byte, r *ListTasksResult) []byte
	// AppendError appends the JSON-RPC error object.
	AppendError(dst []byte, e *Error) []byte
}

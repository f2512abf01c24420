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

	// DecodePushConfig decodes push config create/set params.
	DecodePushConfig(params json.RawMessage) (*PushConfig, error)
	// DecodePushConfigID decodes push config get (needID false: 0.3 may
	// name the task alone) and delete (needID true) params.
	DecodePushConfigID(params json.RawMessage, needID bool) (*PushConfigID, error)
	// DecodePushList decodes push config list params.
	DecodePushList(params json.RawMessage) (*PushListParams, error)

	// AppendTask appends a bare Task (the result of get and cancel).
	AppendTask(dst []byte, t *Task) []byte
	// AppendSendResult appends the result of a non-streaming send: exactly
	// one of ev.Task or ev.Message is set.
	AppendSendResult(dst []byte, ev *Event) []byte
	// AppendStreamResult appends the result member of one SSE frame.
	AppendStreamResult(dst []byte, ev *Event) []byte
	// AppendListTasks appends a ListTasksResponse.
	AppendListTasks(dst []byte, r *ListTasksResult) []byte
	// AppendPushConfig appends one push config (the result of set and get).
	AppendPushConfig(dst []byte, c *PushConfig) []byte
	// AppendPushList appends the result of a push config list.
	AppendPushList(dst []byte, r *PushListResult) []byte
	// AppendError appends the JSON-RPC error object.
	AppendError(dst []byte, e *Error) []byte

	// The client side: what the module sends to an A2A agent and reads
	// back from it. Everything decoded is held to the codec's limits, as a
	// caller's request is; errors are *Error -32006 (ErrInvalidAgentResponse)
	// with a field violation naming what is wrong, paths rooted at
	// "result".

	// MethodName is the wire name of m in this version; "" for an
	// operation the version does not have (ListTasks in 0.3).
	MethodName(m Method) string
	// AppendSendParams appends send and stream params. 0.3 always writes
	// configuration.blocking; 1.0 writes the tenant and returnImmediately
	// (when !p.Blocking) and leaves an empty configuration out.
	AppendSendParams(dst []byte, p *SendParams) []byte
	// AppendGetTaskParams appends get params.
	AppendGetTaskParams(dst []byte, p *GetTaskParams) []byte
	// AppendTaskIDParams appends cancel and subscribe params.
	AppendTaskIDParams(dst []byte, p *TaskIDParams) []byte
	// DecodeTask decodes a bare Task result (get, cancel).
	DecodeTask(result json.RawMessage) (*Task, error)
	// DecodeSendResult decodes a non-streaming send result: an Event with
	// exactly one of Task or Message set.
	DecodeSendResult(result json.RawMessage) (*Event, error)
	// DecodeStreamResult decodes the result of one stream frame: an Event
	// with exactly one member set.
	DecodeStreamResult(result json.RawMessage) (*Event, error)
}

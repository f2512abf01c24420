package protocol

import (
	"encoding/json"
	"time"
)

// Method is a neutral A2A operation; each codec maps its wire method names
// onto these.
type Method int

// The operations of both versions. MethodListTasks exists only in 1.0.
const (
	MethodUnknown Method = iota
	MethodSend
	MethodStream
	MethodGetTask
	MethodListTasks
	MethodCancelTask
	MethodSubscribe
	MethodPushSet
	MethodPushGet
	MethodPushList
	MethodPushDelete
	MethodExtendedCard
)

// methodNames are the operations' names: A2A 1.0's method names, the
// same for both versions (a label, not a wire name).
var methodNames = [...]string{
	MethodUnknown: "unknown", MethodSend: "SendMessage", MethodStream: "SendStreamingMessage",
	MethodGetTask: "GetTask", MethodListTasks: "ListTasks", MethodCancelTask: "CancelTask",
	MethodSubscribe: "SubscribeToTask", MethodPushSet: "CreateTaskPushNotificationConfig",
	MethodPushGet: "GetTaskPushNotificationConfig", MethodPushList: "ListTaskPushNotificationConfigs",
	MethodPushDelete: "DeleteTaskPushNotificationConfig", MethodExtendedCard: "GetExtendedAgentCard",
}

// String is the operation's A2A 1.0 method name ("unknown" for
// MethodUnknown).
func (m Method) String() string {
	if m >= 0 && int(m) < len(methodNames) {
		return methodNames[m]
	}
	return "unknown"
}

// NumMethods is one more than the largest Method.
const NumMethods = int(MethodExtendedCard) + 1

// Streaming reports whether the method answers with an SSE stream.
func (m Method) Streaming() bool { return m == MethodStream || m == MethodSubscribe }

// SendParams are the parameters of message/send, message/stream,
// SendMessage and SendStreamingMessage.
type SendParams struct {
	Tenant  string
	Message Message
	// AcceptedOutputModes lists the media types the client accepts.
	AcceptedOutputModes []string
	// HistoryLength limits the history in the returned task; nil = server default.
	HistoryLength *int
	// Blocking is resolved by the codec: 1.0 !returnImmediately, 0.3 blocking
	// (unset = true).
	Blocking bool
	// Push is the inline push notification config, if any (its TaskID
	// empty: the task is the one the send creates or continues).
	Push     *PushConfig
	Metadata json.RawMessage
}

// GetTaskParams are the parameters of tasks/get and GetTask.
type GetTaskParams struct {
	Tenant        string
	ID            string
	HistoryLength *int
}

// TaskIDParams are the parameters of cancel and subscribe.
type TaskIDParams struct {
	Tenant   string
	ID       string
	Metadata json.RawMessage
}

// ListTasksParams are the parameters of ListTasks (1.0 only).
type ListTasksParams struct {
	Tenant    string
	ContextID string
	// Status filters by state; StateUnspecified means any.
	Status TaskState
	// PageSize is 1..100; the codec applies the default of 50.
	PageSize      int
	PageToken     string
	HistoryLength *int
	// StatusTimestampAfter keeps tasks whose status timestamp is >= it.
	StatusTimestampAfter *time.Time
	IncludeArtifacts     bool
}

// ListTasksResult is the answer to ListTasks.
type ListTasksResult struct {
	Tasks         []Task
	NextPageToken string
	PageSize      int
	TotalSize     int
}

package protocol

import (
	"encoding/json"
	"fmt"
)

// Error is a protocol error in neutral form. Each codec renders it as a
// JSON-RPC error object: 1.0 with data [ErrorInfo, BadRequest?], 0.3 with an
// object data or none (0.3 clients cannot parse an array).
type Error struct {
	// Code is the JSON-RPC error code.
	Code int
	// Message is safe to show to the caller; it never holds upstream or Go
	// error text.
	Message string
	// Reason is the google.rpc.ErrorInfo reason (e.g. TASK_NOT_FOUND); empty
	// for the plain JSON-RPC codes that have none.
	Reason string
	// Metadata goes into ErrorInfo.metadata (e.g. taskId, errorId).
	Metadata map[string]string
	// Violations become a google.rpc.BadRequest detail (1.0) or
	// data.fieldViolations (0.3).
	Violations []FieldViolation
	// Data is the data member of an error response read from an agent
	// (DecodeResponse), kept as sent; nil when there was none. The
	// encoders never write it: what reaches a caller is built from Code,
	// Reason, Metadata and Violations.
	Data json.RawMessage
}

// FieldViolation names one invalid field of a request.
type FieldViolation struct {
	Field       string
	Description string
}

// Error makes an *Error an error for logs and wrapping; a caller is sent
// the codec's rendering, never this text.
func (e *Error) Error() string { return fmt.Sprintf("a2a error %d: %s", e.Code, e.Message) }

// The JSON-RPC and A2A error codes shared by both versions. The table is
// exported whole, codes no path returns yet included: whoever handles an
// *Error (a binding, a client of the service) compares Code against it.
const (
	CodeParseError                = -32700
	CodeInvalidRequest            = -32600
	CodeMethodNotFound            = -32601
	CodeInvalidParams             = -32602
	CodeInternal                  = -32603
	CodeTaskNotFound              = -32001
	CodeTaskNotCancelable         = -32002
	CodePushNotSupported          = -32003
	CodeUnsupportedOperation      = -32004
	CodeContentTypeNotSupported   = -32005
	CodeInvalidAgentResponse      = -32006
	CodeExtendedCardNotConfigured = -32007
	CodeExtensionSupportRequired  = -32008
	CodeVersionNotSupported       = -32009
	// CodeResourceExhausted is this server's own code for a request that
	// cannot be served now for lack of room: the task store is full, or the
	// caller holds as many tasks or running tasks as its quota allows. It
	// is retryable. JSON-RPC leaves -32000 to -32099 to the server and A2A
	// allocates its codes upward from -32001, so this one sits far from
	// them, where a later A2A code will not land.
	CodeResourceExhausted = -32080

	// CodeUnauthenticated is not a JSON-RPC code and is never written as
	// one: an operation that is for authenticated callers only (the
	// extended card) refuses an anonymous one with it, and each binding
	// answers in its own terms: HTTP 401 with a WWW-Authenticate challenge
	// (JSON-RPC and HTTP+JSON), gRPC UNAUTHENTICATED. A2A defines no
	// JSON-RPC code for it, so none is made up.
	CodeUnauthenticated = 401
)

// ErrorDomain is the google.rpc.ErrorInfo domain of every A2A error.
const ErrorDomain = "a2a-protocol.org"

func newErr(code int, reason, msg string) *Error {
	return &Error{Code: code, Reason: reason, Message: msg}
}

// errParse is -32700; the reply id is null.
func errParse() *Error { return newErr(CodeParseError, "", "Invalid JSON payload") }

// errInvalidRequest is -32600 with a specific message.
func errInvalidRequest(msg string) *Error {
	if msg == "" {
		msg = "Request payload validation error"
	}
	return newErr(CodeInvalidRequest, "", msg)
}

// ErrMethodNotFound is -32601.
func ErrMethodNotFound(method string) *Error {
	e := newErr(CodeMethodNotFound, "", "Method not found")
	if method != "" {
		e.Metadata = map[string]string{"method": method}
	}
	return e
}

// ErrInvalidParams is -32602 with the given field violations.
func ErrInvalidParams(msg string, v ...FieldViolation) *Error {
	if msg == "" {
		msg = "Invalid parameters"
	}
	e := newErr(CodeInvalidParams, "", msg)
	e.Violations = v
	return e
}

// ErrInternal is -32603; errorID is also logged so operators can correlate.
func ErrInternal(errorID string) *Error {
	e := newErr(CodeInternal, "", "Internal error")
	if errorID != "" {
		e.Metadata = map[string]string{"errorId": errorID}
	}
	return e
}

// ErrTaskNotFound is -32001; also what another caller's task looks like.
func ErrTaskNotFound(taskID string) *Error {
	e := newErr(CodeTaskNotFound, "TASK_NOT_FOUND", "Task not found")
	if taskID != "" {
		e.Metadata = map[string]string{"taskId": taskID}
	}
	return e
}

// ErrTaskNotCancelable is -32002.
func ErrTaskNotCancelable(taskID string) *Error {
	e := newErr(CodeTaskNotCancelable, "TASK_NOT_CANCELABLE", "Task cannot be canceled")
	e.Metadata = map[string]string{"taskId": taskID}
	return e
}

// ErrPushNotSupported is -32003.
func ErrPushNotSupported() *Error {
	return newErr(CodePushNotSupported, "PUSH_NOTIFICATION_NOT_SUPPORTED", "Push Notification is not supported")
}

// ErrUnsupportedOperation is -32004 with a specific message.
func ErrUnsupportedOperation(msg string) *Error {
	if msg == "" {
		msg = "This operation is not supported"
	}
	return newErr(CodeUnsupportedOperation, "UNSUPPORTED_OPERATION", msg)
}

// ErrContentTypeNotSupported is -32005.
func ErrContentTypeNotSupported(msg string) *Error {
	if msg == "" {
		msg = "Incompatible content types"
	}
	return newErr(CodeContentTypeNotSupported, "CONTENT_TYPE_NOT_SUPPORTED", msg)
}

// ErrInvalidAgentResponse is -32006. The module's own agents' bad output
// is a failed task; an A2A agent behind the gateway that answers it is
// passed on.
func ErrInvalidAgentResponse() *Error {
	return newErr(CodeInvalidAgentResponse, "INVALID_AGENT_RESPONSE", "Invalid agent response")
}

// ErrExtendedCardNotConfigured is -32007: 0.3's answer to a request for
// an extended card that is not there (0.3 defines no other), and 1.0's
// for one the card declares but the server does not have.
func ErrExtendedCardNotConfigured() *Error {
	return newErr(CodeExtendedCardNotConfigured, "EXTENDED_AGENT_CARD_NOT_CONFIGURED", "Extended Agent Card is not configured")
}

// ErrUnauthenticated refuses an anonymous caller of an operation for
// authenticated callers (CodeUnauthenticated: the bindings answer it
// outside JSON-RPC).
func ErrUnauthenticated(msg string) *Error {
	return newErr(CodeUnauthenticated, "UNAUTHENTICATED", msg)
}

// ErrExtensionSupportRequired is -32008 naming the missing extension.
func ErrExtensionSupportRequired(uri string) *Error {
	e := newErr(CodeExtensionSupportRequired, "EXTENSION_SUPPORT_REQUIRED", "Extension support is required: "+uri)
	e.Metadata = map[string]string{"extension": uri}
	return e
}

// ErrResourceExhausted is -32080 (reason RESOURCE_EXHAUSTED): the request
// was refused for lack of room, named by limit (the setting an operator
// would raise) with its value max; the caller may retry later.
func ErrResourceExhausted(msg, limit, max string) *Error {
	e := newErr(CodeResourceExhausted, "RESOURCE_EXHAUSTED", msg)
	e.Metadata = map[string]string{"limit": limit, "max": max}
	return e
}

// ErrVersionNotSupported is -32009 naming the version asked for.
func ErrVersionNotSupported(requested, msg string) *Error {
	if msg == "" {
		msg = "Protocol version not supported: " + requested
	}
	e := newErr(CodeVersionNotSupported, "VERSION_NOT_SUPPORTED", msg)
	e.Metadata = map[string]string{"requestedVersion": requested}
	return e
}

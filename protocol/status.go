package protocol

import (
	"strconv"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
)

// The errors of the HTTP+JSON binding (and, with the same codes, gRPC's)
// are google.rpc.Status objects: a canonical code, the message, and the
// details a 1.0 JSON-RPC error carries in its data.

// StatusCode is a google.rpc.Code: the canonical code of an error outside
// JSON-RPC.
type StatusCode int

// The canonical codes A2A errors map to.
const (
	StatusInvalidArgument    StatusCode = 3
	StatusNotFound           StatusCode = 5
	StatusResourceExhausted  StatusCode = 8
	StatusFailedPrecondition StatusCode = 9
	StatusUnimplemented      StatusCode = 12
	StatusInternal           StatusCode = 13
	StatusUnavailable        StatusCode = 14
	StatusUnauthenticated    StatusCode = 16
)

// statusNames are the codes' names, the "status" member of the JSON form.
var statusNames = map[StatusCode]string{
	StatusInvalidArgument:    "INVALID_ARGUMENT",
	StatusNotFound:           "NOT_FOUND",
	StatusResourceExhausted:  "RESOURCE_EXHAUSTED",
	StatusFailedPrecondition: "FAILED_PRECONDITION",
	StatusUnimplemented:      "UNIMPLEMENTED",
	StatusInternal:           "INTERNAL",
	StatusUnavailable:        "UNAVAILABLE",
	StatusUnauthenticated:    "UNAUTHENTICATED",
}

// String is the code's name (INVALID_ARGUMENT, …).
func (c StatusCode) String() string {
	if n, ok := statusNames[c]; ok {
		return n
	}
	return "UNKNOWN"
}

// Mapping is where an error goes outside JSON-RPC: its canonical code and
// HTTP status, and for a retryable one the Retry-After to send (seconds,
// "" for none).
type Mapping struct {
	Code       StatusCode
	HTTP       int
	RetryAfter string
}

// MapError is the A2A 1.0.1 mapping of e (the current spec's, which the
// SDKs follow: 400 for a task that cannot be canceled and for a content
// type not supported, 500 for an invalid agent response, where 1.0.0 said
// 409, 415 and 502). The server's own -32080 is 429 with Retry-After when
// a caller is at one of its quotas (a limit named *_per_owner), 503 when
// the store is full.
func MapError(e *Error) Mapping {
	switch e.Code {
	case CodeTaskNotFound, CodeMethodNotFound:
		return Mapping{Code: StatusNotFound, HTTP: 404}
	case CodeTaskNotCancelable, CodePushNotSupported, CodeUnsupportedOperation,
		CodeExtendedCardNotConfigured, CodeExtensionSupportRequired, CodeVersionNotSupported:
		return Mapping{Code: StatusFailedPrecondition, HTTP: 400}
	case CodeContentTypeNotSupported, CodeParseError, CodeInvalidRequest, CodeInvalidParams:
		return Mapping{Code: StatusInvalidArgument, HTTP: 400}
	case CodeUnauthenticated:
		return Mapping{Code: StatusUnauthenticated, HTTP: 401}
	case CodeResourceExhausted:
		if strings.HasSuffix(e.Metadata["limit"], "_per_owner") {
			return Mapping{Code: StatusResourceExhausted, HTTP: 429, RetryAfter: retryAfterQuota}
		}
		return Mapping{Code: StatusUnavailable, HTTP: 503, RetryAfter: retryAfterFull}
	}
	return Mapping{Code: StatusInternal, HTTP: 500}
}

// Retry-After of the -32080 answers: a quota frees up when one of the
// caller's tasks ends, a full store when tasks expire or finish.
const (
	retryAfterQuota = "1"
	retryAfterFull  = "5"
)

// AppendStatus appends e as the JSON error body of the HTTP+JSON binding:
// {"error":{"code","status","message","details"}}, code the HTTP status
// (as google.rpc.Status JSON over HTTP has it), details the ErrorInfo
// (reason, domain a2a-protocol.org, metadata) and BadRequest of the 1.0
// JSON-RPC error.
func AppendStatus(dst []byte, e *Error, m Mapping) []byte {
	dst = append(dst, `{"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(m.HTTP), 10)
	dst = append(dst, `,"status":"`...)
	dst = append(dst, m.Code.String()...)
	dst = append(dst, `","message":`...)
	dst = jsonwire.AppendString(dst, e.Message)
	if hasDetails(e) {
		dst = append(dst, `,"details":`...)
		dst = appendErrorDetails(dst, e)
	}
	return append(dst, "}}"...)
}

// AppendStatusV03 appends e as the error body of 0.3's HTTP+JSON routes,
// which no spec fixed and whose clients read differently: a2a-go's 0.3
// REST transport the google.rpc.Status under "error", @a2a-js/sdk's the
// JSON-RPC code and message at the top. This body carries both:
// {"code":<JSON-RPC code>,"message","error":<the google.rpc.Status>}.
func AppendStatusV03(dst []byte, e *Error, m Mapping) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	dst = jsonwire.AppendString(dst, e.Message)
	dst = append(dst, ',')
	// The Status object without its own outer braces.
	st := AppendStatus(nil, e, m)
	dst = append(dst, st[1:]...)
	return dst
}

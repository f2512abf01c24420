package protocol

import "testing"

func TestMapError(t *testing.T) {
	for _, tc := range []struct {
		err        *Error
		http       int
		code       StatusCode
		retryAfter string
	}{
		{ErrTaskNotFound("t"), 404, StatusNotFound, ""},
		{ErrTaskNotCancelable("t"), 400, StatusFailedPrecondition, ""},
		{ErrPushNotSupported(), 400, StatusFailedPrecondition, ""},
		{ErrUnsupportedOperation("x"), 400, StatusFailedPrecondition, ""},
		{ErrContentTypeNotSupported("x"), 400, StatusInvalidArgument, ""},
		{ErrInvalidAgentResponse(), 500, StatusInternal, ""},
		{ErrExtensionSupportRequired("u"), 400, StatusFailedPrecondition, ""},
		{ErrVersionNotSupported("0.2", ""), 400, StatusFailedPrecondition, ""},
		{ErrInvalidParams("x"), 400, StatusInvalidArgument, ""},
		{errParse(), 400, StatusInvalidArgument, ""},
		{ErrInternal("0123456789abcdef"), 500, StatusInternal, ""},
		{ErrResourceExhausted("x", "max_runs_per_owner", "32"), 429, StatusResourceExhausted, "1"},
		{ErrResourceExhausted("x", "max_tasks_per_owner", "1000"), 429, StatusResourceExhausted, "1"},
		{ErrResourceExhausted("x", "max_tasks", "10000"), 503, StatusUnavailable, "5"},
		{ErrResourceExhausted("x", "store", ""), 503, StatusUnavailable, "5"},
	} {
		m := MapError(tc.err)
		if m.HTTP != tc.http || m.Code != tc.code || m.RetryAfter != tc.retryAfter {
			t.Errorf("%d %s: %+v, want %d %s %q", tc.err.Code, tc.err.Message, m, tc.http, tc.code, tc.retryAfter)
		}
	}
}

func TestAppendStatus(t *testing.T) {
	for _, tc := range []struct {
		err  *Error
		want string
	}{
		{ErrTaskNotFound("t-1"), `{"error":{"code":404,"status":"NOT_FOUND","message":"Task not found",` +
			`"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"t-1"}}]}}`},
		{ErrInvalidParams("", FieldViolation{Field: "pageSize", Description: "must be between 1 and 100"}), `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"Invalid parameters",` +
			`"details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"pageSize","description":"must be between 1 and 100"}]}]}}`},
		{errParse(), `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"Invalid JSON payload"}}`},
	} {
		if got := string(AppendStatus(nil, tc.err, MapError(tc.err))); got != tc.want {
			t.Errorf("got\n%s\nwant\n%s", got, tc.want)
		}
	}
}

package handlertest

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// What every binding's client needs beside the codecs' client side,
// which has no ListTasks (the module never lists an agent's tasks) and
// reads no google.rpc.Status.

// ListTasksMembers are ListTasks params p as the 1.0 members a request
// carries them in, each value as its JSON; the zero members are left out.
func ListTasksMembers(p *protocol.ListTasksParams) map[string]string {
	m := map[string]string{}
	str := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	if p.Tenant != "" {
		m["tenant"] = str(p.Tenant)
	}
	if p.ContextID != "" {
		m["contextId"] = str(p.ContextID)
	}
	if p.Status != protocol.StateUnspecified {
		m["status"] = str(StateName(p.Status))
	}
	if p.PageSize != 0 {
		m["pageSize"] = strconv.Itoa(p.PageSize)
	}
	if p.PageToken != "" {
		m["pageToken"] = str(p.PageToken)
	}
	if p.HistoryLength != nil {
		m["historyLength"] = strconv.Itoa(*p.HistoryLength)
	}
	if p.StatusTimestampAfter != nil {
		m["statusTimestampAfter"] = str(p.StatusTimestampAfter.UTC().Format(time.RFC3339Nano))
	}
	if p.IncludeArtifacts {
		m["includeArtifacts"] = "true"
	}
	return m
}

// ListTasksParams are ListTasks params p as the 1.0 JSON params object
// (JSON-RPC's params, gRPC's ListTasksRequest as ProtoJSON).
func ListTasksParams(p *protocol.ListTasksParams) []byte {
	m := map[string]json.RawMessage{}
	for k, v := range ListTasksMembers(p) {
		m[k] = json.RawMessage(v)
	}
	b, _ := json.Marshal(m)
	return b
}

// ListTasksQuery are ListTasks params p as HTTP+JSON's query parameters.
func ListTasksQuery(p *protocol.ListTasksParams) url.Values {
	q := url.Values{}
	for k, v := range ListTasksMembers(p) {
		var s string
		if json.Unmarshal([]byte(v), &s) != nil {
			s = v // a number or a boolean, written as its literal
		}
		q.Set(k, s)
	}
	return q
}

// StateName is s as 1.0 spells it (TASK_STATE_INPUT_REQUIRED).
func StateName(s protocol.TaskState) string {
	return "TASK_STATE_" + strings.ToUpper(strings.ReplaceAll(s.String(), "-", "_"))
}

// DecodeListTasks reads a 1.0 ListTasksResponse, each task with codec's
// DecodeTask.
func DecodeListTasks(codec protocol.Codec, result []byte) (*protocol.ListTasksResult, error) {
	var r struct {
		Tasks         []json.RawMessage
		NextPageToken string
		PageSize      int
		TotalSize     int
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return nil, err
	}
	res := &protocol.ListTasksResult{NextPageToken: r.NextPageToken, PageSize: r.PageSize, TotalSize: r.TotalSize}
	for _, raw := range r.Tasks {
		t, err := codec.DecodeTask(raw)
		if err != nil {
			return nil, err
		}
		res.Tasks = append(res.Tasks, *t)
	}
	return res, nil
}

// a2aReasons are the ErrorInfo reasons of the A2A codes (and the
// module's own), read off the protocol's errors: every error of such a
// code carries its reason.
var a2aReasons = func() map[int]string {
	m := map[int]string{}
	for _, e := range []*protocol.Error{
		protocol.ErrTaskNotFound(""), protocol.ErrTaskNotCancelable(""), protocol.ErrPushNotSupported(),
		protocol.ErrUnsupportedOperation(""), protocol.ErrContentTypeNotSupported(""), protocol.ErrInvalidAgentResponse(),
		protocol.ErrExtendedCardNotConfigured(), protocol.ErrUnauthenticated(""), protocol.ErrExtensionSupportRequired(""),
		protocol.ErrResourceExhausted("", "", ""), protocol.ErrVersionNotSupported("", ""),
	} {
		m[e.Code] = e.Reason
	}
	return m
}()

// reasonCodes are the codes of every reason an error carries: the A2A
// codes', and those 1.0 names the plain JSON-RPC codes by when they
// carry metadata.
var reasonCodes = func() map[string]int {
	m := map[string]int{
		"PARSE_ERROR":      protocol.CodeParseError,
		"INVALID_REQUEST":  protocol.CodeInvalidRequest,
		"METHOD_NOT_FOUND": protocol.CodeMethodNotFound,
		"INVALID_PARAMS":   protocol.CodeInvalidParams,
		"INTERNAL_ERROR":   protocol.CodeInternal,
	}
	for code, reason := range a2aReasons {
		m[reason] = code
	}
	return m
}()

// ReasonOf is the ErrorInfo reason every error of A2A code code carries
// (TASK_NOT_FOUND for -32001); "" for the plain JSON-RPC codes, which
// carry one only with metadata.
func ReasonOf(code int) string { return a2aReasons[code] }

// CodeOf is the A2A error code a google.rpc.Status stands for (the
// HTTP+JSON and gRPC bindings' errors): its ErrorInfo reason's, or, for a
// status without one, the code of the service's errors of canonical code
// st (INVALID_ARGUMENT: -32602, the only reasonless one a call's params
// get; anything else: -32603). 0 for a reason the protocol does not know.
func CodeOf(reason string, st protocol.StatusCode) int {
	if reason != "" {
		return reasonCodes[reason]
	}
	if st == protocol.StatusInvalidArgument {
		return protocol.CodeInvalidParams
	}
	return protocol.CodeInternal
}

package rest

import (
	"net/url"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		want         Route
	}{
		{"POST", "/message:send", Route{Op: protocol.MethodSend, Allow: "POST", Body: true}},
		{"GET", "/message:send", Route{Allow: "POST"}},
		{"POST", "/message:stream", Route{Op: protocol.MethodStream, Allow: "POST", Body: true}},
		{"GET", "/tasks", Route{Op: protocol.MethodListTasks, Allow: "GET"}},
		{"POST", "/tasks", Route{Allow: "GET"}},
		{"GET", "/tasks/t-1", Route{Op: protocol.MethodGetTask, TaskID: "t-1", Allow: "GET"}},
		{"DELETE", "/tasks/t-1", Route{TaskID: "t-1", Allow: "GET"}},
		{"POST", "/tasks/t-1:cancel", Route{Op: protocol.MethodCancelTask, TaskID: "t-1", Allow: "POST", Body: true}},
		{"GET", "/tasks/t-1:cancel", Route{TaskID: "t-1", Allow: "POST"}},
		{"GET", "/tasks/t-1:subscribe", Route{Op: protocol.MethodSubscribe, TaskID: "t-1", Allow: "GET, POST"}},
		{"POST", "/tasks/t-1:subscribe", Route{Op: protocol.MethodSubscribe, TaskID: "t-1", Allow: "GET, POST"}},
		{"PUT", "/tasks/t-1:subscribe", Route{TaskID: "t-1", Allow: "GET, POST"}},
		// An id with a colon that names no action is the id.
		{"GET", "/tasks/a:b", Route{Op: protocol.MethodGetTask, TaskID: "a:b", Allow: "GET"}},
		{"GET", "/tasks/a%2Fb", Route{Op: protocol.MethodGetTask, TaskID: "a/b", Allow: "GET"}},
		{"POST", "/tasks/t-1/pushNotificationConfigs", Route{Op: protocol.MethodPushSet, TaskID: "t-1", Allow: "GET, POST", Body: true}},
		{"GET", "/tasks/t-1/pushNotificationConfigs", Route{Op: protocol.MethodPushList, TaskID: "t-1", Allow: "GET, POST"}},
		{"GET", "/tasks/t-1/pushNotificationConfigs/c", Route{Op: protocol.MethodPushGet, TaskID: "t-1", ConfigID: "c", Allow: "GET, DELETE"}},
		{"DELETE", "/tasks/t-1/pushNotificationConfigs/c", Route{Op: protocol.MethodPushDelete, TaskID: "t-1", ConfigID: "c", Allow: "GET, DELETE"}},
		{"POST", "/tasks/t-1/pushNotificationConfigs/c", Route{TaskID: "t-1", ConfigID: "c", Allow: "GET, DELETE"}},
		{"GET", "/extendedAgentCard", Route{Op: protocol.MethodExtendedCard, Allow: "GET"}},
		// Not routes.
		{"GET", "/", Route{}},
		{"GET", "", Route{}},
		{"GET", "tasks", Route{}},
		{"GET", "/tasks/", Route{}},
		{"POST", "/tasks/:cancel", Route{}},
		{"GET", "/tasks/t-1/other", Route{}},
		{"GET", "/tasks/t-1/pushNotificationConfigs/", Route{}},
		{"GET", "/tasks/t-1/pushNotificationConfigs/c/d", Route{}},
		{"GET", "/tasks/%zz", Route{}},
		{"POST", "/message:send/x", Route{}},
		{"POST", "/message:sendx", Route{}},
		// 0.3's routes, under /v1.
		{"GET", "/v1/tasks/t-1", Route{Op: protocol.MethodGetTask, TaskID: "t-1", Allow: "GET", V03: true}},
		{"POST", "/v1/message:send", Route{Op: protocol.MethodSend, Allow: "POST", Body: true, V03: true}},
		{"GET", "/v1/tasks/t-1:subscribe", Route{Op: protocol.MethodSubscribe, TaskID: "t-1", Allow: "GET, POST", V03: true}},
		{"GET", "/v1/card", Route{Op: protocol.MethodExtendedCard, Allow: "GET", V03: true}},
		{"POST", "/v1/card", Route{Allow: "GET", V03: true}},
		{"GET", "/v1/tasks", Route{}},
		{"GET", "/v1/extendedAgentCard", Route{}},
		{"GET", "/v1/v1/tasks/t-1", Route{}},
		{"GET", "/v1", Route{}},
		{"GET", "/extendedAgentCard/x", Route{}},
	} {
		if got := Match(tc.method, tc.path); got != tc.want {
			t.Errorf("Match(%s %q) = %+v, want %+v", tc.method, tc.path, got, tc.want)
		}
	}
}

func TestUnsafePath(t *testing.T) {
	for path, want := range map[string]bool{
		"/a2a/rest/tasks/t-1":                                false,
		"/a2a/rest/tasks/t-1:cancel":                         false,
		"/a2a/rest/tasks/a%3Acancel":                         false,
		"/a2a/rest/tasks/a%20b":                              false,
		"/a2a/rest/tasks/...":                                false,
		"/a2a/rest/tasks/a..b":                               false,
		"/a2a/rest/tasks/%252E%252E":                         false,
		"/a2a/rest/tasks/%zz":                                false,
		"/a2a/rest/tasks/%2E%2E%2F%2E%2E%2F%2E%2E%2Fzzz":     true,
		"/a2a/rest/tasks/%2e%2e%2f%2e%2e%2f%2e%2e%2fzzz":     true,
		"/a2a/rest/v1/tasks/%2E%2E":                          true,
		"/a2a/rest/tasks/..":                                 true,
		"/a2a/rest/tasks/./t-1":                              true,
		"/a2a/rest/tasks/.%2E/x":                             true,
		"/a2a/rest/tasks/%2E":                                true,
		"/a2a/rest/tasks/a%2Fb":                              true,
		"/a2a/rest/tasks/a%2fb":                              true,
		"/a2a/rest/tasks/a%5Cb":                              true,
		"/a2a/rest/tasks/a%5cb":                              true,
		"/a2a/rest/tasks/a\\b":                               true,
		"/a2a/rest/tasks/t-1/pushNotificationConfigs/%2E%2E": true,
	} {
		if got := UnsafePath(path); got != want {
			t.Errorf("UnsafePath(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestQueryParams(t *testing.T) {
	for _, tc := range []struct {
		query, want, violation string
	}{
		{"", "{}", ""},
		{"pageSize=5&status=TASK_STATE_WORKING", `{"pageSize":"5","status":"TASK_STATE_WORKING"}`, ""},
		{"includeArtifacts=true&contextId=c%22x", `{"contextId":"c\"x","includeArtifacts":true}`, ""},
		{"includeArtifacts=yes", `{"includeArtifacts":"yes"}`, ""},
		{"lastUpdatedAfter=2026-01-01T00:00:00Z", `{"statusTimestampAfter":"2026-01-01T00:00:00Z"}`, ""},
		{"A2A-Version=1.0&pageSize=2", `{"pageSize":"2"}`, ""},
		{"pagesize=5", "", "pagesize"},
		{"pageSize=5&pageSize=6", "", "pageSize"},
		{"lastUpdatedAfter=x&statusTimestampAfter=y", "", "statusTimestampAfter"},
		{"tenant=x", "", "tenant"},
		{strings.Repeat("a", 100) + "=1", "", strings.Repeat("a", 64)},
	} {
		q, _ := url.ParseQuery(tc.query)
		more, perr := queryParams(nil, q, listTasksQuery)
		if tc.violation != "" {
			if perr == nil || perr.Code != protocol.CodeInvalidParams || len(perr.Violations) != 1 || perr.Violations[0].Field != tc.violation {
				t.Errorf("%q: %+v, want -32602 naming %s", tc.query, perr, tc.violation)
			}
			continue
		}
		if perr != nil {
			t.Errorf("%q: %v", tc.query, perr)
			continue
		}
		if got := string(object(nil, more)); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.query, got, tc.want)
		}
	}
	many := url.Values{}
	for i := range maxQueryParams + 1 {
		many.Set(strings.Repeat("p", i+1), "1")
	}
	if _, perr := queryParams(nil, many, listTasksQuery); perr == nil || perr.Violations[0].Field != "query" {
		t.Errorf("%d parameters: %v, want -32602 on the query", len(many), perr)
	}
}

func TestBodyMembers(t *testing.T) {
	for _, tc := range []struct {
		body, want string
		code       int
	}{
		{"", "", 0},
		{" null ", "", 0},
		{"{}", "", 0},
		{" { \n} ", "", 0},
		{`{"metadata":{"a":1}}`, `,"metadata":{"a":1}`, 0},
		{`[]`, "", protocol.CodeInvalidParams},
		{`"x"`, "", protocol.CodeInvalidParams},
		{`{`, "", protocol.CodeParseError},
		{"{\"a\":\"\xff\"}", "", protocol.CodeParseError},
		{strings.Repeat("[", 40) + strings.Repeat("]", 40), "", protocol.CodeInvalidRequest},
	} {
		got, perr := bodyMembers([]byte(tc.body), 32)
		switch {
		case tc.code != 0 && (perr == nil || perr.Code != tc.code):
			t.Errorf("%q: %v, want code %d", tc.body, perr, tc.code)
		case tc.code == 0 && (perr != nil || string(got) != tc.want):
			t.Errorf("%q: %q %v, want %q", tc.body, got, perr, tc.want)
		}
	}
}

// FuzzMatch: any method and path either match no route or one whose ids
// come back in the path, escaped or not, and never panic.
func FuzzMatch(f *testing.F) {
	for _, s := range []string{"/message:send", "/tasks/a:cancel", "/tasks/a%2F/pushNotificationConfigs/b", "/tasks/%", "//", "/tasks/a:subscribe"} {
		f.Add("GET", s)
		f.Add("POST", s)
	}
	f.Fuzz(func(t *testing.T, method, path string) {
		rt := Match(method, path)
		if !rt.Found() {
			if rt != (Route{}) {
				t.Fatalf("no route, but %+v", rt)
			}
			return
		}
		if rt.Op != 0 && !strings.Contains(rt.Allow, method) {
			t.Fatalf("%s %q: operation %v for a method not in Allow %q", method, path, rt.Op, rt.Allow)
		}
		if strings.HasPrefix(path, "/tasks/") && rt.Op != protocol.MethodListTasks && rt.TaskID == "" {
			t.Fatalf("%s %q: a task route without a task id", method, path)
		}
	})
}

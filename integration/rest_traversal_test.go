package integration

import (
	"maps"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// gatedRESTSite is the first agent's Caddyfile of the README, in front of
// {{.Agent}}: JSON-RPC and HTTP+JSON behind `basic_auth @a2a`, whose
// matcher is `path /a2a /a2a/*`.
const gatedRESTSite = `http://:9080 {
	@a2a path /a2a /a2a/*
	basic_auth @a2a {
		alice {{.Alice}}
	}
	a2a {
		upstream {{.Agent}}` + skillBlock + `
		rest_path /a2a/rest
	}
}
`

// unsafePathMessage is the message of the 400 for a path with a dot
// segment or an encoded slash or backslash.
const unsafePathMessage = "The request path has a dot segment (. or .., encoded or not) or an encoded slash or backslash (%2F, %5C): no HTTP+JSON route has one, and Caddy's matchers would have read it as another path"

// TestRESTTraversalRefused: behind the README's gate, a path under
// rest_path that Caddy's path matcher reads, decoded and cleaned, as a
// path outside /a2a/* (/a2a/rest/tasks/%2E%2E%2F%2E%2E%2F%2E%2E%2Fzzz is
// /zzz to it) reaches the module without credentials; it is answered 400
// with the binding's google.rpc.Status body (0.3's shape under /v1), and
// neither the store nor the agent is reached. Paths the gate covers that
// hold an encoded slash, backslash or dot segment get the same 400 for a
// caller who passed it.
func TestRESTTraversalRefused(t *testing.T) {
	a := textAgent(t)
	load(t, gatedRESTSite, map[string]any{"Agent": a.URL(), "Alice": aliceHash})
	before := storeOpsOf(metricLines(t))

	body10 := `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"` + unsafePathMessage + `"}}`
	body03 := `{"code":-32600,"message":"` + unsafePathMessage + `","error":{"code":400,"status":"INVALID_ARGUMENT","message":"` + unsafePathMessage + `"}}`
	alice := withAuth("alice", "alice-pw")
	for _, tc := range []struct {
		method, path, body string
		opts               []reqOpt
	}{
		// Outside the gate as Caddy reads them: anonymous.
		{"GET", "/a2a/rest/tasks/%2E%2E%2F%2E%2E%2F%2E%2E%2Fzzz", body10, nil},
		{"POST", "/a2a/rest/tasks/%2E%2E%2F%2E%2E%2F%2E%2E%2Fzzz:cancel", body10, nil},
		{"GET", "/a2a/rest/tasks/%2e%2e%2f%2e%2e%2f%2e%2e%2fzzz:subscribe", body10, nil},
		{"POST", "/a2a/rest/tasks/%2E%2E%2F%2E%2E%2F%2E%2E%2Fzzz/pushNotificationConfigs", body10, nil},
		{"GET", "/a2a/rest/tasks/../../../zzz", body10, nil},
		{"GET", "/a2a/rest/v1/tasks/%2E%2E%2F%2E%2E%2F%2E%2E%2F%2E%2E%2Fzzz", body03, nil},
		{"POST", "/a2a/rest/v1/tasks/%2E%2E%2F%2E%2E%2F%2E%2E%2F%2E%2E%2Fzzz:cancel", body03, nil},
		// Inside it: alice passed the gate, the path is refused all the same.
		{"GET", "/a2a/rest/tasks/a%2Fb", body10, []reqOpt{alice}},
		{"GET", "/a2a/rest/tasks/a%5Cb", body10, []reqOpt{alice}},
		{"GET", "/a2a/rest/tasks/%2E%2E", body10, []reqOpt{alice}},
		{"GET", "/a2a/rest/v1/tasks/a%2fb", body03, []reqOpt{alice}},
	} {
		r := restDo(t, tc.method, base+tc.path, "", tc.opts...)
		if r.Status != http.StatusBadRequest || string(r.Body) != tc.body || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: %d %s %s\n  want 400 %s", tc.method, tc.path, r.Status, r.Header.Get("Content-Type"), r.Body, tc.body)
		}
	}

	// The store was never asked: alice's lookup of a missing task, made
	// after them, is the one operation counted since.
	restDo(t, "GET", restURL+"/tasks/no-such-task", "", alice).fails(t, 404, "NOT_FOUND")
	notFound := `caddy_a2a_store_operations_total{op="get",outcome="not_found",store="memory"}`
	want := maps.Clone(before)
	want[notFound] = incr(t, before[notFound])
	if after := settledMetrics(t, want); !maps.Equal(storeOpsOf(after), want) {
		t.Errorf("store operations:\n  before %v\n  after  %v\n  want   %v", before, storeOpsOf(after), want)
	}
	if n := len(a.Calls()); n != 0 {
		t.Errorf("the agent was called %d times", n)
	}

	// The gate still answers what it covers, and the routes still work.
	if r := restDo(t, "GET", restURL+"/tasks/%2E%2E", ""); r.Status != http.StatusUnauthorized {
		t.Errorf("/a2a/rest/tasks/%%2E%%2E without credentials: %d, want basic_auth's 401", r.Status)
	}
	restDo(t, "POST", restURL+"/message:send", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}`, alice).ok(t, nil)
}

// storeOpsOf keeps the store operation counters of metric lines m.
func storeOpsOf(m map[string]string) map[string]string {
	out := maps.Clone(m)
	maps.DeleteFunc(out, func(k, _ string) bool { return !strings.HasPrefix(k, "caddy_a2a_store_operations_total{") })
	return out
}

// incr is counter value v plus one ("" counts as 0).
func incr(t *testing.T, v string) string {
	t.Helper()
	if v == "" {
		return "1"
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("counter value %q", v)
	}
	return strconv.Itoa(n + 1)
}

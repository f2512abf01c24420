// Package integration runs the a2a module inside a real Caddy (caddytest,
// in process) with real Caddyfiles and httptest agents speaking the agent
// contract. It is the ONE package that starts Caddy: its ports are fixed
// (HTTP 9080-9089, admin 9099) and no test may run in parallel.
package integration

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"

	_ "github.com/caddy-a2a/caddy-a2a"
)

// Fixed addresses of the Caddy under test.
const (
	adminPort = 9099
	base      = "http://127.0.0.1:9080"
	base2     = "http://127.0.0.1:9081"
)

// globals go first in every Caddyfile: the admin endpoint the tester
// loads configs through, no automatic HTTPS or autosave, and any extra
// global options of the test.
const globals = `{
	admin localhost:9099
	auto_https off
	persist_config off
	%s
}
`

// load makes cfg (a Caddyfile without global options, expanded as a
// text/template with data) the running config of the shared in-process
// Caddy: the first call starts Caddy, every later one is a config reload
// through the admin API.
func load(t *testing.T, cfg string, data any) *caddytest.Tester {
	t.Helper()
	return loadGlobal(t, "", cfg, data)
}

// loadGlobal is load with extra global options.
func loadGlobal(t *testing.T, global, cfg string, data any) *caddytest.Tester {
	t.Helper()
	tpl := template.Must(template.New("caddyfile").Option("missingkey=error").Parse(cfg))
	var b bytes.Buffer
	if err := tpl.Execute(&b, data); err != nil {
		t.Fatalf("caddyfile template: %v", err)
	}
	tc := caddytest.NewTester(t).WithDefaultOverrides(caddytest.Config{AdminPort: adminPort})
	tc.InitServer(fmt.Sprintf(globals, global)+b.String(), "caddyfile")
	if t.Failed() {
		t.FailNow()
	}
	settle(t, b.String())
	return tc
}

// settle waits, after a config load, until the servers of the new config
// answer, then drops the idle keep-alive connections of the tests'
// clients. A load shares the old config's listening socket: the old
// server's Close sets a deadline on it to wake its blocked Accept, and the
// new server, woken by the same deadline, may clear it first, leaving the
// old server blocked in Accept to take the next connection and close it
// as it shuts down: a bare EOF or a reset on a test's first request (seen
// with a config of nothing but respond and basic_auth, so Caddy's, not the
// module's), and no client retries a POST. The probes, on a path no mount
// serves, take that connection instead; five answers in a row on fresh
// connections, 10ms apart, mean no old server is left accepting.
func settle(t *testing.T, cfg string) {
	t.Helper()
	probe := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 2 * time.Second}
	for _, addr := range []string{base, base2} {
		if !strings.Contains(cfg, strings.TrimPrefix(addr, "http://127.0.0.1")) {
			continue
		}
		deadline := time.Now().Add(5 * time.Second)
		for ok := 0; ok < 5; {
			resp, err := probe.Get(addr + "/.settle-probe")
			if err != nil {
				ok = 0
				if time.Now().After(deadline) {
					t.Fatalf("%s does not answer after the config load: %v", addr, err)
				}
				waitBriefly()
				continue
			}
			resp.Body.Close()
			ok++
			waitBriefly()
		}
	}
	client.CloseIdleConnections()
	http.DefaultClient.CloseIdleConnections()
}

// skillBlock is a valid card body for tests that do not care about it.
const skillBlock = `
		name "Test agent"
		description "An agent under test."
		skill echo {
			name "Echo"
			description "Echoes."
			tags test
		}`

// minimal is one a2a mount on :9080 in front of {{.Agent}}.
func minimal(extra ...string) string {
	return `http://:9080 {
	a2a {
		upstream {{.Agent}}` + skillBlock + `
		` + strings.Join(extra, "\n\t\t") + `
	}
}
`
}

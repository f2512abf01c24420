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
	forgetConnections()
	absorbStrayAccepts()
	return tc
}

// absorbStrayAccepts sends a few throwaway requests to each HTTP port of
// the tests after a config load. A load shares the old config's listening
// socket; the old server's Close sets a deadline on it to wake its blocked
// Accept, and the new server, woken by the same deadline, clears it. When
// the clear comes first, the old server stays blocked in Accept and takes
// the next connection, then serves it while it shuts down and is cleaned
// up (a bare EOF or a reset on a test's first request, seen on a loaded
// machine). Each old server takes at most one such connection: these
// probes, on a path no mount serves, take it instead, whatever answers.
func absorbStrayAccepts() {
	for _, b := range []string{base, base2} {
		for range 8 {
			req, _ := http.NewRequest("GET", b+"/.after-load-probe", nil)
			req.Close = true
			resp, err := client.Do(req)
			if err != nil {
				if strings.Contains(err.Error(), "connection refused") {
					break // nothing listens there in this config
				}
				continue
			}
			resp.Body.Close()
		}
	}
}

// forgetConnections drops the idle keep-alive connections of the tests'
// clients after a config load: they were accepted by the servers of the
// config before, which the load shut down, and a request sent on one
// races the close and can end in a bare EOF (Caddy's reload, not the
// module, and no client retries a POST).
func forgetConnections() {
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

// Package interop runs the real A2A client libraries (a2a-go v2 and v0.3,
// @a2a-js/sdk) against a Caddy that has the a2a handler loaded in-process, with
// a scripted HTTP agent as its upstream. It is a separate Go module so that the
// plugin's go.mod does not carry the clients' dependencies.
package interop

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"golang.org/x/crypto/bcrypt"

	// The module under test and the stock modules (Caddyfile adapter, http app).
	_ "github.com/caddy-a2a/caddy-a2a"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

// Fixed ports (9180–9199 belong to this package); tests never run in parallel.
const (
	// dualPort serves A2A 0.3 and 1.0 on one endpoint, the default set-up.
	dualPort = 9180
	// legacyPort serves A2A 0.3 only (JSON-RPC, and HTTP+JSON under restPath), so that clients that pick 0.3 only when
	// nothing newer is offered (@a2a-js/sdk legacyCompat) really speak 0.3.
	legacyPort = 9181
	// authPort puts basic_auth in front of the RPC path, so tasks have owners
	// (ListTasks lists nothing for anonymous callers).
	authPort = 9182
	// replyPort serves 0.3 and 1.0 with `reply message`: every send answers
	// one Message and no task is stored.
	replyPort = 9183
	// gatewayPort and gatewayLegacyPort front a real SDK agent with
	// `upstream a2a` (gateway_test.go loads them per agent): 0.3 and 1.0,
	// and 0.3 only for the clients that speak 0.3 only when nothing newer
	// is offered.
	gatewayPort       = 9184
	gatewayLegacyPort = 9185
	// restPort serves 0.3 and 1.0 over JSON-RPC and 1.0 over HTTP+JSON
	// (rest_path restPath) and gRPC (h2c).
	restPort = 9186
	// pushPort is restPort's set-up with push notifications on (receivers
	// on 127.0.0.1 allowed).
	pushPort  = 9187
	adminPort = 9190
	// directPort serves 0.3 and 1.0 on every binding with `reply auto`,
	// the owner from X-Caller so that ListTasks has tasks to list;
	// directLegacyPort is the same on 0.3 only, for @a2a-js/sdk's
	// legacyCompat, which speaks 0.3 only when nothing newer is offered.
	directPort       = 9192
	directLegacyPort = 9193
	// rpcPath is the handler's default JSON-RPC path; the card's URLs end in it.
	rpcPath = "/a2a"
	// restPath is the HTTP+JSON base path of the restPort site.
	restPath = "/a2a/rest"
)

var (
	// dualURL and legacyURL are the base URLs the clients discover cards from.
	dualURL   = fmt.Sprintf("http://127.0.0.1:%d", dualPort)
	legacyURL = fmt.Sprintf("http://127.0.0.1:%d", legacyPort)
	authURL   = fmt.Sprintf("http://127.0.0.1:%d", authPort)
	replyURL  = fmt.Sprintf("http://127.0.0.1:%d", replyPort)
	restURL   = fmt.Sprintf("http://127.0.0.1:%d", restPort)
	pushURL   = fmt.Sprintf("http://127.0.0.1:%d", pushPort)
	directURL = fmt.Sprintf("http://127.0.0.1:%d", directPort)
	// directLegacyURL is directPort's 0.3-only twin.
	directLegacyURL = fmt.Sprintf("http://127.0.0.1:%d", directLegacyPort)
	// agent is the upstream behind both sites; agentURL is its address.
	agent    *scriptedAgent
	agentURL string
	// baseCaddyfile is the configuration TestMain loaded: tests that load
	// more sites add theirs to it and load it back when they end.
	baseCaddyfile string
)

// caddyfile renders the configuration under test. Log level comes from
// INTEROP_CADDY_LOG (default WARN) so that a failing run can be redone with DEBUG.
func caddyfile(agentURL string) (string, error) {
	level := os.Getenv("INTEROP_CADDY_LOG")
	if level == "" {
		level = "WARN"
	}
	var users strings.Builder
	for _, u := range []string{"alice", "bob"} {
		hash, err := bcrypt.GenerateFromPassword([]byte(password(u)), bcrypt.MinCost)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&users, "\t\t%s %s\n", u, hash)
	}
	// extra goes before the a2a block, inner into it. The sites have one
	// upstream and rpc_path, so each names its own share: mounts of one
	// config share tasks only on purpose.
	site := func(port int, versions, extra, inner string) string {
		return fmt.Sprintf(`http://127.0.0.1:%d {
	bind 127.0.0.1
%s	a2a {
		upstream %s
		spec_version %s
		store memory {
			share site-%d
		}
%s		name "Interop Agent"
		description "Scripted agent behind Caddy for client interop tests"
		version 1.0.0
		skill echo {
			name "Echo"
			description "Echoes"
			tags echo
		}
	}
}
`, port, extra, agentURL, versions, port, inner)
	}
	auth := fmt.Sprintf("\tbasic_auth %s {\n%s\t}\n", rpcPath, users.String())
	return fmt.Sprintf(`{
	admin localhost:%d
	auto_https off
	servers {
		protocols h1 h2c
	}
	log {
		level %s
	}
}
`, adminPort, level) + site(dualPort, "0.3 1.0", "", "") + site(legacyPort, "0.3", "", "\t\trest_path "+restPath+"\n") + site(authPort, "0.3 1.0", auth, "") +
		site(replyPort, "0.3 1.0", "", "\t\treply message\n") + site(restPort, "0.3 1.0", "", "\t\trest_path "+restPath+"\n\t\tgrpc on\n") +
		site(pushPort, "0.3 1.0", "", "\t\trest_path "+restPath+"\n\t\tgrpc on\n\t\tpush {\n\t\t\tallow 127.0.0.1\n\t\t}\n") +
		site(directPort, "0.3 1.0", "", "\t\treply auto\n"+directOwner+"\t\trest_path "+restPath+"\n\t\tgrpc on\n") +
		site(directLegacyPort, "0.3", "", "\t\treply auto\n"+directOwner), nil
}

// directOwner names the reply auto mounts' owner: a header, which every
// transport of every client sends (gRPC as metadata), where basic_auth on
// rpc_path would leave the HTTP+JSON routes and the gRPC service anonymous.
const directOwner = "\t\towner {http.request.header.X-Caller}\n"

// password is the basic_auth password of a test user.
func password(user string) string { return user + "-interop-pw" }

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	agent = newScriptedAgent()
	srv := httptest.NewServer(agent)
	defer srv.Close()
	agentURL = srv.URL

	cfgText, err := caddyfile(agentURL)
	if err != nil {
		fmt.Fprintf(os.Stderr, "interop: rendering the Caddyfile: %v\n", err)
		return 1
	}
	baseCaddyfile = cfgText
	adapter := caddyconfig.GetAdapter("caddyfile")
	cfgJSON, warnings, err := adapter.Adapt([]byte(cfgText), map[string]any{"filename": "Caddyfile"})
	if err != nil {
		fmt.Fprintf(os.Stderr, "interop: adapting the Caddyfile failed: %v\n%s", err, cfgText)
		return 1
	}
	for _, w := range warnings {
		fmt.Fprintf(os.Stderr, "interop: Caddyfile warning: %s\n", w.String())
	}
	if err := caddy.Load(cfgJSON, true); err != nil {
		fmt.Fprintf(os.Stderr, "interop: loading Caddy failed: %v\n%s\n", err, cfgJSON)
		return 1
	}
	defer func() {
		if err := caddy.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "interop: stopping Caddy: %v\n", err)
		}
	}()
	for _, base := range []string{dualURL, legacyURL, authURL, replyURL, restURL, directURL, directLegacyURL} {
		if err := waitReady(base + "/.well-known/agent-card.json"); err != nil {
			fmt.Fprintf(os.Stderr, "interop: Caddy did not come up: %v\nconfig:\n%s\n", err, cfgJSON)
			return 1
		}
	}
	return m.Run()
}

// waitReady polls the card URL until Caddy answers 200, for at most 10s.
func waitReady(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var last string
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%s: %d %s", url, resp.StatusCode, strings.TrimSpace(string(body)))
		} else {
			last = err.Error()
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s (last: %s)", ctx.Err(), last)
}

// testCtx is the context one interop test runs under: generous for a loaded
// 2-core machine, but bounded so a hung stream fails instead of stalling CI.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// uniq makes a name unique per test, for gates and message texts.
func uniq(t *testing.T) string {
	return strings.NewReplacer("/", "-", " ", "_").Replace(t.Name()) + fmt.Sprintf("-%d", time.Now().UnixNano())
}

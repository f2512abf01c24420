// Package browser runs headless Chromium against a Caddy with the a2a
// handler loaded in-process: pages of other origins (second listeners of
// the test) call the agent as web apps and as forgers would, and the tests
// read what the page could read and what the agent and the store saw. It
// is a separate Go module so that the plugin's go.mod does not carry the
// browser driver (chromedp).
//
// Chromium is Debian's package chromium (/usr/bin/chromium), or the
// program CHROMIUM names. Without it the run fails, naming the package:
// ./test.sh installs it where it can.
package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/chromedp/chromedp"

	// The module under test and the stock modules (Caddyfile adapter,
	// http app, basic_auth, respond).
	_ "github.com/caddy-a2a/caddy-a2a"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

// Fixed ports: 9280-9299 belong to this package (integration/ has
// 9080-9099, interop/ 9180-9199). Tests never run in parallel.
const (
	// openPort serves a mount without auth whose cors lists listedPage.
	openPort = 9280
	// gatedPort is the README's worked example: basic_auth on the RPC
	// path except preflights, cors for listedPage with credentials on.
	gatedPort = 9284
)

// The pages, each served by a listener of the test. Chromium counts
// localhost and 127.0.0.1 as different sites, and ports as the same site.
const (
	// listedPage is the web app both mounts' cors lists.
	listedPage = "http://localhost:9281/"
	// crossSitePage is another site nobody listed.
	crossSitePage = "http://localhost:9282/"
	// sameSitePage is unlisted too, on the agent's own site (another
	// port): Sec-Fetch-Site says same-site.
	sameSitePage = "http://127.0.0.1:9283/"
	// plainHTTPPage is on a host that is not localhost, over plain http:
	// Chromium sends no Sec-Fetch-Site there, so Origin is compared with
	// Host (*.test resolves to 127.0.0.1 by a Chromium flag).
	plainHTTPPage = "http://web.test:9282/"
)

// The agent's addresses as pages call them.
var (
	openURL   = fmt.Sprintf("http://127.0.0.1:%d", openPort)
	gatedURL  = fmt.Sprintf("http://127.0.0.1:%d", gatedPort)
	testHost  = fmt.Sprintf("http://agent.test:%d", openPort)
	cardPath  = "/.well-known/agent-card.json"
	rpcPath   = "/a2a"
	ownPage   = openURL + "/page"
	ownPageTH = testHost + "/page"
)

// aliceHash is bcrypt("alice-pw") at the lowest cost, for basic_auth.
const aliceHash = "$2a$04$XY4e5x.3exIDiMJlIkv66ejQTBJom50QAt35Ghs5vSsJQCvnaDn9q"

var (
	theAgent *agent
	// browserCtx is the browser every test opens its tabs in.
	browserCtx context.Context
)

// caddyfile is the configuration under test. Every caller of the open
// mount is the owner "visitor" (a fixed owner, not a placeholder), so the
// test's own ListTasks sees every task a page could have made.
func caddyfile(agentURL string) string {
	level := os.Getenv("BROWSER_CADDY_LOG")
	if level == "" {
		level = "ERROR"
	}
	card := `
		name "Browser test agent"
		description "Called by pages of other origins."
		skill echo {
			name "Echo"
			description "Echoes."
			tags test
		}`
	return fmt.Sprintf(`{
	admin off
	auto_https off
	persist_config off
	log {
		level %[1]s
	}
}

http://:%[2]d {
	bind 127.0.0.1
	handle /page {
		header Content-Type "text/html; charset=utf-8"
		respond "<!doctype html><title>the agent's own page</title>"
	}
	a2a {
		upstream %[3]s
		owner visitor
		extension urn:ext:cite
		store memory {
			share open
		}
		cors {
			origins %[4]s
		}%[6]s
	}
}

http://:%[5]d {
	bind 127.0.0.1
	@rpc_gated {
		path /a2a
		not method OPTIONS
	}
	basic_auth @rpc_gated {
		alice %[7]s
	}
	a2a {
		upstream %[3]s
		store memory {
			share gated
		}
		cors {
			origins %[4]s
			credentials on
		}%[6]s
	}
}
`, level, openPort, agentURL, strings.TrimSuffix(listedPage, "/"), gatedPort, card, aliceHash)
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	chromium, err := findChromium()
	if err != nil {
		fmt.Fprintln(os.Stderr, "browser:", err)
		return 1
	}

	theAgent = newAgent()
	srv := httptest.NewServer(theAgent)
	defer srv.Close()
	theInspectorAgent = newInspectorAgent()
	inspectorSrv := httptest.NewServer(theInspectorAgent)
	defer inspectorSrv.Close()

	stopPages, err := servePages()
	if err != nil {
		fmt.Fprintln(os.Stderr, "browser: page listeners:", err)
		return 1
	}
	defer stopPages()

	cfgText := caddyfile(srv.URL) + inspectorSites(inspectorSrv.URL)
	cfgJSON, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(cfgText), map[string]any{"filename": "Caddyfile"})
	if err != nil {
		fmt.Fprintf(os.Stderr, "browser: adapting the Caddyfile: %v\n%s", err, cfgText)
		return 1
	}
	if err := caddy.Load(cfgJSON, true); err != nil {
		fmt.Fprintf(os.Stderr, "browser: loading Caddy: %v\n", err)
		return 1
	}
	defer func() { _ = caddy.Stop() }()
	for _, u := range []string{openURL + cardPath, gatedURL + cardPath, inspectorURL + cardPath, gatedInspectorURL + cardPath} {
		if err := waitReady(u); err != nil {
			fmt.Fprintf(os.Stderr, "browser: Caddy did not come up: %v\n", err)
			return 1
		}
	}

	profile, err := os.MkdirTemp("", "a2a-browser-profile-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "browser:", err)
		return 1
	}
	defer os.RemoveAll(profile)
	// The flags the closed test network needs: without the
	// background-networking ones Chromium keeps dialling out, and each
	// start gets a new empty profile.
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("host-resolver-rules", "MAP *.test 127.0.0.1"),
		chromedp.UserDataDir(profile),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	var cancelBrowser context.CancelFunc
	browserCtx, cancelBrowser = chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	// The browser lives as long as the context its first action runs in:
	// browserCtx, not a shorter one.
	if err := chromedp.Do(browserCtx, chromedp.Navigate("about:blank")); err != nil {
		fmt.Fprintf(os.Stderr, "browser: starting %s: %v\n", chromium, err)
		return 1
	}
	return m.Run()
}

// findChromium is CHROMIUM, or Debian's chromium on the PATH.
func findChromium() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			return "", fmt.Errorf("CHROMIUM=%s: %v", p, err)
		}
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no Chromium found (chromium, chromium-browser, or the program CHROMIUM names): " +
		"install the Debian package chromium (apt-get install chromium); ./test.sh does so when it runs as root")
}

// servePages serves a blank page on the page origins' ports.
func servePages() (stop func(), err error) {
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><title>a page of another origin</title>")
	})
	var servers []*http.Server
	stop = func() {
		for _, s := range servers {
			_ = s.Close()
		}
	}
	for _, port := range []int{9281, 9282, 9283} {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			stop()
			return nil, err
		}
		s := &http.Server{Handler: page, ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, s)
		go s.Serve(ln)
	}
	return stop, nil
}

// waitReady polls url until it answers 200, for at most 10s.
func waitReady(url string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
			err = fmt.Errorf("%s: %d", url, resp.StatusCode)
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// agentCall is one call the module made to the agent.
type agentCall struct {
	Input json.RawMessage `json:"input"`
	User  string          `json:"user"`
}

// text is the call's input when it is a string.
func (c agentCall) text() string {
	var s string
	_ = json.Unmarshal(c.Input, &s)
	return s
}

// agent answers the agent contract: "stream …" is two NDJSON chunks,
// anything else "Hello, <input>". It records every call.
type agent struct {
	mu    sync.Mutex
	calls []agentCall
}

func newAgent() *agent { return &agent{} }

func (a *agent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var c agentCall
	if err := json.NewDecoder(r.Body).Decode(&c); err != nil {
		http.Error(w, "bad request body", http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	a.calls = append(a.calls, c)
	a.mu.Unlock()
	if strings.HasPrefix(c.text(), "stream") {
		w.Header().Set("Content-Type", "application/x-ndjson")
		io.WriteString(w, `{"text":"one "}`+"\n")
		w.(http.Flusher).Flush()
		io.WriteString(w, `{"text":"two"}`+"\n")
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "Hello, %s", c.text())
}

// callsWith returns the calls whose input holds marker.
func (a *agent) callsWith(marker string) []agentCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []agentCall
	for _, c := range a.calls {
		if strings.Contains(string(c.Input), marker) {
			out = append(out, c)
		}
	}
	return out
}

// Package examples_test runs what the documentation (README.md and the pages
// under docs/) tells a user to run: Caddy built from cmd/caddy with
// Caddyfile.example, the first agent (first-agent/agent.py behind
// first-agent/Caddyfile), and every shell snippet of every page against
// them, with the real bash and curl; every complete Caddyfile through
// `caddy adapt` and `caddy validate`; every relative link and anchor.
package examples_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The pages' fenced blocks: ```sh and ```bash ones are run; a block that
// must not be (a server that does not return, the whole test suite) is
// fenced ```console instead.
var (
	fenced     = regexp.MustCompile("(?ms)^```([a-z-]*)\n(.*?)^```")
	expectLine = regexp.MustCompile(`(?m)^# expect: (.*)$`)
	// assigned finds the variables a snippet sets for the ones after it
	// (TASK_ID=$(curl …)): they are carried over, as in one terminal.
	assigned = regexp.MustCompile(`(?m)^([A-Z][A-Z0-9_]*)=`)
)

// snippet is one fenced block of a page.
type snippet struct {
	page    string // README.md or docs/<name>.md
	line    int    // where its fence opens in the page
	src     string
	expects []string
}

// at names the block for a failure: page:line.
func (s snippet) at() string { return fmt.Sprintf("%s:%d", s.page, s.line) }

// expectsError says whether the snippet shows an error on purpose: one of
// its expectations names a JSON-RPC error code or an HTTP+JSON error's
// status.
func (s snippet) expectsError() bool {
	for _, e := range s.expects {
		if strings.Contains(e, `"code":-32`) || strings.Contains(e, `"status":"`) {
			return true
		}
	}
	return false
}

// pages are the documentation, in the order its snippets run: the README,
// then docs/ by name (a snippet may use a variable an earlier one set, as
// in one terminal).
func pages(t *testing.T, root string) []string {
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(docs)
	names := []string{"README.md"}
	for _, d := range docs {
		names = append(names, filepath.ToSlash(strings.TrimPrefix(d, root+string(filepath.Separator))))
	}
	if len(names) < 10 {
		t.Fatalf("found only %d pages of documentation", len(names))
	}
	return names
}

// TestDocs loads each example of the Caddyfile reference (```caddy-d, the
// lines of an a2a block) and each complete Caddyfile of every page with
// cmd/caddy, starts what the README's quick start and first agent start,
// then runs each ```sh block of every page in order with bash -euo
// pipefail and checks its output holds every "# expect:" substring the
// block names. A block without one fails: each snippet states what it
// answers. The pages' copies of the first agent and its Caddyfile must be
// the files this test runs.
func TestDocs(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "python3", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the pages' snippets need %s on PATH (./test.sh checks for it)", tool)
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	b := checkBlocks(t, root, pages(t, root))

	dir := t.TempDir()
	caddy := filepath.Join(dir, "caddy")
	build := exec.Command("go", "build", "-o", caddy, "./cmd/caddy")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/caddy: %v\n%s", err, out)
	}

	for _, f := range b.fragments {
		validateFragment(t, caddy, dir, f)
	}
	for _, c := range b.caddyfiles {
		validateCaddyfile(t, caddy, dir, c)
	}

	// Free ports for every name the example files read, so the test runs
	// beside a Caddy on the defaults and beside other test runs.
	// The pages' `caddy a2a` snippets run the binary just built.
	env := append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	ports := map[string]int{}
	for _, name := range []string{"A2A_PORT", "A2A_DEMO_PORT", "A2A_ADMIN_PORT", "FIRST_PORT", "FIRST_AGENT_PORT"} {
		ports[name] = freePort(t)
		env = append(env, fmt.Sprintf("%s=%d", name, ports[name]))
	}
	start(t, root, env, caddy, "run", "--config", "Caddyfile.example")
	start(t, root, env, "python3", "examples/first-agent/agent.py")
	start(t, root, env, caddy, "run", "--config", "examples/first-agent/Caddyfile")
	for _, name := range []string{"A2A_PORT", "A2A_DEMO_PORT", "FIRST_PORT", "FIRST_AGENT_PORT"} {
		waitPort(t, ports[name])
	}

	state := filepath.Join(dir, "state.sh")
	if err := os.WriteFile(state, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, s := range b.snippets {
		out, err := run(root, env, state, s)
		if err != nil {
			t.Errorf("%s: the snippet fails: %v\n%s\n--- its output:\n%s", s.at(), err, s.src, out)
			continue
		}
		for _, want := range s.expects {
			if !strings.Contains(out, want) {
				t.Errorf("%s: the output lacks %q\n%s\n--- its output:\n%s", s.at(), want, s.src, out)
			}
		}
		// A JSON-RPC error the snippet does not announce is a broken
		// snippet, however weak its expectations.
		if strings.Contains(out, `"error":{`) && !s.expectsError() {
			t.Errorf("%s: the snippet answers an error it does not expect\n%s\n--- its output:\n%s", s.at(), s.src, out)
		}
	}
}

// blocks are a page set's fenced blocks, by what the test does with them.
type blocks struct {
	snippets   []snippet // ```sh, ```bash: run
	fragments  []snippet // ```caddy-d: loaded inside an a2a block
	caddyfiles []snippet // ```caddyfile without "# …": loaded whole
}

// fragmentMark is how a page marks a Caddyfile that leaves out what an
// earlier one showed ("# … as above"): it is not loaded on its own.
const fragmentMark = "# …"

// checkBlocks sorts the pages' blocks, and checks that their copies of
// the example files are the files.
func checkBlocks(t *testing.T, root string, names []string) blocks {
	copies := map[string]string{
		`"""Your first A2A agent`: "examples/first-agent/agent.py",
		"{$FIRST_PORT":            "examples/first-agent/Caddyfile",
	}
	found := map[string]bool{}
	var b blocks
	for _, page := range names {
		text, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range fenced.FindAllSubmatchIndex(text, -1) {
			tag, body := string(text[m[2]:m[3]]), string(text[m[4]:m[5]])
			s := snippet{page: page, line: 1 + bytes.Count(text[:m[0]], []byte("\n")), src: body}
			for marker, file := range copies {
				if (tag == "python" || tag == "caddyfile") && strings.Contains(body, marker) {
					want, err := os.ReadFile(filepath.Join(root, file))
					if err != nil {
						t.Fatal(err)
					}
					if body != string(want) {
						t.Errorf("%s: the block is not %s as it is: copy the file in", s.at(), file)
					}
					found[file] = true
				}
			}
			switch tag {
			case "caddy-d":
				b.fragments = append(b.fragments, s)
			case "caddyfile":
				if !strings.Contains(body, fragmentMark) {
					b.caddyfiles = append(b.caddyfiles, s)
				}
			case "caddy":
				t.Errorf("%s: fence a Caddyfile ```caddyfile (a complete one is loaded by this test) or ```caddy-d (lines of an a2a block)", s.at())
			case "sh", "bash":
				for _, e := range expectLine.FindAllStringSubmatch(body, -1) {
					s.expects = append(s.expects, e[1])
				}
				if len(s.expects) == 0 {
					t.Errorf("%s: a ```%s block without \"# expect:\" (fence it ```console if it is not to be run)", s.at(), tag)
				}
				b.snippets = append(b.snippets, s)
			}
		}
	}
	for _, file := range copies {
		if !found[file] {
			t.Errorf("no page shows a copy of %s", file)
		}
	}
	if len(b.snippets) < 30 {
		t.Fatalf("found only %d runnable snippets", len(b.snippets))
	}
	if len(b.fragments) < 20 {
		t.Fatalf("found only %d reference examples (```caddy-d)", len(b.fragments))
	}
	if len(b.caddyfiles) < 12 {
		t.Fatalf("found only %d complete Caddyfiles", len(b.caddyfiles))
	}
	return b
}

// The settings every a2a block needs, for the reference examples that do
// not set them themselves.
var required = map[string]string{
	"upstream":    "upstream http://127.0.0.1:9/agent",
	"name":        "name N",
	"description": "description D",
	"skill":       "skill s {\n\tname S\n\tdescription S\n\ttags t\n}",
}

// validateFragment loads one reference example in an a2a block with
// `caddy validate`: it adapts, and the module accepts every value.
func validateFragment(t *testing.T, caddy, dir string, f snippet) {
	set := map[string]bool{}
	for _, l := range strings.Split(f.src, "\n") {
		if fields := strings.Fields(l); len(fields) > 0 && !strings.HasPrefix(l, "\t") {
			set[fields[0]] = true
		}
	}
	body := f.src
	for _, name := range []string{"skill", "description", "name", "upstream"} {
		if !set[name] {
			body = required[name] + "\n" + body
		}
	}
	// A key file the reference names is made here, a fresh one.
	if strings.Contains(body, readmeKeyFile) {
		key := filepath.Join(dir, "card-key.pem")
		writeKey(t, key)
		body = strings.ReplaceAll(body, readmeKeyFile, key)
	}
	body = strings.ReplaceAll(body, pageDataDir, filepath.Join(dir, "a2a"))
	file := filepath.Join(dir, fmt.Sprintf("ref-%s-%d.caddyfile", filepath.Base(f.page), f.line))
	config := "{\n\tadmin off\n}\n\nhttp://127.0.0.1:0 {\n\ta2a {\n\t\t" +
		strings.ReplaceAll(strings.TrimRight(body, "\n"), "\n", "\n\t\t") + "\n\t}\n}\n"
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(caddy, "validate", "--config", file, "--adapter", "caddyfile")
	cmd.Env = loadEnv(dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s: the example does not load in an a2a block: %v\n%s\n--- caddy validate:\n%s", f.at(), err, config, out)
	}
}

// pageEnv holds the environment variables the pages' Caddyfiles read.
var pageEnv = []string{"AGENT_TOKEN=t", "OPENAI_API_KEY=sk-docs", "A2A_REDIS_URL=redis://127.0.0.1:6379", "A2A_PG_PASSWORD=docs"}

// pageDataDir is the file store's directory the pages name: the test
// puts it, and Caddy's data directory, in its own temporary directory.
const pageDataDir = "/var/lib/caddy/a2a"

// loadEnv is the environment `caddy validate` runs in for the pages,
// its data directory under dir.
func loadEnv(dir string) []string {
	return append(append(os.Environ(), pageEnv...), "XDG_DATA_HOME="+filepath.Join(dir, "data"))
}

// The files the pages' Caddyfiles name, made fresh for the test: keys
// are written as keys, anything else as a line of text.
var namedFiles = []string{readmeKeyFile, "/etc/caddy/push.pem", "/etc/caddy/prompt.txt"}

// localSite matches a site address a user runs on their own machine: a
// bare port, or a loopback or unspecified host.
var localSite = regexp.MustCompile(`^(https?://)?(:|127\.0\.0\.1|localhost|\[::1\])`)

// validateCaddyfile loads one complete Caddyfile of a page with the
// repository's own binary, as a user would before running it: `caddy
// adapt`, then `caddy validate`. One meant for a user's own machine (its
// sites are local) sets `admin` in its global options, out of the way of
// a Caddy that already runs there.
func validateCaddyfile(t *testing.T, caddy, dir string, c snippet) {
	body := c.src
	for i, name := range namedFiles {
		if !strings.Contains(body, name) {
			continue
		}
		local := filepath.Join(dir, fmt.Sprintf("named%d-%s", i, filepath.Base(name)))
		if strings.HasSuffix(name, ".pem") {
			writeKey(t, local)
		} else if err := os.WriteFile(local, []byte("You are a test.\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		body = strings.ReplaceAll(body, name, local)
	}
	body = strings.ReplaceAll(body, pageDataDir, filepath.Join(dir, "a2a"))
	file := filepath.Join(dir, fmt.Sprintf("page-%s-%d.caddyfile", filepath.Base(c.page), c.line))
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	env := loadEnv(dir)
	for _, args := range [][]string{
		{"adapt", "--config", file, "--adapter", "caddyfile"},
		{"validate", "--config", file, "--adapter", "caddyfile"},
	} {
		cmd := exec.Command(caddy, args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: caddy %s fails on the page's Caddyfile: %v\n%s\n--- its output:\n%s", c.at(), args[0], err, c.src, out)
			return
		}
	}
	if sites := siteAddresses(c.src); len(sites) > 0 && !strings.Contains(globalOptions(c.src), "\tadmin ") {
		for _, site := range sites {
			if !localSite.MatchString(site) {
				return
			}
		}
		t.Errorf("%s: a Caddyfile for a user's own machine (sites %v) sets `admin` in its global options (admin off, or another port), out of the way of a Caddy already running there", c.at(), sites)
	}
}

// globalOptions is a Caddyfile's global options block, if it opens with one.
func globalOptions(src string) string {
	var b strings.Builder
	in := false
	for _, l := range strings.Split(src, "\n") {
		switch {
		case !in && l == "{":
			in = true
		case in && l == "}":
			return b.String()
		case in:
			b.WriteString(l + "\n")
		case strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#"):
			return ""
		}
	}
	return ""
}

// siteAddresses are the addresses of a Caddyfile's site blocks: the
// unindented lines that open a block, other than the global options.
func siteAddresses(src string) []string {
	var sites []string
	for _, l := range strings.Split(src, "\n") {
		if l == "{" || strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "#") || !strings.HasSuffix(l, "{") {
			continue
		}
		sites = append(sites, strings.Fields(strings.TrimSuffix(l, "{"))...)
	}
	return sites
}

// run runs one snippet in bash after the variables earlier ones set, and
// records the variables it sets for the next.
func run(root string, env []string, state string, s snippet) (string, error) {
	script := "source " + strconv.Quote(state) + "\n" + s.src
	for _, m := range assigned.FindAllStringSubmatch(s.src, -1) {
		script += fmt.Sprintf("printf '%%s=%%q\\n' %s \"$%s\" >> %s\n", m[1], m[1], strconv.Quote(state))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = root
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("still running after 30s")
	}
	return out.String(), err
}

// start runs a server for the length of the test, its output logged when
// the test fails.
func start(t *testing.T, root string, env []string, name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Dir = root
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		if t.Failed() {
			t.Logf("%s %s:\n%s", filepath.Base(name), strings.Join(args, " "), out.String())
		}
	})
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitPort(t *testing.T, port int) {
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on port %d after 20s", port)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readmeKeyFile is the signing key the README's examples name.
const readmeKeyFile = "/etc/caddy/card-key.pem"

// writeKey writes a fresh EC P-256 key, PKCS#8 PEM, to path.
func writeKey(t *testing.T, path string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

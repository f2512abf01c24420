// Package examples_test runs what the README tells a new user to run: Caddy
// built from cmd/caddy with Caddyfile.example, the first agent
// (first-agent/agent.py behind first-agent/Caddyfile), and every shell
// snippet of the README against them, with the real bash and curl.
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
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The README's fenced blocks: ```sh and ```bash ones are run; a block that
// must not be (a server that does not return, the whole test suite) is
// fenced ```console instead.
var (
	fenced     = regexp.MustCompile("(?ms)^```([a-z-]*)\n(.*?)^```")
	expectLine = regexp.MustCompile(`(?m)^# expect: (.*)$`)
	// assigned finds the variables a snippet sets for the ones after it
	// (TASK_ID=$(curl …)): they are carried over, as in one terminal.
	assigned = regexp.MustCompile(`(?m)^([A-Z][A-Z0-9_]*)=`)
)

// snippet is one runnable README block.
type snippet struct {
	line    int // where its fence opens in README.md
	src     string
	expects []string
}

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

// TestREADME loads each example of the README's reference (```caddy-d, the
// lines of an a2a block) with caddy validate, starts what the README's quick
// start and first-agent sections start, then runs each ```sh block in order with bash -euo pipefail and
// checks its output holds every "# expect:" substring the block names. A
// block without one fails: each snippet states what it answers. The
// README's copies of the first agent and its Caddyfile must be the files
// this test runs.
func TestREADME(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "python3", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README's snippets need %s on PATH (./test.sh checks for it)", tool)
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	snippets, fragments := checkBlocks(t, root, readme)

	dir := t.TempDir()
	caddy := filepath.Join(dir, "caddy")
	build := exec.Command("go", "build", "-o", caddy, "./cmd/caddy")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/caddy: %v\n%s", err, out)
	}

	for _, f := range fragments {
		validateFragment(t, caddy, dir, f)
	}

	// Free ports for every name the example files read, so the test runs
	// beside a Caddy on the defaults and beside other test runs.
	// The README's `caddy a2a` snippets run the binary just built.
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
	for _, s := range snippets {
		out, err := run(root, env, state, s)
		if err != nil {
			t.Errorf("README.md:%d: the snippet fails: %v\n%s\n--- its output:\n%s", s.line, err, s.src, out)
			continue
		}
		for _, want := range s.expects {
			if !strings.Contains(out, want) {
				t.Errorf("README.md:%d: the output lacks %q\n%s\n--- its output:\n%s", s.line, want, s.src, out)
			}
		}
		// A JSON-RPC error the snippet does not announce is a broken
		// snippet, however weak its expectations.
		if strings.Contains(out, `"error":{`) && !s.expectsError() {
			t.Errorf("README.md:%d: the snippet answers an error it does not expect\n%s\n--- its output:\n%s", s.line, s.src, out)
		}
	}
}

// checkBlocks returns the README's runnable snippets, and checks that its
// copies of the example files are the files.
func checkBlocks(t *testing.T, root string, readme []byte) (snippets, fragments []snippet) {
	copies := map[string]string{
		`"""Your first A2A agent`: "examples/first-agent/agent.py",
		"{$FIRST_PORT":            "examples/first-agent/Caddyfile",
	}
	found := map[string]bool{}
	for _, m := range fenced.FindAllSubmatchIndex(readme, -1) {
		tag, body := string(readme[m[2]:m[3]]), string(readme[m[4]:m[5]])
		line := 1 + bytes.Count(readme[:m[0]], []byte("\n"))
		for marker, file := range copies {
			if (tag == "python" || tag == "caddyfile") && strings.Contains(body, marker) {
				want, err := os.ReadFile(filepath.Join(root, file))
				if err != nil {
					t.Fatal(err)
				}
				if body != string(want) {
					t.Errorf("README.md:%d: the block is not %s as it is: copy the file in", line, file)
				}
				found[file] = true
			}
		}
		if tag == "caddy-d" {
			fragments = append(fragments, snippet{line: line, src: body})
			continue
		}
		if tag != "sh" && tag != "bash" {
			continue
		}
		s := snippet{line: line, src: body}
		for _, e := range expectLine.FindAllStringSubmatch(body, -1) {
			s.expects = append(s.expects, e[1])
		}
		if len(s.expects) == 0 {
			t.Errorf("README.md:%d: a ```%s block without \"# expect:\" (fence it ```console if it is not to be run)", line, tag)
		}
		snippets = append(snippets, s)
	}
	for _, file := range copies {
		if !found[file] {
			t.Errorf("README.md shows no copy of %s", file)
		}
	}
	if len(snippets) < 10 {
		t.Fatalf("found only %d runnable snippets in README.md", len(snippets))
	}
	if len(fragments) < 15 {
		t.Fatalf("found only %d reference examples (```caddy-d) in README.md", len(fragments))
	}
	return snippets, fragments
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
	file := filepath.Join(dir, fmt.Sprintf("ref%d.caddyfile", f.line))
	config := "{\n\tadmin off\n}\n\nhttp://127.0.0.1:0 {\n\ta2a {\n\t\t" +
		strings.ReplaceAll(strings.TrimRight(body, "\n"), "\n", "\n\t\t") + "\n\t}\n}\n"
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(caddy, "validate", "--config", file, "--adapter", "caddyfile")
	cmd.Env = append(os.Environ(), "AGENT_TOKEN=t", "OPENAI_API_KEY=sk-readme")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("README.md:%d: the example does not load in an a2a block: %v\n%s\n--- caddy validate:\n%s", f.line, err, config, out)
	}
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

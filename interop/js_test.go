package interop

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestJSClient runs the @a2a-js/sdk suite (interop/js/test, node's own test
// runner) against the Caddy and agent this package started. Node's output is
// streamed into the test log line by line; a failing node run fails the test.
func TestJSClient(t *testing.T) {
	node, dir := nodeSuite(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Its own file: gateway.test.js runs from TestGateway.
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "test/client.test.js")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"A2A_DUAL_URL="+dualURL,
		"A2A_LEGACY_URL="+legacyURL,
		"A2A_REST_URL="+restURL,
		"AGENT_CONTROL_URL="+agentURL,
		"NO_COLOR=1",
	)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting node: %v", err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		logLines(t, out)
	}()
	wg.Wait()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node --test failed: %v (its output is above)", err)
	}
}

// TestJSPush runs the @a2a-js/sdk push suite (interop/js/test/push.test.js)
// against the push mount.
func TestJSPush(t *testing.T) {
	node, dir := nodeSuite(t)
	runNode(t, node, dir, "test/push.test.js", "A2A_PUSH_URL="+pushURL)
}

// TestJSGRPC runs @a2a-js/sdk's gRPC transports (interop/js/test/grpc.test.js)
// against the REST mount's gRPC binding, each dialing the URL its card gives.
func TestJSGRPC(t *testing.T) {
	node, dir := nodeSuite(t)
	runNode(t, node, dir, "test/grpc.test.js", "A2A_REST_URL="+restURL)
}

// runNode runs one node --test file of js/ with env added, its output in
// the test log; a failing run fails the test.
func runNode(t *testing.T, node, dir, file string, env ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", file)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), env...), "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	for _, l := range strings.Split(string(out), "\n") {
		t.Log("node: " + l)
	}
	if err != nil {
		t.Fatalf("node --test %s failed: %v (its output is above)", file, err)
	}
}

// logLines copies r into the test log one line at a time, as it arrives.
func logLines(t *testing.T, r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		t.Log("node: " + sc.Text())
	}
}

// nodeSuite finds node and js/node_modules for a node --test suite: it
// skips the test when either is missing, and fails instead under CI=true.
func nodeSuite(t *testing.T) (node, dir string) {
	t.Helper()
	inCI := os.Getenv("CI") == "true"
	node, err := exec.LookPath("node")
	if err != nil {
		if inCI {
			t.Fatalf("node is not installed, and CI=true: the JS interop suite must run in CI")
		}
		t.Skip("node is not installed: skipping the @a2a-js/sdk interop suite")
	}
	dir, err = filepath.Abs("js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@a2a-js", "sdk", "package.json")); err != nil {
		if inCI {
			t.Fatalf("interop/js/node_modules is missing and CI=true: run `npm ci` in interop/js (interop/run.sh does)")
		}
		t.Skip("interop/js/node_modules is missing: run `npm ci` in interop/js (or interop/run.sh) to enable the @a2a-js/sdk suite")
	}
	return node, dir
}

package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// startJSAgent starts the @a2a-js/sdk agent (js/agent/server.mjs, A2A 1.0,
// JSON-RPC at URL+"/rpc") under node on 127.0.0.1:port (0 = a free port).
// It skips the test when node or js/node_modules is missing, and fails
// instead under CI=true.
func startJSAgent(t *testing.T, port int) *peer {
	t.Helper()
	return startJSPeer(t, port, false)
}

// startJSHybridAgent is startJSAgent with the SDK's 0.3 compatibility on
// (PEER_LEGACY=1): one URL serves both versions, chosen by the A2A-Version
// header (absent = 0.3), and the card lists a 1.0 and a 0.3 JSONRPC
// interface at that URL. A card GET without the header gets the 0.3-shaped
// card (url, preferredTransport) that still carries supportedInterfaces.
func startJSHybridAgent(t *testing.T, port int) *peer {
	t.Helper()
	return startJSPeer(t, port, true)
}

// syncBuffer collects node's output for the failure report.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startJSBlockingAgent is startJSAgent with a card that says the agent
// does not stream (PEER_STREAMING=0): a gateway sends it blocking
// SendMessage calls.
func startJSBlockingAgent(t *testing.T, port int) *peer {
	t.Helper()
	return startJSPeer(t, port, false, "PEER_STREAMING=0")
}

func startJSPeer(t *testing.T, port int, legacy bool, env ...string) *peer {
	t.Helper()
	inCI := os.Getenv("CI") == "true"
	node, err := exec.LookPath("node")
	if err != nil {
		if inCI {
			t.Fatalf("node is not installed, and CI=true: the JS peer must run in CI")
		}
		t.Skip("node is not installed: skipping the @a2a-js/sdk peer")
	}
	dir, err := filepath.Abs("js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "express", "package.json")); err != nil {
		if inCI {
			t.Fatalf("interop/js/node_modules (with express) is missing and CI=true: run `npm ci` in interop/js")
		}
		t.Skip("interop/js/node_modules (with express) is missing: run `npm ci` in interop/js to enable the @a2a-js/sdk peer")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, filepath.Join("agent", "server.mjs"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), fmt.Sprintf("PEER_PORT=%d", port), "NO_COLOR=1")
	if legacy {
		cmd.Env = append(cmd.Env, "PEER_LEGACY=1")
	}
	cmd.Env = append(cmd.Env, env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var logs syncBuffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting node: %v", err)
	}
	exited := make(chan struct{})
	portCh := make(chan int, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			var p int
			if !sent {
				if _, err := fmt.Sscanf(line, "listening %d", &p); err == nil {
					portCh <- p
					sent = true
					continue
				}
			}
			fmt.Fprintln(&logs, line)
		}
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cancel()
		<-exited
		if t.Failed() {
			t.Logf("node peer output:\n%s", logs.String())
		}
	})

	var actual int
	select {
	case actual = <-portCh:
	case <-exited:
		t.Fatalf("the node peer exited before listening:\n%s", logs.String())
	case <-time.After(15 * time.Second):
		t.Fatalf("the node peer did not listen within 15s:\n%s", logs.String())
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", actual)
	p := &peer{Name: "a2a-js", URL: base, RPC: base + peerRPCPath, Version: "1.0", t: t}
	if legacy {
		p.Name, p.RPC03, p.Version = "a2a-js-hybrid", base+peerRPCPath, "1.0 0.3"
	}
	p.calls = func() ([]peerCall, error) {
		var out []peerCall
		err := jsControl(http.MethodGet, base+"/_calls", &out)
		return out, err
	}
	p.reset = func() error { return jsControl(http.MethodPost, base+"/_calls/reset", nil) }
	return p
}

// jsControl calls the node peer's recorder endpoints.
func jsControl(method, url string, into any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(""))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: status %d", method, url, resp.StatusCode)
	}
	if into != nil {
		if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
			return fmt.Errorf("%s %s: decoding: %w", method, url, err)
		}
	}
	return nil
}

// Package replicas runs the module as it runs behind a load balancer:
// separate Caddy processes (built from cmd/caddy) sharing one real
// redis-server through `store redis`, or one real PostgreSQL through
// `store postgres` (the tests of both, eachStore); and one Caddy on
// `store file`, killed and started again. Ports 9380-9389 belong to this
// package; its tests never run in parallel.
package replicas

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/internal/pgtest"
	"github.com/caddy-a2a/caddy-a2a/internal/redistest"
)

// The two replicas' HTTP ports.
const (
	portA = 9380
	portB = 9381
)

// caddyBin is the Caddy built from ./cmd/caddy once for the package.
var caddyBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "caddy-a2a-replicas")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	caddyBin = filepath.Join(dir, "caddy")
	build := exec.Command("go", "build", "-o", caddyBin, "../cmd/caddy")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "replicas: building cmd/caddy:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	pgtest.Cleanup()
	os.Exit(code)
}

// sharedStores are the stores several replicas share, each started
// fresh (a server of its own) for one test: the URL of its store line.
var sharedStores = []struct {
	name  string
	start func(*testing.T) string
}{
	{"redis", startRedis},
	{"postgres", func(t *testing.T) string { return pgtest.Start(t).DSN() }},
}

// eachStore runs fn as a subtest for each shared store, with its URL.
func eachStore(t *testing.T, fn func(t *testing.T, storeURL string)) {
	for _, st := range sharedStores {
		t.Run(st.name, func(t *testing.T) { fn(t, st.start(t)) })
	}
}

// freePort is a free TCP port on 127.0.0.1.
func freePort(t *testing.T) int { return redistest.FreePort(t) }

// startRedis starts a redis-server of its own (no persistence) and
// returns its URL; it is stopped when the test ends. Without
// redis-server the test fails naming the Debian package.
func startRedis(t *testing.T) string {
	t.Helper()
	url, _ := startRedisOn(t, freePort(t))
	return url
}

// startRedisOn starts redis-server on port; stop kills it (the test's end
// does too).
func startRedisOn(t *testing.T, port int) (url string, stop func()) {
	t.Helper()
	srv := &redistest.Server{Port: port}
	srv.Start(t)
	t.Cleanup(srv.Stop)
	return "redis://127.0.0.1:" + strconv.Itoa(port), srv.Stop
}

// waitPort waits until something accepts connections on port.
func waitPort(t *testing.T, port int, what string, out *bytes.Buffer) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not listen on %d: %v\n%s", what, port, err, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// replica is one Caddy process.
type replica struct {
	name string
	port int
	cmd  *exec.Cmd
	out  bytes.Buffer
}

// URL is the replica's JSON-RPC endpoint.
func (r *replica) URL() string { return "http://127.0.0.1:" + strconv.Itoa(r.port) + "/a2a" }

// startReplica runs Caddy with the site of mount (the a2a block's
// lines) on port, its store the one at storeURL (storeType).
func startReplica(t *testing.T, name string, port int, agentURL, storeURL, storeBlock string) *replica {
	t.Helper()
	cfg := replicaConfig(port, agentURL, storeURL, storeBlock, "off")
	return runReplica(t, name, port, cfg)
}

// storeType is the store a replica's store URL names: postgres for a
// postgres:// DSN, file for a directory, else redis.
func storeType(storeURL string) string {
	switch {
	case strings.HasPrefix(storeURL, "postgres://"):
		return "postgres"
	case strings.HasPrefix(storeURL, "/"):
		return "file"
	}
	return "redis"
}

// replicaConfig is a replica's Caddyfile; admin is its admin address or
// "off".
func replicaConfig(port int, agentURL, storeURL, storeBlock, admin string) string {
	return fmt.Sprintf(`{
	admin %s
	auto_https off
	persist_config off
}
http://:%d {
	a2a {
		upstream %s
		name "Replica agent"
		description "One agent, several Caddy."
		skill s {
			name "S"
			description "S."
			tags t
		}
		owner {http.request.header.X-Caller}
		store %s %s {
			%s
		}
	}
}
`, admin, port, agentURL, storeType(storeURL), storeURL, storeBlock)
}

// runReplica runs Caddy with cfg, its HTTP server on port.
func runReplica(t *testing.T, name string, port int, cfg string) *replica {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &replica{name: name, port: port}
	r.cmd = exec.Command(caddyBin, "run", "--config", file, "--adapter", "caddyfile")
	r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.out
	r.cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.stop(t) })
	waitPort(t, port, "replica "+name, &r.out)
	return r
}

// stop ends the replica gracefully (SIGTERM, then a kill after 10s).
func (r *replica) stop(t *testing.T) {
	if r.cmd.ProcessState != nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = r.cmd.Process.Kill()
		<-done
	}
	if t.Failed() {
		t.Logf("replica %s's log:\n%s", r.name, lastLines(r.out.String(), 40))
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// client calls the replicas.
var client = &http.Client{Timeout: 15 * time.Second}

// ctxT ends with the test, at the latest after 30s.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

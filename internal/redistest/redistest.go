// Package redistest starts real Redis servers for tests: one
// redis-server, or a Redis Cluster of three, on free ports of 127.0.0.1,
// without persistence, stopped when the test ends. A machine without
// redis-server fails the test, naming the Debian package (never skips).
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Server is a redis-server a test runs.
type Server struct {
	// Port is the server's port on 127.0.0.1.
	Port int
	// Args are extra arguments, e.g. --requirepass.
	Args []string
	// Socket is the path of a Unix socket the server also listens on
	// ("" for none; StartUnix sets one).
	Socket string
	// Cmd is the running process (nil when stopped): a test may signal
	// it (SIGSTOP freezes the server).
	Cmd *exec.Cmd
}

// StartUnix is Start with the server also listening on a Unix socket
// (UnixURL), in a directory removed when the test ends.
func StartUnix(t testing.TB, args ...string) *Server {
	t.Helper()
	// A short directory, not t.TempDir(): a socket path has room for
	// about 100 bytes, and a test's temporary directory is named for it.
	dir, err := os.MkdirTemp("", "redis")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	srv := &Server{Port: FreePort(t), Args: args, Socket: filepath.Join(dir, "redis.sock")}
	srv.Start(t)
	t.Cleanup(srv.Stop)
	return srv
}

// UnixURL is the server's unix:// URL, database 0.
func (srv *Server) UnixURL() string { return "unix://" + srv.Socket + "?db=0" }

// Start starts a server on a free port and stops it when the test ends.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	srv := &Server{Port: FreePort(t), Args: args}
	srv.Start(t)
	t.Cleanup(srv.Stop)
	return srv
}

// URL is the server's redis:// URL, database 0.
func (srv *Server) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", srv.Port) }

// Start runs the server on srv.Port (again, after Stop) and waits until
// it answers.
func (srv *Server) Start(t testing.TB) {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server not found: install the Debian package redis-server (apt-get install redis-server; ./test.sh does as root): %v", err)
	}
	cmd := exec.Command(path, "--port", strconv.Itoa(srv.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning", "--logfile", "")
	if srv.Socket != "" {
		cmd.Args = append(cmd.Args, "--unixsocket", srv.Socket, "--unixsocketperm", "700")
	}
	cmd.Args = append(cmd.Args, srv.Args...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	srv.Cmd = cmd
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if err := ping(srv.Port); err == nil || strings.Contains(err.Error(), "NOAUTH") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	srv.Stop()
	t.Fatalf("redis-server on port %d did not answer PING", srv.Port)
}

// Stop kills the server and waits for it to exit (harmless twice).
func (srv *Server) Stop() {
	if srv.Cmd == nil {
		return
	}
	_ = srv.Cmd.Process.Kill()
	_ = srv.Cmd.Wait()
	srv.Cmd = nil
}

// ping sends one inline PING and expects +PONG.
func ping(port int) error {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return errors.New("unexpected reply " + line)
	}
	return nil
}

// FreePort asks the kernel for a port nobody listens on.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// StartCluster starts a Redis Cluster of three masters (no replicas) and
// returns the URL of its first node; the nodes stop when the test ends.
func StartCluster(t testing.TB) string {
	t.Helper()
	return StartClusterOn(t, [3]int{FreePort(t), FreePort(t), FreePort(t)})
}

// StartClusterOn is StartCluster on the given ports.
func StartClusterOn(t testing.TB, ports [3]int) string {
	t.Helper()
	dir := t.TempDir()
	var addrs []string
	for i, port := range ports {
		srv := &Server{Port: port, Args: []string{"--cluster-enabled", "yes",
			"--cluster-config-file", fmt.Sprintf("%s/nodes-%d.conf", dir, i), "--dir", dir}}
		srv.Start(t)
		t.Cleanup(srv.Stop)
		addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", srv.Port))
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatalf("redis-cli not found: install the Debian package redis-tools (redis-server depends on it): %v", err)
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	// Every node, not only the first: a command routed to a node that
	// has not yet seen the cluster agree is refused with CLUSTERDOWN.
	deadline := time.Now().Add(15 * time.Second)
	for _, addr := range addrs {
		for {
			out, _ := exec.Command(cli, "-h", "127.0.0.1", "-p", strings.Split(addr, ":")[1], "cluster", "info").Output()
			if strings.Contains(string(out), "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the cluster did not come up on %s:\n%s", addr, out)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return "redis://" + addrs[0]
}

// Clients is how many connections the server on port has (CLIENT LIST,
// one line each; the asking redis-cli is one of them).
func Clients(t testing.TB, port int) int {
	t.Helper()
	out, err := exec.Command("redis-cli", "-p", strconv.Itoa(port), "client", "list").Output()
	if err != nil {
		t.Fatalf("redis-cli client list: %v (redis-cli comes with the Debian package redis-server)", err)
	}
	return strings.Count(strings.TrimSpace(string(out)), "\n") + 1
}

package redisstore

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// redisServer is the path of the server the tests run; the Debian
// package redis-server installs it there.
const redisServer = "/usr/bin/redis-server"

// server is a redis-server the test started, without persistence.
type server struct {
	port int
	args []string // extra arguments, e.g. --requirepass
	cmd  *exec.Cmd
}

// startRedis starts a redis-server on a free port of 127.0.0.1 and stops
// it when the test ends; it returns the server's URL. A machine without
// the server fails the test (never skips it), naming the package.
func startRedis(t testing.TB, args ...string) (string, *server) {
	t.Helper()
	srv := &server{port: freePort(t), args: args}
	srv.start(t)
	t.Cleanup(srv.stop)
	return fmt.Sprintf("redis://127.0.0.1:%d/0", srv.port), srv
}

// start runs the server on srv.port and waits until it answers.
func (srv *server) start(t testing.TB) {
	t.Helper()
	path, err := exec.LookPath(redisServer)
	if err != nil {
		if path, err = exec.LookPath("redis-server"); err != nil {
			t.Fatalf("redis-server not found: install the Debian package redis-server (apt-get install redis-server): %v", err)
		}
	}
	cmd := exec.Command(path, "--port", fmt.Sprint(srv.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning", "--logfile", "")
	cmd.Args = append(cmd.Args, srv.args...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	srv.cmd = cmd
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if err := ping(srv.port); err == nil || strings.Contains(err.Error(), "NOAUTH") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	srv.stop()
	t.Fatalf("redis-server on port %d did not answer PING", srv.port)
}

// stop kills the server and waits for it to exit (harmless twice).
func (srv *server) stop() {
	if srv.cmd == nil {
		return
	}
	_ = srv.cmd.Process.Kill()
	_ = srv.cmd.Wait()
	srv.cmd = nil
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

// freePort asks the kernel for a port nobody listens on.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startCluster starts a Redis Cluster of three masters (no replicas, no
// persistence) on free ports and returns the URL of its first node; the
// nodes stop when the test ends.
func startCluster(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	var addrs []string
	for i := range 3 {
		srv := &server{port: freePort(t), args: []string{"--cluster-enabled", "yes",
			"--cluster-config-file", fmt.Sprintf("%s/nodes-%d.conf", dir, i), "--dir", dir}}
		srv.start(t)
		t.Cleanup(srv.stop)
		addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", srv.port))
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
	deadline := time.Now().Add(15 * time.Second)
	for {
		out, _ := exec.Command(cli, "-h", "127.0.0.1", "-p", strings.Split(addrs[0], ":")[1], "cluster", "info").Output()
		if strings.Contains(string(out), "cluster_state:ok") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cluster did not come up:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "redis://" + addrs[0]
}

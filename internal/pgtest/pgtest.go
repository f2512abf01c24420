// Package pgtest starts real PostgreSQL servers for tests: each on a
// free port of 127.0.0.1 (and a unix socket in its data directory), from
// a copy of one cluster initdb made once per test binary, stopped and
// removed when the test ends. fsync is off (the tests need no
// durability against a machine crash, only against a server's: WAL is
// still written, so a killed server recovers what it acknowledged);
// synchronous_commit stays on. TCP connections authenticate with
// scram-sha-256 as user postgres with Password, so that a test can check
// that a password never shows; the socket trusts.
//
// PostgreSQL refuses to run as root: as root, initdb and postgres run as
// the user postgres (Debian's package makes it). A machine without
// PostgreSQL fails the test, naming the Debian package (never skips).
package pgtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Password is the password of the user postgres in every server.
const Password = "pgtest-Secret-7c1f"

// Server is a postgres a test runs.
type Server struct {
	// Port is the server's port on 127.0.0.1.
	Port int
	// Dir is the data directory; the unix socket is in it too.
	Dir string

	bin  string
	cmd  *exec.Cmd
	exit chan struct{}
	log  *bytes.Buffer
}

// template is the cluster initdb made, copied by every Start.
var template struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// Main runs the tests of a package that uses pgtest and then removes
// the template cluster: call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

// Cleanup removes the template cluster, for a TestMain that has more to
// do after its tests than Main does.
func Cleanup() {
	if template.dir != "" {
		os.RemoveAll(filepath.Dir(template.dir))
	}
}

// binDir finds PostgreSQL's programs: the newest of Debian's
// /usr/lib/postgresql/<version>/bin, else the PATH.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, nil
		}
	}
	p, err := exec.LookPath("postgres")
	if err != nil {
		return "", fmt.Errorf("postgres not found: install the Debian package postgresql (apt-get install postgresql; ./test.sh does as root): %w", err)
	}
	return filepath.Dir(p), nil
}

// asPostgres makes cmd run as the user postgres when this process is
// root, and returns the ids files must be owned by (-1: leave them).
func asPostgres(cmd *exec.Cmd) (uid, gid int, err error) {
	if os.Getuid() != 0 {
		return -1, -1, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return 0, 0, fmt.Errorf("running as root, PostgreSQL needs the user postgres (the Debian package postgresql makes it): %w", err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	if cmd != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	}
	return uid, gid, nil
}

// chownAll gives the tree at dir to uid (nothing when uid is -1).
func chownAll(dir string, uid, gid int) error {
	if uid < 0 {
		return nil
	}
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

// makeTemplate runs initdb once.
func makeTemplate() (string, string, error) {
	bin, err := binDir()
	if err != nil {
		return "", "", err
	}
	root, err := os.MkdirTemp("", "pgtest")
	if err != nil {
		return "", "", err
	}
	dir := filepath.Join(root, "data")
	pw := filepath.Join(root, "pw")
	if err := os.WriteFile(pw, []byte(Password+"\n"), 0o600); err != nil {
		return "", "", err
	}
	cmd := exec.Command(filepath.Join(bin, "initdb"), "-D", dir, "-U", "postgres", "--pwfile", pw,
		"--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-locale", "--no-sync", "--no-instructions")
	uid, gid, err := asPostgres(cmd)
	if err != nil {
		return "", "", err
	}
	if err := chownAll(root, uid, gid); err != nil {
		return "", "", err
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("initdb: %v\n%s", err, out)
	}
	return dir, bin, nil
}

// Start starts a server from a copy of the template on a free port and
// stops and removes it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	template.once.Do(func() { template.dir, template.bin, template.err = makeTemplate() })
	if template.err != nil {
		t.Fatal(template.err)
	}
	// A short directory, not t.TempDir(): a socket path has room for
	// about 100 bytes, and a test's temporary directory is named for it.
	root, err := os.MkdirTemp("", "pg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	dir := filepath.Join(root, "data")
	if out, err := exec.Command("cp", "-a", template.dir, dir).CombinedOutput(); err != nil {
		t.Fatalf("copy the template cluster: %v\n%s", err, out)
	}
	uid, gid, err := asPostgres(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := chownAll(root, uid, gid); err != nil {
		t.Fatal(err)
	}
	srv := &Server{Port: FreePort(t), Dir: dir, bin: template.bin}
	srv.Start(t)
	t.Cleanup(srv.Stop)
	return srv
}

// DSN is the server's URL for the user postgres, password included.
func (srv *Server) DSN() string {
	return fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/postgres?sslmode=disable", Password, srv.Port)
}

// Start runs the server (again, after Stop or Kill) and waits until it
// answers. After Kill the old server's processes may hold its shared
// memory a moment: a start they refuse is tried again.
func (srv *Server) Start(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		srv.launch(t)
		for time.Now().Before(deadline) {
			select {
			case <-srv.exit:
				srv.cmd = nil
			default:
			}
			if srv.cmd == nil {
				break
			}
			if ping(srv.DSN()) == nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond)
	}
	log := srv.log.String()
	srv.Stop()
	t.Fatalf("postgres on port %d did not answer:\n%s", srv.Port, log)
}

func (srv *Server) launch(t testing.TB) {
	t.Helper()
	cmd := exec.Command(filepath.Join(srv.bin, "postgres"), "-D", srv.Dir, "-p", strconv.Itoa(srv.Port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+srv.Dir,
		"-c", "fsync=off", "-c", "full_page_writes=off", "-c", "synchronous_commit=on",
		"-c", "max_connections=200", "-c", "shared_buffers=32MB", "-c", "log_min_messages=fatal")
	if _, _, err := asPostgres(cmd); err != nil {
		t.Fatal(err)
	}
	srv.log = new(bytes.Buffer)
	cmd.Stdout, cmd.Stderr = srv.log, srv.log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start postgres: %v", err)
	}
	srv.cmd = cmd
	exit := make(chan struct{})
	srv.exit = exit
	go func() { _ = cmd.Wait(); close(exit) }()
}

// Stop shuts the server down (fast shutdown: sessions end, what was
// committed is on disk) and waits for it (harmless twice).
func (srv *Server) Stop() { srv.signal(syscall.SIGINT) }

// Kill kills the server's postmaster without warning, as a crash does:
// its next Start recovers from the WAL.
func (srv *Server) Kill() { srv.signal(syscall.SIGKILL) }

// Restart stops the server and starts it again on the same port and
// data.
func (srv *Server) Restart(t testing.TB) {
	t.Helper()
	srv.Stop()
	srv.Start(t)
}

func (srv *Server) signal(sig os.Signal) {
	if srv.cmd == nil {
		return
	}
	_ = srv.cmd.Process.Signal(sig)
	select {
	case <-srv.exit:
	case <-time.After(20 * time.Second):
		_ = srv.cmd.Process.Kill()
		<-srv.exit
	}
	srv.cmd = nil
}

// ping connects once.
func ping(dsn string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	return c.Close(ctx)
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

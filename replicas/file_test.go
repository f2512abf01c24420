package replicas

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The file store, through a real Caddy process: what one Caddy keeps on
// disk across a kill -9, and the second process it refuses.

// fileDir is a store directory for the test, a short absolute path.
func fileDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "a2a")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A Caddy killed with SIGKILL loses no task it acknowledged: on restart
// (the same directory) the finished task is read back whole, the task
// waiting for input continues, and the task that was running is recorded
// failed (the orphan rule) without the agent being called again.
func TestFileStoreSurvivesKill(t *testing.T) {
	ag := startAgent(t)
	dir := fileDir(t)
	ra := startReplica(t, "A", portA, ag.URL(), dir, "")
	done := send(t, ra.URL(), "alice", message("echo kept", ""), false)
	if done.Status.State != "TASK_STATE_COMPLETED" || done.text() != "echo: kept" {
		t.Fatalf("echo: %+v", done)
	}
	asked := send(t, ra.URL(), "alice", message("ask", ""), false)
	if asked.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("ask: %+v", asked)
	}
	slow := send(t, ra.URL(), "alice", message("slow", ""), true)
	waitState(t, ra.URL(), "alice", slow.ID, "TASK_STATE_WORKING")
	calls := len(ag.Contexts())
	if err := ra.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = ra.cmd.Wait()

	rb := startReplica(t, "A again", portA, ag.URL(), dir, "")
	if got, e := getTask(t, rb.URL(), "alice", done.ID); e != nil || got.Status.State != "TASK_STATE_COMPLETED" || got.text() != "echo: kept" {
		t.Fatalf("the finished task after the kill: %+v %+v", got, e)
	}
	if _, e := getTask(t, rb.URL(), "bob", done.ID); e == nil || e.Code != -32001 {
		t.Fatalf("bob reads alice's task after the kill: %+v", e)
	}
	failed := waitState(t, rb.URL(), "alice", slow.ID, "TASK_STATE_FAILED")
	if failed.ID != slow.ID {
		t.Fatalf("orphan: %+v", failed)
	}
	next := send(t, rb.URL(), "alice", message("Ada", asked.ID), false)
	if next.Status.State != "TASK_STATE_COMPLETED" || next.text() != "hello Ada" {
		t.Fatalf("the next turn after the kill: %+v", next)
	}
	// One call more: the continued turn; the killed run was not re-run.
	if n := len(ag.Contexts()); n != calls+1 {
		t.Fatalf("%d agent calls after the restart, want %d", n, calls+1)
	}
	var list struct {
		Tasks []task `json:"tasks"`
	}
	if e := call(t, rb.URL(), "alice", "ListTasks", map[string]any{}, &list); e != nil || len(list.Tasks) != 3 {
		t.Fatalf("alice's tasks after the kill: %+v %+v", list, e)
	}
}

// A second Caddy on a directory another one holds is refused at load,
// saying why and naming the stores for several replicas; the first one
// carries on.
func TestFileStoreSecondProcessRefused(t *testing.T) {
	ag := startAgent(t)
	dir := fileDir(t)
	ra := startReplica(t, "A", portA, ag.URL(), dir, "")
	cfgB := replicaConfig(portB, ag.URL(), dir, "", "off")
	file := filepath.Join(t.TempDir(), "Caddyfile")
	if err := os.WriteFile(file, []byte(cfgB), 0o644); err != nil {
		t.Fatal(err)
	}
	b := execCaddy(t, "run", "--config", file, "--adapter", "caddyfile")
	out, err := b.CombinedOutput()
	if err == nil {
		t.Fatalf("a second Caddy on %s started:\n%s", dir, out)
	}
	for _, want := range []string{dir, "store redis", "store postgres"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the refusal does not name %q:\n%s", want, lastLines(string(out), 10))
		}
	}
	if got := send(t, ra.URL(), "alice", message("echo still", ""), false); got.text() != "echo: still" {
		t.Fatalf("the first Caddy after the refusal: %+v", got)
	}
}

// reload loads cfg into the Caddy whose admin API is at adminAddr.
func reload(t *testing.T, adminAddr string, port int, cfg string) {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+adminAddr+"/load", strings.NewReader(cfg))
	req.Header.Set("Content-Type", "text/caddyfile")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("reload: %d %s", resp.StatusCode, body)
	}
	settle(t, port)
}

// Reloads never open the file twice in one process. One that keeps the
// store settings keeps the run in flight; one that changes them (ttl)
// opens the store anew on the same file: the tasks are all there, and the
// runs of the old settings end as a store change ends them (recorded
// failed, the agent call aborted).
func TestFileStoreReload(t *testing.T) {
	ag := startAgent(t)
	dir := fileDir(t)
	admin := freePort(t)
	adminAddr := "127.0.0.1:" + strconv.Itoa(admin)
	cfg := replicaConfig(portA, ag.URL(), dir, "ttl 1h", adminAddr)
	ra := runReplica(t, "A", portA, cfg)
	kept := send(t, ra.URL(), "alice", message("echo kept", ""), false)
	slow := send(t, ra.URL(), "alice", message("slow", ""), true)
	waitState(t, ra.URL(), "alice", slow.ID, "TASK_STATE_WORKING")

	reload(t, adminAddr, portA, strings.Replace(cfg, "Replica agent", "Replica agent, reloaded", 1))
	if got, e := getTask(t, ra.URL(), "alice", slow.ID); e != nil || got.Status.State != "TASK_STATE_WORKING" {
		t.Fatalf("the run after a reload with the same store: %+v %+v", got, e)
	}

	reload(t, adminAddr, portA, strings.Replace(cfg, "ttl 1h", "ttl 2h", 1))
	select {
	case <-ag.aborted:
	case <-time.After(10 * time.Second):
		t.Fatal("the run of the old store settings was not aborted")
	}
	waitState(t, ra.URL(), "alice", slow.ID, "TASK_STATE_FAILED")
	if got, e := getTask(t, ra.URL(), "alice", kept.ID); e != nil || got.text() != "echo: kept" {
		t.Fatalf("after the reload: %+v %+v", got, e)
	}
	if got := send(t, ra.URL(), "alice", message("echo new", ""), false); got.text() != "echo: new" {
		t.Fatalf("a send after the reload: %+v", got)
	}
}

// execCaddy is the Caddy binary run with args, ended after 20s at the
// latest, in a home of its own.
func execCaddy(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, caddyBin, args...)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME="+home, "XDG_CONFIG_HOME="+home)
	return cmd
}

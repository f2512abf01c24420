package filestore

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// The tests of this file run a second process: the test binary again,
// which TestMain turns into a child doing childMode in childDir, printing
// "ok" once it is done and then waiting to be killed.
const (
	childMode = "FILESTORE_TEST_CHILD"
	childDir  = "FILESTORE_TEST_DIR"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childMode); mode != "" {
		if err := child(mode, os.Getenv(childDir)); err != nil {
			fmt.Println("child:", err)
			os.Exit(1)
		}
		fmt.Println("ok")
		select {} // until SIGKILL
	}
	os.Exit(m.Run())
}

// child opens dir and, in mode "write", writes the tasks TestKillKeepsAcknowledged
// reads back; in mode "hold" it only holds the file.
func child(mode, dir string) error {
	s, err := Open(dir, Options{Scope: "s"})
	if err != nil {
		return err
	}
	if mode != "write" {
		return nil
	}
	if _, err := s.Create(bg, "alice", task("done", protocol.StateCompleted), text("d1"), text("d2")); err != nil {
		return err
	}
	if _, err := s.Create(bg, "alice", task("wait", protocol.StateInputRequired), text("w1")); err != nil {
		return err
	}
	if err := s.PutPushConfig(bg, "alice", "wait", store.PushConfig{ID: "p1", Data: []byte("cfg")}, 10); err != nil {
		return err
	}
	v, err := s.Create(bg, "bob", task("run", protocol.StateSubmitted))
	if err != nil {
		return err
	}
	_, _, err = s.Update(bg, "run", v, task("run", protocol.StateWorking), text("r1"))
	return err
}

// startChild runs the child in mode on dir and returns once it printed
// "ok"; the test kills it with SIGKILL at the latest when it ends.
func startChild(t *testing.T, mode, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childMode+"="+mode, childDir+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ok\n" {
		t.Fatalf("child %s: %q %v", mode, line, err)
	}
	return cmd
}

// kill ends the child with SIGKILL: no deferred call, no Close.
func kill(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
}

// What a process was told is stored survives its SIGKILL: the tasks, their
// logs with their ids, the push configs; and the task it was running is
// an orphan of the next process, handed out once, its stream replayable.
func TestKillKeepsAcknowledged(t *testing.T) {
	dir := t.TempDir()
	kill(t, startChild(t, "write", dir))

	s := open(t, dir, Options{Scope: "s"})
	for id, want := range map[string][]string{"done": {"1=d1", "2=d2"}, "wait": {"1=w1"}, "run": {"1=r1"}} {
		evs, err := s.Events(bg, id, "", false)
		if err != nil || !reflect.DeepEqual(texts(evs), want) {
			t.Errorf("events of %s: %q %v, want %q", id, texts(evs), err, want)
		}
	}
	r, err := s.Get(bg, "alice", "done")
	if err != nil || r.Task.Status.State != protocol.StateCompleted || r.Version != 1 || r.LastEventID != "2" {
		t.Fatalf("done: %+v %v", r, err)
	}
	if _, err := s.Get(bg, "bob", "done"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("bob reads alice's task: %v", err)
	}
	cfgs, err := s.PushConfigs(bg, "alice", "wait")
	if err != nil || len(cfgs) != 1 || cfgs[0].ID != "p1" || string(cfgs[0].Data) != "cfg" {
		t.Errorf("push configs: %+v %v", cfgs, err)
	}

	orphans, err := s.Orphans(bg)
	if err != nil || !reflect.DeepEqual(orphans, []store.Orphan{{ID: "run", Owner: "bob"}}) {
		t.Fatalf("orphans: %+v %v, want run of bob", orphans, err)
	}
	if again, _ := s.Orphans(bg); len(again) != 0 {
		t.Errorf("an orphan claimed a moment ago is handed out again: %+v", again)
	}
	rec, err := s.Get(bg, "bob", "run")
	if err != nil {
		t.Fatal(err)
	}
	failed := task("run", protocol.StateFailed)
	if _, last, err := s.Update(bg, "run", rec.Version, failed, protocol.Event{Status: &protocol.StatusUpdate{TaskID: "run", Status: failed.Status, Final: true}}); err != nil || last != "2" {
		t.Fatalf("recording the orphan failed: %q %v", last, err)
	}
	if evs, err := s.Events(bg, "run", "", false); err != nil || len(evs) != 2 || evs[1].Event.Status == nil || evs[1].Event.Status.Status.State != protocol.StateFailed {
		t.Errorf("the orphan's stream after the failure: %+v %v", evs, err)
	}
	// Past the claim the task is written: no longer an orphan.
	s.sh.mu.Lock()
	s.sh.orphans["s"]["run"].claimed = time.Time{}
	s.sh.mu.Unlock()
	if again, _ := s.Orphans(bg); len(again) != 0 {
		t.Errorf("a task recorded failed is still an orphan: %+v", again)
	}
}

// A second process on the directory is refused at open, within the lock
// wait, with a message that says why and what to use for replicas.
func TestSecondProcessRefused(t *testing.T) {
	dir := t.TempDir()
	startChild(t, "hold", dir)
	start := time.Now()
	s, err := Open(dir, Options{Scope: "s"})
	if err == nil {
		_ = s.Close()
		t.Fatal("a second process opened the file")
	}
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("err = %v, want ErrLocked", err)
	}
	for _, want := range []string{dir + "/" + FileName, "one Caddy process", "`store redis` or `store postgres`"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not say %q", err, want)
		}
	}
	if d := time.Since(start); d > 3*lockWait {
		t.Errorf("refused after %v", d)
	}
}

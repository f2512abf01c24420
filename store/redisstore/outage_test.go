package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/internal/redistest"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// A Redis that stops gives errors within the timeout, never a hang; a
// server started again on the same port serves the same store.
func TestOutageAndRecovery(t *testing.T) {
	const timeout = 300 * time.Millisecond
	url, srv := startRedis(t)
	s := newStore(t, url, Options{KeyPrefix: newPrefix(), Timeout: timeout})
	ctx := context.Background()
	v, err := s.Create(ctx, "alice", task("t1", protocol.StateWorking), chunk("a"))
	if err != nil {
		t.Fatal(err)
	}
	// A stream waiting when the server dies ends with an error, not a hang.
	waitErr := make(chan error, 1)
	go func() {
		_, err := s.Events(ctx, "t1", "999999999999999", true)
		waitErr <- err
	}()
	time.Sleep(50 * time.Millisecond)
	srv.Stop()

	ops := []struct {
		name string
		fn   func() error
	}{
		{"Get", func() error { _, err := s.Get(ctx, "alice", "t1"); return err }},
		{"Create", func() error { _, err := s.Create(ctx, "alice", task("t2", protocol.StateWorking)); return err }},
		{"Update", func() error {
			_, _, err := s.Update(ctx, "t1", v, task("t1", protocol.StateWorking), chunk("b"))
			return err
		}},
		{"List", func() error { _, err := s.List(ctx, "alice", store.ListQuery{}); return err }},
		{"Events", func() error { _, err := s.Events(ctx, "t1", "", false); return err }},
		{"EventsWait", func() error { _, err := s.Events(ctx, "t1", "999999999999999", true); return err }},
		{"EventsReady", func() error { _, err := s.EventsReady("t1", "999999999999999"); return err }},
		{"SignalCancel", func() error { return s.SignalCancel(ctx, "t1") }},
		{"ClaimDelivery", func() error { _, err := s.ClaimDelivery(ctx, "t1", "k"); return err }},
	}
	for _, op := range ops {
		start := time.Now()
		err := op.fn()
		took := time.Since(start)
		if err == nil || errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s with Redis down: %v, want a Redis error", op.name, err)
		}
		// Two round trips at most (a wait reads, subscribes, reads).
		if took > 3*timeout+200*time.Millisecond {
			t.Errorf("%s took %v with a %v timeout", op.name, took, timeout)
		}
	}
	select {
	case err := <-waitErr:
		if err == nil {
			t.Error("a wait across the outage returned no error")
		}
	case <-time.After(3 * timeout):
		t.Error("a wait across the outage hangs")
	}
	if ch := s.CancelSignal(ctx5(t), "t1"); closedWithin(ch, 0) {
		t.Error("CancelSignal with Redis down closed its channel")
	}

	// The server comes back, empty (no persistence): the store serves it.
	srv.Start(t)
	v = createOnceUp(t, s, "t3")
	deadline := time.Now().Add(10 * time.Second)
	// The subscriber reconnects by itself, within its backoff; until it
	// has, a wait fails (the caller retries, as a client reconnects).
	for {
		_, err := s.EventsReady("t3", "")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no subscriber after the restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	got := make(chan error, 1)
	go func() {
		evs, err := s.Events(ctx, "t3", "", true)
		if err == nil && len(evs) != 1 {
			err = fmt.Errorf("%d events", len(evs))
		}
		got <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if _, _, err := s.Update(ctx, "t3", v, task("t3", protocol.StateWorking), chunk("after")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a wait after the recovery not woken by an append")
	}
}

// The password of the URL appears in no error the store gives.
func TestPasswordNotInErrors(t *testing.T) {
	const pass = "s3cr3t-Pa55"
	_, srv := startRedis(t, "--requirepass", pass)
	good := fmt.Sprintf("redis://:%s@127.0.0.1:%d/0", pass, srv.Port)
	s := newStore(t, good, Options{KeyPrefix: newPrefix(), Timeout: 300 * time.Millisecond})
	ctx := context.Background()
	if _, err := s.Create(ctx, "alice", task("t1", protocol.StateWorking)); err != nil {
		t.Fatalf("with the right password: %v", err)
	}
	var errs []error
	for _, u := range []string{
		fmt.Sprintf("redis://:%s-wrong@127.0.0.1:%d/0", pass, srv.Port),
		fmt.Sprintf("redis://user:%s@127.0.0.1:%d/0", pass, srv.Port),
		fmt.Sprintf("redis://:%s@127.0.0.1:%d/notadb", pass, srv.Port),
		fmt.Sprintf("redis://:%s@127.0.0.1:bad/0", pass),
		fmt.Sprintf("http://:%s@127.0.0.1:%d/0", pass, srv.Port),
		fmt.Sprintf("redis://:%s@%%zz", pass),
	} {
		_, err := New(Options{URL: u, Timeout: 300 * time.Millisecond})
		if err == nil {
			t.Errorf("New(%s) succeeded", strings.ReplaceAll(u, pass, "…"))
			continue
		}
		errs = append(errs, err)
	}
	srv.Stop()
	_, err := s.Get(ctx, "alice", "t1")
	errs = append(errs, err)
	_, _, err = s.Update(ctx, "t1", 1, task("t1", protocol.StateWorking))
	errs = append(errs, err)
	// A store made while the server is down starts, and fails its
	// operations.
	down, err := New(Options{URL: good, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatalf("New with the server down: %v", err)
	}
	_, err = down.Get(ctx, "alice", "t1")
	errs = append(errs, err)
	down.Close()
	for _, err := range errs {
		if err == nil {
			t.Error("no error")
			continue
		}
		if strings.Contains(err.Error(), pass) || strings.Contains(fmt.Sprintf("%+v %#v", err, err), pass) {
			t.Errorf("error shows the password: %v", err)
		}
	}
}

// A server that stops answering (the process frozen, its socket open) is
// as bounded as one that is gone: each call fails within the timeout.
func TestHungServer(t *testing.T) {
	const timeout = 300 * time.Millisecond
	url, srv := startRedis(t)
	s := newStore(t, url, Options{KeyPrefix: newPrefix(), Timeout: timeout})
	ctx := context.Background()
	v, err := s.Create(ctx, "alice", task("t1", protocol.StateWorking))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = srv.Cmd.Process.Signal(syscall.SIGCONT)
		}
	}
	defer resume()
	for name, fn := range map[string]func() error{
		"Get": func() error { _, err := s.Get(ctx, "alice", "t1"); return err },
		"Update": func() error {
			_, _, err := s.Update(ctx, "t1", v, task("t1", protocol.StateWorking), chunk("b"))
			return err
		},
		"EventsWait": func() error { _, err := s.Events(ctx, "t1", "999999999999999", true); return err },
	} {
		start := time.Now()
		err := fn()
		if took := time.Since(start); err == nil || took > 3*timeout+200*time.Millisecond {
			t.Errorf("%s against a frozen server: %v after %v", name, err, took)
		}
	}
	resume()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := s.Get(ctx, "alice", "t1")
		if err == nil {
			// The frozen server kept its data; the Update may or may not
			// have been applied before its reply was lost.
			if r.Version != v && r.Version != v+1 {
				t.Errorf("version %d after the freeze, want %d or %d", r.Version, v, v+1)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recovery after the freeze: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A store made while its server is down (Caddy starting during a Redis
// outage) fails each operation within the timeout, and works once the
// server is up, with nothing done: the writes, the reads, the waits and
// the cancels, whose subscription connects by itself.
func TestStartsWhileServerDown(t *testing.T) {
	const timeout = 300 * time.Millisecond
	srv := &server{Port: freePort(t)}
	url := fmt.Sprintf("redis://127.0.0.1:%d/0", srv.Port)
	s, err := New(Options{URL: url, KeyPrefix: newPrefix(), Timeout: timeout})
	if err != nil {
		t.Fatalf("New with no server: %v", err)
	}
	defer s.Close()
	ctx := context.Background()
	start := time.Now()
	if _, err := s.Create(ctx, "alice", task("t1", protocol.StateWorking)); err == nil || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("Create with no server: %v", err)
	}
	if took := time.Since(start); took > 3*timeout+200*time.Millisecond {
		t.Fatalf("Create with no server took %v", took)
	}
	srv.Start(t)
	t.Cleanup(srv.Stop)
	v := createOnceUp(t, s, "t1")
	sig := s.CancelSignal(ctx, "t1")
	got := make(chan []store.StoredEvent, 1)
	go func() {
		evs, _ := s.Events(ctx, "t1", "", true) // the log is empty
		got <- evs
	}()
	time.Sleep(50 * time.Millisecond)
	if _, _, err := s.Update(ctx, "t1", v, task("t1", protocol.StateWorking), chunk("b")); err != nil {
		t.Fatal(err)
	}
	select {
	case evs := <-got:
		if len(evs) != 1 {
			t.Fatalf("the wait got %d events, want 1", len(evs))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a wait was not woken by an append")
	}
	if err := s.SignalCancel(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sig:
	case <-time.After(5 * time.Second):
		t.Fatal("the cancel did not arrive")
	}
}

// A Cluster store made while no node answers starts too: its operations
// fail within the timeout, and once the Cluster is up it connects by
// itself and serves writes, waits and cancels.
func TestClusterStartsWhileDown(t *testing.T) {
	const timeout = 300 * time.Millisecond
	ports := [3]int{freePort(t), freePort(t), freePort(t)}
	s, err := New(Options{URL: fmt.Sprintf("redis://127.0.0.1:%d", ports[0]), KeyPrefix: newPrefix(), Cluster: true, Timeout: timeout})
	if err != nil {
		t.Fatalf("New with no Cluster: %v", err)
	}
	defer s.Close()
	ctx := context.Background()
	start := time.Now()
	if _, err := s.Create(ctx, "alice", task("t1", protocol.StateWorking)); err == nil {
		t.Fatal("Create with no Cluster succeeded")
	}
	if took := time.Since(start); took > 3*timeout+200*time.Millisecond {
		t.Fatalf("Create with no Cluster took %v", took)
	}
	redistest.StartClusterOn(t, ports)
	deadline := time.Now().Add(15 * time.Second)
	var v uint64
	for {
		if v, err = s.Create(ctx, "alice", task("t1", protocol.StateWorking)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Cluster client once the Cluster is up: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	sig := s.CancelSignal(ctx, "t1")
	got := make(chan []store.StoredEvent, 1)
	go func() {
		evs, _ := s.Events(ctx, "t1", "", true)
		got <- evs
	}()
	time.Sleep(100 * time.Millisecond)
	if _, _, err := s.Update(ctx, "t1", v, task("t1", protocol.StateWorking), chunk("b")); err != nil {
		t.Fatal(err)
	}
	select {
	case evs := <-got:
		if len(evs) != 1 {
			t.Fatalf("the wait got %d events", len(evs))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a wait was not woken by an append")
	}
	if err := s.SignalCancel(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sig:
	case <-time.After(10 * time.Second):
		t.Fatal("the cancel did not arrive")
	}
}

// Once Redis is back after a restart, no command fails on a connection
// left from before it: the first one that works is the recovery, and
// every later one, made one at a time as on a quiet server, works.
func TestNoFailureAfterARestart(t *testing.T) {
	url, srv := startRedis(t)
	s := newStore(t, url, Options{KeyPrefix: newPrefix(), Timeout: time.Second})
	ctx := context.Background()
	// One command at a time over every connection of the pool.
	for i := range 8 {
		id := fmt.Sprint("a", i)
		v, err := s.Create(ctx, "alice", task(id, protocol.StateWorking))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Update(ctx, id, v, task(id, protocol.StateWorking), chunk("a")); err != nil {
			t.Fatal(err)
		}
	}
	srv.Stop()
	srv.Start(t)
	v := createOnceUp(t, s, "b")
	for i := range 50 {
		var err error
		if v, _, err = s.Update(ctx, "b", v, task("b", protocol.StateWorking), chunk(fmt.Sprint(i))); err != nil {
			t.Fatalf("write %d after the recovery: %v", i, err)
		}
		if _, err := s.Get(ctx, "alice", "b"); err != nil {
			t.Fatalf("read %d after the recovery: %v", i, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// createOnceUp creates alice's working task id as soon as the server
// answers (within 10 s) and returns its version: the first call that
// works after an outage.
func createOnceUp(t *testing.T, s *Store, id string) uint64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, err := s.Create(context.Background(), "alice", task(id, protocol.StateWorking))
		if err == nil {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recovery once the server is up: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

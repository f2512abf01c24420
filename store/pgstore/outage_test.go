package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/internal/pgtest"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// eventually retries op until it succeeds or within passes.
func eventually(t *testing.T, within time.Duration, what string, op func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := op()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after %s: %v", what, within, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The server stops: a blocked wait wakes with an error, every operation
// fails within the timeout (no hang), naming the server without its
// password. It starts again: the store recovers by itself, and a wait
// is woken by another replica's append again (the listener is back).
func TestOutageAndRecovery(t *testing.T) {
	srv := pgtest.Start(t)
	share := newShare()
	const timeout = time.Second
	s := newStore(t, srv.DSN(), Options{Share: share, Timeout: timeout})
	ctx := context.Background()
	v, err := s.Create(ctx, "alice", task("t1", protocol.StateWorking), chunk("a"))
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		_, err := s.Events(ctx, "t1", "1", true)
		waited <- err
	}()
	time.Sleep(50 * time.Millisecond)
	srv.Stop()
	select {
	case err := <-waited:
		if err == nil || !strings.Contains(err.Error(), "pgstore: postgres://postgres:xxxxx@127.0.0.1:") {
			t.Fatalf("the woken wait: %v, want an error naming the server", err)
		}
	case <-time.After(2*timeout + time.Second):
		t.Fatal("a wait was not woken by the outage")
	}
	for name, op := range map[string]func() error{
		"Get": func() error { _, err := s.Get(ctx, "alice", "t1"); return err },
		"Update": func() error {
			_, _, err := s.Update(ctx, "t1", v, task("t1", protocol.StateWorking), chunk("b"))
			return err
		},
		"List":   func() error { _, err := s.List(ctx, "alice", store.ListQuery{}); return err },
		"Cancel": func() error { return s.SignalCancel(ctx, "t1") },
	} {
		start := time.Now()
		err := op()
		took := time.Since(start)
		if err == nil || took > timeout+500*time.Millisecond {
			t.Errorf("%s while down: %v after %s, want an error within %s", name, err, took, timeout)
		}
		if err != nil && strings.Contains(err.Error(), pgtest.Password) {
			t.Errorf("%s's error shows the password: %v", name, err)
		}
	}
	srv.Start(t)
	eventually(t, 10*time.Second, "Get after the restart", func() error { _, err := s.Get(ctx, "alice", "t1"); return err })
	other := newStore(t, srv.DSN(), Options{Share: share})
	eventually(t, 10*time.Second, "a wait woken across replicas after the restart", func() error {
		r, err := s.Get(ctx, "alice", "t1")
		if err != nil {
			return err
		}
		ready, err := s.EventsReady("t1", r.LastEventID)
		if err != nil {
			return err
		}
		if _, _, err := other.Update(ctx, "t1", r.Version, task("t1", protocol.StateWorking), chunk("c")); err != nil {
			return err
		}
		if !closedWithin(ready, time.Second) {
			return errors.New("not woken")
		}
		return nil
	})
}

// A store made while the server is down is made; its operations fail
// until the server is up, then it migrates and works.
func TestStartsWhileServerDown(t *testing.T) {
	srv := pgtest.Start(t)
	srv.Stop()
	start := time.Now()
	s := newStore(t, srv.DSN(), Options{Share: newShare(), Schema: "late", Timeout: time.Second})
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("New took %s with the server down", took)
	}
	ctx := context.Background()
	if _, err := s.Create(ctx, "alice", task("t1", protocol.StateWorking)); err == nil {
		t.Fatal("Create with the server down succeeded")
	}
	srv.Start(t)
	eventually(t, 10*time.Second, "Create once the server is up", func() error {
		_, err := s.Create(ctx, "alice", task("t1", protocol.StateWorking))
		return err
	})
	// The listener connects on its own backoff, and wakes every waiter
	// when it does (what was notified before may be missed): waits
	// taken before that may wake for nothing.
	eventually(t, 10*time.Second, "the listener to listen", func() error {
		if !s.lis.up.Load() {
			return errors.New("not listening")
		}
		return nil
	})
	ready, err := s.EventsReady("t1", "")
	if err != nil {
		t.Fatal(err)
	}
	if closedWithin(ready, 30*time.Millisecond) {
		t.Fatal("ready before any event")
	}
	other := newStore(t, srv.DSN(), Options{Share: s.scope, Schema: "late"})
	if _, _, err := other.Update(ctx, "t1", 1, task("t1", protocol.StateWorking), chunk("x")); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(ready, 5*time.Second) {
		t.Fatal("the listener of a store made while the server was down hears nothing")
	}
}

// A server that accepts connections and never answers: New and every
// operation give up within the timeout.
func TestHungServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	dsn := fmt.Sprintf("postgres://postgres:%s@%s/postgres?sslmode=disable", pgtest.Password, l.Addr())
	const timeout = 500 * time.Millisecond
	start := time.Now()
	s := newStore(t, dsn, Options{Timeout: timeout})
	if took := time.Since(start); took > 2*timeout+500*time.Millisecond {
		t.Errorf("New took %s against a hung server", took)
	}
	start = time.Now()
	_, err = s.Get(context.Background(), "alice", "t1")
	if took := time.Since(start); err == nil || took > 2*timeout+500*time.Millisecond {
		t.Errorf("Get against a hung server: %v after %s", err, took)
	}
	if err != nil && strings.Contains(err.Error(), pgtest.Password) {
		t.Errorf("the error shows the password: %v", err)
	}
	// Operations at once, each of which would migrate first: each fails
	// within its own timeout, none queues behind the others' attempts.
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			start := time.Now()
			_, err := s.Get(context.Background(), "alice", "t1")
			if took := time.Since(start); err == nil || took > 2*timeout {
				t.Errorf("Get %d against a hung server: %v after %s", i, err, took)
			}
		})
	}
	wg.Wait()
}

// Acknowledged writes survive a crash of the server (SIGKILL of the
// postmaster: recovery from the WAL, synchronous_commit on).
func TestCrashLosesNoAcknowledgedTask(t *testing.T) {
	srv := pgtest.Start(t)
	share := newShare()
	s := newStore(t, srv.DSN(), Options{Share: share})
	ctx := ctx5(t)
	const n = 50
	for i := range n {
		id := fmt.Sprint("t", i)
		v, err := s.Create(ctx, "alice", task(id, protocol.StateWorking), chunk("a"))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Update(ctx, id, v, task(id, protocol.StateCompleted), chunk(id)); err != nil {
			t.Fatal(err)
		}
	}
	srv.Kill()
	srv.Start(t)
	after := newStore(t, srv.DSN(), Options{Share: share})
	for i := range n {
		id := fmt.Sprint("t", i)
		r, err := after.Get(context.Background(), "alice", id)
		if err != nil || r.Version != 2 || r.Task.Status.State != protocol.StateCompleted || r.LastEventID != "2" {
			t.Fatalf("%s after the crash: %+v %v", id, r, err)
		}
		evs, err := after.Events(context.Background(), id, "1", false)
		if err != nil || len(evs) != 1 || text(evs[0].Event) != id {
			t.Fatalf("%s's log after the crash: %+v %v", id, evs, err)
		}
	}
}

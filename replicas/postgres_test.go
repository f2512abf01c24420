package replicas

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/internal/pgtest"
)

// What only store postgres has to show: its server restarted, crashed or
// down, under two real Caddy replicas.

// sendWhenBack sends "echo <word>" on url until it is answered (the
// store recovered), for up to 15s.
func sendWhenBack(t *testing.T, url, word string) task {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var res struct {
			Task task `json:"task"`
		}
		e := call(t, url, "alice", "SendMessage", map[string]any{"message": message("echo "+word, "")}, &res)
		if e == nil && res.Task.text() == "echo: "+word {
			return res.Task
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recovery: %+v %+v", res, e)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A PostgreSQL restart, and a crash of it (SIGKILL, recovered from its
// log), lose no task whose id a caller was given: after each, both
// replicas read every task, a task waiting for input continues on the
// other replica, and new sends work, without restarting Caddy.
func TestReplicasPostgresRestartKeepsTasks(t *testing.T) {
	ag := startAgent(t)
	pg := pgtest.Start(t)
	ra := startReplica(t, "A", portA, ag.URL(), pg.DSN(), "timeout 2s")
	rb := startReplica(t, "B", portB, ag.URL(), pg.DSN(), "timeout 2s")
	var kept []task
	for i, how := range []string{"restart", "crash"} {
		kept = append(kept, send(t, ra.URL(), "alice", message("echo kept"+strconv.Itoa(i), ""), false))
		asked := send(t, ra.URL(), "alice", message("ask", ""), false)
		if asked.Status.State != "TASK_STATE_INPUT_REQUIRED" {
			t.Fatalf("ask: %+v", asked)
		}
		if how == "crash" {
			pg.Kill()
		} else {
			pg.Stop()
		}
		pg.Start(t)
		sendWhenBack(t, rb.URL(), "after-"+how)
		for _, tk := range kept {
			for _, r := range []*replica{ra, rb} {
				if got, e := getTask(t, r.URL(), "alice", tk.ID); e != nil || got.Status.State != "TASK_STATE_COMPLETED" || got.text() != tk.text() {
					t.Fatalf("after a PostgreSQL %s, %s reads %+v %+v, want %q", how, r.name, got, e, tk.text())
				}
			}
		}
		next := send(t, rb.URL(), "alice", message("Ada", asked.ID), false)
		if next.Status.State != "TASK_STATE_COMPLETED" || next.text() != "hello Ada" {
			t.Fatalf("the next turn after a PostgreSQL %s: %+v", how, next)
		}
	}
}

// PostgreSQL unreachable: calls answer -32603 within the store's
// timeout, and the replica recovers by itself when it is back.
func TestReplicasPostgresDown(t *testing.T) {
	ag := startAgent(t)
	pg := pgtest.Start(t)
	ra := startReplica(t, "A", portA, ag.URL(), pg.DSN(), "timeout 1s")
	tk := send(t, ra.URL(), "alice", message("echo one", ""), false)
	pg.Stop()
	start := time.Now()
	if _, e := getTask(t, ra.URL(), "alice", tk.ID); e == nil || e.Code != -32603 {
		t.Fatalf("GetTask with PostgreSQL down: %+v", e)
	}
	var res struct {
		Task task `json:"task"`
	}
	if e := call(t, ra.URL(), "alice", "SendMessage", map[string]any{"message": message("echo two", "")}, &res); e == nil || e.Code != -32603 {
		t.Fatalf("SendMessage with PostgreSQL down: %+v %+v", res, e)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Fatalf("the answers took %s", d)
	}
	pg.Start(t)
	sendWhenBack(t, ra.URL(), "three")
	if got, e := getTask(t, ra.URL(), "alice", tk.ID); e != nil || got.text() != "echo: one" {
		t.Fatalf("the task from before the outage: %+v %+v", got, e)
	}
}

// A replica started while PostgreSQL is down starts (the card is
// served), answers its A2A calls -32603, and once PostgreSQL is up makes
// its schema and serves them.
func TestReplicasStartWhilePostgresDown(t *testing.T) {
	ag := startAgent(t)
	pg := pgtest.Start(t)
	pg.Stop()
	ra := startReplica(t, "A", portA, ag.URL(), pg.DSN(), "timeout 1s\n\t\t\tschema fresh")
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(portA) + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the card with PostgreSQL down: %s", resp.Status)
	}
	var res struct {
		Task task `json:"task"`
	}
	if e := call(t, ra.URL(), "alice", "SendMessage", map[string]any{"message": message("echo one", "")}, &res); e == nil || e.Code != -32603 {
		t.Fatalf("SendMessage with PostgreSQL down: %+v %+v", res, e)
	}
	pg.Start(t)
	done := sendWhenBack(t, ra.URL(), "two")
	if tk, e := getTask(t, ra.URL(), "alice", done.ID); e != nil || tk.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("GetTask after the recovery: %+v %+v", tk, e)
	}
}

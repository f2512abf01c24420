package replicas

import (
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/internal/pgtest"
	"github.com/caddy-a2a/caddy-a2a/internal/redistest"
)

// startDurableRedis starts a redis-server that writes every command to
// its append-only file before answering, so that one killed and started
// again (srv.Start) comes back with every task: an outage, not a loss.
func startDurableRedis(t *testing.T) *redistest.Server {
	t.Helper()
	srv := &redistest.Server{Port: freePort(t), Args: []string{"--appendonly", "yes", "--appendfsync", "always",
		"--dir", t.TempDir(), "--appendfilename", "a2a.aof"}}
	srv.Start(t)
	t.Cleanup(srv.Stop)
	return srv
}

// outageServer is a store's server a test stops and starts again with
// its data: redistest's durable Redis, pgtest's PostgreSQL.
type outageServer interface {
	Stop()
	Start(testing.TB)
}

// An outage of the store's server longer than a run's retry budget but
// shorter than the lease: the runs give up their writes, and their tasks
// must not stay working. Their replica stops renewing the leases, so each
// task is recorded failed by an orphan pass within 1.5 leases of the
// server coming back. Over Redis (with every write in its append-only
// file) and over PostgreSQL.
func TestReplicasOutageFailsAbandonedRuns(t *testing.T) {
	for _, st := range []struct {
		name  string
		start func(t *testing.T) (string, outageServer)
	}{
		{"redis", func(t *testing.T) (string, outageServer) {
			srv := startDurableRedis(t)
			return "redis://127.0.0.1:" + strconv.Itoa(srv.Port), srv
		}},
		{"postgres", func(t *testing.T) (string, outageServer) {
			srv := pgtest.Start(t)
			return srv.DSN(), srv
		}},
	} {
		t.Run(st.name, func(t *testing.T) {
			url, srv := st.start(t)
			outageFailsAbandonedRuns(t, url, srv)
		})
	}
}

func outageFailsAbandonedRuns(t *testing.T, url string, srv outageServer) {
	const lease = 10 * time.Second
	ag := startAgent(t)
	ra := startReplica(t, "A", portA, ag.URL(), url, "timeout 500ms\n\t\t\tlease 10s")
	rb := startReplica(t, "B", portB, ag.URL(), url, "timeout 500ms\n\t\t\tlease 10s")
	const n = 4
	var ids []string
	for range n {
		ids = append(ids, send(t, ra.URL(), "alice", message("drip", ""), true).ID)
	}
	for _, id := range ids {
		waitState(t, rb.URL(), "alice", id, "TASK_STATE_WORKING")
	}
	for deadline := time.Now().Add(10 * time.Second); len(ag.Contexts()) < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the agent has %d calls, want %d", len(ag.Contexts()), n)
		}
	}
	srv.Stop()
	down := time.Now()
	for range n {
		ag.next <- struct{}{} // each run's next write fails
	}
	// Each run retries its failed write, gives up and aborts its call.
	for i := range n {
		select {
		case <-ag.aborted:
		case <-time.After(20 * time.Second):
			t.Fatalf("%d of %d runs gave up 20s into the outage", i, n)
		}
	}
	if d := time.Since(down); d >= lease {
		t.Fatalf("the runs gave up %s into the outage, want within the lease (%s)", d, lease)
	}
	srv.Start(t)
	back := time.Now()
	for _, id := range ids {
		for {
			tk, e := getTask(t, rb.URL(), "alice", id)
			if e == nil && tk.Status.State == "TASK_STATE_FAILED" {
				break
			}
			if time.Since(back) > lease*3/2+2*time.Second {
				t.Fatalf("%s after the server came back task %s is %+v %+v, want failed", time.Since(back), id, tk, e)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	t.Logf("every task failed %s after the server came back (outage %s)", time.Since(back), back.Sub(down))
}

// redisConfig sets a setting of the redis-server on port (CONFIG SET).
func redisConfig(t *testing.T, port int, name, value string) {
	t.Helper()
	out, err := exec.Command("redis-cli", "-p", strconv.Itoa(port), "config", "set", name, value).CombinedOutput()
	if err != nil || string(out) != "OK\n" {
		t.Fatalf("redis-cli config set %s %s: %v %s", name, value, err, out)
	}
}

// A replica dies while Redis refuses writes (maxmemory): the other's
// orphan passes cannot record its running task failed, and must not lose
// it. Once Redis takes writes again the task is failed within 1.5 leases.
func TestReplicasOrphanSurvivesMaxmemory(t *testing.T) {
	const lease = time.Second
	ag := startAgent(t)
	port := freePort(t)
	url, _ := startRedisOn(t, port)
	ra := startReplica(t, "A", portA, ag.URL(), url, "lease 1s")
	rb := startReplica(t, "B", portB, ag.URL(), url, "lease 1s")
	tk := send(t, ra.URL(), "alice", message("slow", ""), true)
	waitState(t, rb.URL(), "alice", tk.ID, "TASK_STATE_WORKING")
	for deadline := time.Now().Add(5 * time.Second); len(ag.Contexts()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("A never called the agent")
		}
	}
	redisConfig(t, port, "maxmemory", "1")
	if err := ra.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = ra.cmd.Wait()
	// The lease lapses within a second; B's passes, every half lease,
	// meet a Redis that takes no writes.
	time.Sleep(3 * lease)
	if got, e := getTask(t, rb.URL(), "alice", tk.ID); e != nil || got.Status.State != "TASK_STATE_WORKING" {
		t.Fatalf("with Redis full the task is %+v %+v, want still working", got, e)
	}
	redisConfig(t, port, "maxmemory", "0")
	freed := time.Now()
	for {
		got, e := getTask(t, rb.URL(), "alice", tk.ID)
		if e == nil && got.Status.State == "TASK_STATE_FAILED" {
			break
		}
		if time.Since(freed) > lease*3/2+2*time.Second {
			t.Fatalf("%s after Redis took writes again the task is %+v %+v, want failed", time.Since(freed), got, e)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("the task failed %s after Redis took writes again", time.Since(freed))
}

package replicas

import (
	"strconv"
	"testing"
	"time"

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

// A Redis outage longer than a run's retry budget but shorter than the
// lease: the runs give up their writes, and their tasks must not stay
// working. Their replica stops renewing the leases, so each task is
// recorded failed by an orphan pass within 1.5 leases of Redis coming back.
func TestReplicasOutageFailsAbandonedRuns(t *testing.T) {
	const lease = 10 * time.Second
	ag := startAgent(t)
	srv := startDurableRedis(t)
	url := "redis://127.0.0.1:" + strconv.Itoa(srv.Port)
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
				t.Fatalf("%s after Redis came back task %s is %+v %+v, want failed", time.Since(back), id, tk, e)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	t.Logf("every task failed %s after Redis came back (outage %s)", time.Since(back), back.Sub(down))
}

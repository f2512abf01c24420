package replicas

import (
	"testing"
	"time"
)

// sendIn sends a blocking "echo" in the caller's context cid on url until
// one works (the first after a Redis restart may meet a dropped
// connection) and returns the context id the agent was given for it.
func sendIn(t *testing.T, ag *agent, url, cid string) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		before := len(ag.Contexts())
		msg := message("echo hi", "")
		msg["contextId"] = cid
		var res struct {
			Task task `json:"task"`
		}
		e := call(t, url, "alice", "SendMessage", map[string]any{"message": msg}, &res)
		if e == nil && res.Task.text() == "echo: hi" {
			got := ag.Contexts()
			if len(got) != before+1 {
				t.Fatalf("the agent had %d calls for one send", len(got)-before)
			}
			return got[len(got)-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no send works on %s: %+v %+v", url, res, e)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// After a Redis restart without persistence, a replica that kept the old
// context key and one started since (which made a new key) agree on one:
// one caller context reaches the agent under one id, whichever replica
// takes each send.
func TestReplicasContextKeyAfterRedisRestart(t *testing.T) {
	ag := startAgent(t)
	port := freePort(t)
	url, stop := startRedisOn(t, port)
	ra := startReplica(t, "A", portA, ag.URL(), url, "timeout 1s")
	old := sendIn(t, ag, ra.URL(), "conv")
	stop()
	startRedisOn(t, port)
	rb := startReplica(t, "B", portB, ag.URL(), url, "timeout 1s")
	first := sendIn(t, ag, rb.URL(), "conv")
	for i, r := range []*replica{ra, rb, ra, rb} {
		if got := sendIn(t, ag, r.URL(), "conv"); got != first {
			t.Fatalf("send %d after the restart, on %s: the agent got context %s, want %s (B's first; before the restart %s)", i+1, r.name, got, first, old)
		}
	}
}

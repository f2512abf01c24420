package replicas

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// pushReceiver is a webhook receiver sending each body it accepts on
// got; while up is false (when given) it answers 503 and keeps nothing.
func pushReceiver(t *testing.T, up *atomic.Bool) (got chan string, hook *httptest.Server) {
	got = make(chan string, 100)
	hook = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if up != nil && !up.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		got <- string(b)
	}))
	t.Cleanup(hook.Close)
	return got, hook
}

// pushPair starts an agent, a Redis and replicas A and B with push on
// (receivers on 127.0.0.1 allowed, and the push lines more), their
// store block storeBlock.
func pushPair(t *testing.T, storeBlock, more string) (ag *agent, ra, rb *replica) {
	ag = startAgent(t)
	redis := startRedis(t)
	cfg := func(port int) string {
		return strings.Replace(replicaConfig(port, ag.URL(), redis, storeBlock, "off"), "owner {http.request.header.X-Caller}",
			"owner {http.request.header.X-Caller}\n\t\tpush {\n\t\t\tallow 127.0.0.1\n"+more+"\t\t}", 1)
	}
	return ag, runReplica(t, "A", portA, cfg(portA)), runReplica(t, "B", portB, cfg(portB))
}

// TestReplicasPush: a config set on B for a task running on A gets the
// task's later changes, each exactly once (the replica that records a
// change delivers it), in order; a cancel recorded on B is delivered too.
func TestReplicasPush(t *testing.T) {
	got, hook := pushReceiver(t, nil)
	ag, ra, rb := pushPair(t, "", "")

	tk := send(t, ra.URL(), "alice", message("stream 2", ""), true)
	waitState(t, rb.URL(), "alice", tk.ID, "TASK_STATE_WORKING")
	if e := call(t, rb.URL(), "alice", "CreateTaskPushNotificationConfig", map[string]any{"taskId": tk.ID, "url": hook.URL}, nil); e != nil {
		t.Fatalf("set on B: %+v", e)
	}
	ag.next <- struct{}{}
	ag.next <- struct{}{}
	var bodies []string
	for {
		select {
		case b := <-got:
			bodies = append(bodies, b)
		case <-time.After(10 * time.Second):
			t.Fatalf("deliveries so far: %q", bodies)
		}
		if strings.Contains(bodies[len(bodies)-1], "TASK_STATE_COMPLETED") {
			break
		}
	}
	var text strings.Builder
	seen := map[string]bool{}
	for _, b := range bodies {
		if seen[b] {
			t.Fatalf("delivered twice: %s", b)
		}
		seen[b] = true
		var sr struct {
			ArtifactUpdate *struct {
				TaskID   string `json:"taskId"`
				Artifact struct {
					Parts []struct{ Text string } `json:"parts"`
				} `json:"artifact"`
			} `json:"artifactUpdate"`
		}
		if err := json.Unmarshal([]byte(b), &sr); err != nil {
			t.Fatal(err)
		}
		if sr.ArtifactUpdate != nil {
			for _, p := range sr.ArtifactUpdate.Artifact.Parts {
				text.WriteString(p.Text)
			}
		}
	}
	if text.String() != "c1 c2 " {
		t.Fatalf("the chunks delivered: %q (%q)", text.String(), bodies)
	}
	select {
	case b := <-got:
		t.Fatalf("a delivery after the final one: %s", b)
	case <-time.After(500 * time.Millisecond):
	}

	// A cancel recorded on B, for a task that waits on A: B delivers it.
	tk2 := send(t, ra.URL(), "alice", message("slow", ""), true)
	waitState(t, rb.URL(), "alice", tk2.ID, "TASK_STATE_WORKING")
	if e := call(t, ra.URL(), "alice", "CreateTaskPushNotificationConfig", map[string]any{"taskId": tk2.ID, "url": hook.URL}, nil); e != nil {
		t.Fatalf("set on A: %+v", e)
	}
	if e := call(t, rb.URL(), "alice", "CancelTask", map[string]any{"id": tk2.ID}, nil); e != nil {
		t.Fatalf("cancel on B: %+v", e)
	}
	select {
	case b := <-got:
		if !strings.Contains(b, "TASK_STATE_CANCELED") || !strings.Contains(b, tk2.ID) {
			t.Fatalf("after the cancel: %s", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancel was not delivered")
	}
	select {
	case b := <-got:
		t.Fatalf("a second delivery of the cancel: %s", b)
	case <-time.After(500 * time.Millisecond):
	}
}

// TestReplicasPushHandoff: notifications a replica could not deliver
// before it stopped (its receiver was down) are left in Redis and
// delivered by the other replica once the receiver is back.
func TestReplicasPushHandoff(t *testing.T) {
	var up atomic.Bool
	got, hook := pushReceiver(t, &up)
	_, ra, _ := pushPair(t, "", "\t\t\tmax_attempts 20\n")

	var res struct {
		Task *task `json:"task"`
	}
	if e := call(t, ra.URL(), "alice", "SendMessage", map[string]any{"message": message("echo handed over", ""),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": hook.URL}}}, &res); e != nil || res.Task == nil {
		t.Fatalf("send on A: %+v %+v", res, e)
	}
	time.Sleep(300 * time.Millisecond) // A is retrying its first delivery
	ra.stop(t)
	if !strings.Contains(ra.out.String(), "left for the other replicas") {
		t.Fatalf("A did not hand its notifications over:\n%s", lastLines(ra.out.String(), 20))
	}
	up.Store(true)
	var bodies []string
	for len(bodies) == 0 || !strings.Contains(bodies[len(bodies)-1], "TASK_STATE_COMPLETED") {
		select {
		case b := <-got:
			if !strings.Contains(b, res.Task.ID) {
				t.Fatalf("a delivery of another task: %s", b)
			}
			bodies = append(bodies, b)
		case <-time.After(15 * time.Second):
			t.Fatalf("B delivered %q", bodies)
		}
	}
	if len(bodies) != 4 || !strings.HasPrefix(bodies[0], `{"task":`) {
		t.Fatalf("B delivered %d notifications, want the task's 4 in order: %q", len(bodies), bodies)
	}
}

// TestReplicasPushFailover: a replica killed while running a task with a
// config: the other records the task failed and delivers that change.
func TestReplicasPushFailover(t *testing.T) {
	got, hook := pushReceiver(t, nil)
	ag, ra, _ := pushPair(t, "lease 1s", "")
	var res struct {
		Task *task `json:"task"`
	}
	if e := call(t, ra.URL(), "alice", "SendMessage", map[string]any{"message": message("slow", ""),
		"configuration": map[string]any{"returnImmediately": true, "taskPushNotificationConfig": map[string]any{"url": hook.URL}}}, &res); e != nil || res.Task == nil {
		t.Fatalf("send on A: %+v %+v", res, e)
	}
	for deadline := time.Now().Add(5 * time.Second); len(ag.Contexts()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("A never called the agent")
		}
	}
	if err := ra.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = ra.cmd.Wait()
	for {
		select {
		case b := <-got:
			if strings.Contains(b, "TASK_STATE_FAILED") {
				if !strings.Contains(b, res.Task.ID) {
					t.Fatalf("failed status of another task: %s", b)
				}
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the failed status was not delivered")
		}
	}
}

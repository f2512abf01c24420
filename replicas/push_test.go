package replicas

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestReplicasPush: a config set on B for a task running on A gets the
// task's later changes, each exactly once (the replica that records a
// change delivers it), in order; a cancel recorded on B is delivered too.
func TestReplicasPush(t *testing.T) {
	got := make(chan string, 100)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- string(b)
	}))
	defer hook.Close()
	ag := startAgent(t)
	redis := startRedis(t)
	withPush := func(port int) string {
		return strings.Replace(replicaConfig(port, ag.URL(), redis, "", "off"), "owner {http.request.header.X-Caller}",
			"owner {http.request.header.X-Caller}\n\t\tpush {\n\t\t\tallow 127.0.0.1\n\t\t}", 1)
	}
	ra := runReplica(t, "A", portA, withPush(portA))
	rb := runReplica(t, "B", portB, withPush(portB))

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

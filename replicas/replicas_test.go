package replicas

import (
	"encoding/json"
	"slices"
	"testing"
	"time"
)

// pair starts one agent, one Redis and two replicas A and B on it.
func pair(t *testing.T) (a *agent, ra, rb *replica) {
	t.Helper()
	a = startAgent(t)
	redis := startRedis(t)
	ra = startReplica(t, "A", portA, a.URL(), redis, "")
	rb = startReplica(t, "B", portB, a.URL(), redis, "")
	return a, ra, rb
}

// Any replica sees every task: a non-blocking send on A is read, listed
// and finished on B; the owner scope holds across replicas.
func TestReplicasShareTasks(t *testing.T) {
	ag, ra, rb := pair(t)
	tk := send(t, ra.URL(), "alice", message("stream 2", ""), true)
	if got := waitState(t, rb.URL(), "alice", tk.ID, "TASK_STATE_WORKING"); got.ID != tk.ID {
		t.Fatalf("B reads %+v", got)
	}
	ag.next <- struct{}{}
	ag.next <- struct{}{}
	done := waitState(t, rb.URL(), "alice", tk.ID, "TASK_STATE_COMPLETED")
	if done.text() != "c1 c2 " {
		t.Fatalf("B reads the finished task %+v", done)
	}
	if _, e := getTask(t, rb.URL(), "bob", tk.ID); e == nil || e.Code != -32001 {
		t.Fatalf("bob on B: %+v", e)
	}
	var list struct {
		Tasks []task `json:"tasks"`
	}
	if e := call(t, rb.URL(), "alice", "ListTasks", map[string]any{}, &list); e != nil || len(list.Tasks) != 1 || list.Tasks[0].ID != tk.ID {
		t.Fatalf("B lists %+v %+v", list, e)
	}
}

// CancelTask on B aborts the agent call running on A, and every stream of
// the task, on either replica, gets the canceled status.
func TestReplicasCancel(t *testing.T) {
	ag, ra, rb := pair(t)
	tk := send(t, ra.URL(), "alice", message("slow", ""), true)
	waitState(t, rb.URL(), "alice", tk.ID, "TASK_STATE_WORKING")
	onA, _ := stream(t, ra.URL(), "alice", "SubscribeToTask", map[string]any{"id": tk.ID}, "")
	onB, _ := stream(t, rb.URL(), "alice", "SubscribeToTask", map[string]any{"id": tk.ID}, "")
	for _, s := range []<-chan frame{onA, onB} {
		if f, _ := nextFrame(t, s); describe(t, f) != "task:TASK_STATE_WORKING" {
			t.Fatalf("first frame %s", f.data)
		}
	}
	var canceled task
	if e := call(t, rb.URL(), "alice", "CancelTask", map[string]any{"id": tk.ID}, &canceled); e != nil || canceled.Status.State != "TASK_STATE_CANCELED" {
		t.Fatalf("cancel on B: %+v %+v", canceled, e)
	}
	select {
	case <-ag.aborted:
	case <-time.After(10 * time.Second):
		t.Fatal("the agent call on A was not aborted")
	}
	for name, s := range map[string]<-chan frame{"A": onA, "B": onB} {
		f, ok := nextFrame(t, s)
		if !ok || describe(t, f) != "status:TASK_STATE_CANCELED" {
			t.Fatalf("stream on %s: %q", name, f.data)
		}
	}
}

// A task asking for input on A continues on B; the agent sees one
// context for both turns (the replicas share the context key).
func TestReplicasMultiTurn(t *testing.T) {
	ag, ra, rb := pair(t)
	tk := send(t, ra.URL(), "alice", message("ask", ""), false)
	if tk.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("ask on A: %+v", tk)
	}
	done := send(t, rb.URL(), "alice", message("Ada", tk.ID), false)
	if done.Status.State != "TASK_STATE_COMPLETED" || done.text() != "hello Ada" {
		t.Fatalf("the next turn on B: %+v", done)
	}
	if c := ag.Contexts(); len(c) != 2 || c[0] != c[1] || c[0] == "" {
		t.Fatalf("the agent's contexts %q", c)
	}
}

// A stream opened on A, dropped after 3 chunks, resubscribed on B with
// Last-Event-ID: exactly the remaining events, once each, in order.
func TestReplicasResubscribe(t *testing.T) {
	ag, ra, rb := pair(t)
	for range 3 {
		ag.next <- struct{}{}
	}
	s, drop := stream(t, ra.URL(), "alice", "SendStreamingMessage", map[string]any{"message": message("stream 5", "")}, "")
	first, _ := nextFrame(t, s)
	var head struct {
		Result struct {
			Task task `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(first.data), &head); err != nil || head.Result.Task.ID == "" {
		t.Fatalf("first frame %q: %v", first.data, err)
	}
	last := first
	for describe(t, last) != "artifact:c3 " {
		f, ok := nextFrame(t, s)
		if !ok {
			t.Fatal("the stream on A ended before the third chunk")
		}
		last = f
	}
	drop()
	r, _ := stream(t, rb.URL(), "alice", "SubscribeToTask", map[string]any{"id": head.Result.Task.ID}, last.id)
	ag.next <- struct{}{}
	ag.next <- struct{}{}
	var rest []string
	for {
		f, ok := nextFrame(t, r)
		if !ok {
			break
		}
		rest = append(rest, describe(t, f))
	}
	want := []string{"task:TASK_STATE_WORKING", "artifact:c4 ", "artifact:c5 "}
	if len(rest) < 4 || !slices.Equal(rest[:3], want) || rest[len(rest)-1] != "status:TASK_STATE_COMPLETED" {
		t.Fatalf("resubscribed on B after %s: %q, want %q then the end", last.id, rest, want)
	}
}

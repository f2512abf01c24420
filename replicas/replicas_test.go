package replicas

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/internal/redistest"
)

// pair starts one agent and two replicas A and B on the store at
// storeURL.
func pair(t *testing.T, storeURL string) (a *agent, ra, rb *replica) {
	t.Helper()
	a = startAgent(t)
	ra = startReplica(t, "A", portA, a.URL(), storeURL, "")
	rb = startReplica(t, "B", portB, a.URL(), storeURL, "")
	return a, ra, rb
}

// Any replica sees every task: a non-blocking send on A is read, listed
// and finished on B; the owner scope holds across replicas.
func TestReplicasShareTasks(t *testing.T) {
	eachStore(t, func(t *testing.T, storeURL string) {
		ag, ra, rb := pair(t, storeURL)
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
	})
}

// CancelTask on B aborts the agent call running on A, and every stream of
// the task, on either replica, gets the canceled status.
func TestReplicasCancel(t *testing.T) {
	eachStore(t, func(t *testing.T, storeURL string) {
		ag, ra, rb := pair(t, storeURL)
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
	})
}

// A task asking for input on A continues on B; the agent sees one
// context for both turns (the replicas share the context key).
func TestReplicasMultiTurn(t *testing.T) {
	eachStore(t, func(t *testing.T, storeURL string) {
		ag, ra, rb := pair(t, storeURL)
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
	})
}

// A subscription on B to a task waiting for input on A stays open: the
// Task, then the turn that continues it on A, closed at completed (A2A 1.0
// §3.1.6: a subscription ends at a terminal state only).
func TestReplicasSubscribeInterrupted(t *testing.T) {
	eachStore(t, func(t *testing.T, storeURL string) {
		_, ra, rb := pair(t, storeURL)
		tk := send(t, ra.URL(), "alice", message("ask", ""), false)
		if tk.Status.State != "TASK_STATE_INPUT_REQUIRED" {
			t.Fatalf("ask on A: %+v", tk)
		}
		onB, _ := stream(t, rb.URL(), "alice", "SubscribeToTask", map[string]any{"id": tk.ID}, "")
		if f, _ := nextFrame(t, onB); describe(t, f) != "task:TASK_STATE_INPUT_REQUIRED" {
			t.Fatalf("first frame on B %s", f.data)
		}
		done := send(t, ra.URL(), "alice", message("Ada", tk.ID), false)
		if done.Status.State != "TASK_STATE_COMPLETED" || done.text() != "hello Ada" {
			t.Fatalf("the next turn on A: %+v", done)
		}
		var got []string
		for {
			f, ok := nextFrame(t, onB)
			if !ok {
				break
			}
			got = append(got, describe(t, f))
		}
		if len(got) < 2 || got[0] != "status:TASK_STATE_WORKING" || got[len(got)-1] != "status:TASK_STATE_COMPLETED" {
			t.Fatalf("the subscription on B after the task: %q, want working ... completed, then the end", got)
		}
	})
}

// streamUntil streams alice's "stream 5" at url until the frame that
// describe calls want, then drops the stream: the task's id and that
// frame (its SSE id is where a resume starts).
func streamUntil(t *testing.T, url, want string) (string, frame) {
	t.Helper()
	s, drop := stream(t, url, "alice", "SendStreamingMessage", map[string]any{"message": message("stream 5", "")}, "")
	defer drop()
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
	for describe(t, last) != want {
		f, ok := nextFrame(t, s)
		if !ok {
			t.Fatalf("the stream ended before %s", want)
		}
		last = f
	}
	return head.Result.Task.ID, last
}

// A stream opened on A, dropped after 3 chunks, resubscribed on B with
// Last-Event-ID: exactly the remaining events, once each, in order.
func TestReplicasResubscribe(t *testing.T) {
	eachStore(t, func(t *testing.T, storeURL string) {
		ag, ra, rb := pair(t, storeURL)
		for range 3 {
			ag.next <- struct{}{}
		}
		id, last := streamUntil(t, ra.URL(), "artifact:c3 ")
		r, _ := stream(t, rb.URL(), "alice", "SubscribeToTask", map[string]any{"id": id}, last.id)
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
	})
}

// A resume on B from a Last-Event-ID older than the task's last event
// (chunks went out while no one listened): the task as it is now, then
// only the events after it, so that a client applying the stream in
// order (a Task replaces what it had, a chunk appends) holds each chunk's
// text once.
func TestReplicasResumeAppliesOnce(t *testing.T) {
	eachStore(t, func(t *testing.T, storeURL string) {
		ag, ra, rb := pair(t, storeURL)
		ag.next <- struct{}{}
		id, last := streamUntil(t, ra.URL(), "artifact:c1 ")
		ag.next <- struct{}{}
		ag.next <- struct{}{}
		deadline := time.Now().Add(10 * time.Second)
		for tk, _ := getTask(t, rb.URL(), "alice", id); tk.text() != "c1 c2 c3 "; tk, _ = getTask(t, rb.URL(), "alice", id) {
			if time.Now().After(deadline) {
				t.Fatalf("chunks 2 and 3 never stored: %+v", tk)
			}
			time.Sleep(20 * time.Millisecond)
		}
		r, _ := stream(t, rb.URL(), "alice", "SubscribeToTask", map[string]any{"id": id}, last.id)
		ag.next <- struct{}{}
		ag.next <- struct{}{}
		var text string
		var seen []string
		for {
			f, ok := nextFrame(t, r)
			if !ok {
				break
			}
			var env struct {
				Result struct {
					Task           *task `json:"task"`
					ArtifactUpdate *struct {
						Append   bool `json:"append"`
						Artifact struct {
							Parts []struct{ Text string } `json:"parts"`
						} `json:"artifact"`
					} `json:"artifactUpdate"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(f.data), &env); err != nil {
				t.Fatalf("frame %q: %v", f.data, err)
			}
			switch u := env.Result.ArtifactUpdate; {
			case env.Result.Task != nil:
				text = env.Result.Task.text()
			case u != nil:
				if !u.Append {
					text = ""
				}
				for _, p := range u.Artifact.Parts {
					text += p.Text
				}
			}
			seen = append(seen, describe(t, f))
		}
		if text != "c1 c2 c3 c4 c5 " || seen[0] != "task:TASK_STATE_WORKING" || seen[len(seen)-1] != "status:TASK_STATE_COMPLETED" {
			t.Fatalf("resumed on B after %s: %q applied to %q, want each chunk once", last.id, seen, text)
		}
	})
}

// Two continuations of one input-required task, one on each replica, at
// once: one wins, the other is refused -32004; no update is lost.
func TestReplicasContinuationRace(t *testing.T) {
	eachStore(t, func(t *testing.T, storeURL string) {
		_, ra, rb := pair(t, storeURL)
		for range 5 {
			tk := send(t, ra.URL(), "alice", message("ask", ""), false)
			type result struct {
				task task
				err  *rpcError
			}
			results := make(chan result, 2)
			for _, r := range []*replica{ra, rb} {
				go func() {
					var res struct {
						Task task `json:"task"`
					}
					e := call(t, r.URL(), "alice", "SendMessage", map[string]any{"message": message("Ada", tk.ID)}, &res)
					results <- result{res.Task, e}
				}()
			}
			won, refused := 0, 0
			for range 2 {
				r := <-results
				switch {
				case r.err == nil && r.task.text() == "hello Ada":
					won++
				case r.err != nil && r.err.Code == -32004:
					refused++
				default:
					t.Fatalf("a continuation answered %+v %+v", r.task, r.err)
				}
			}
			if won != 1 || refused != 1 {
				t.Fatalf("%d won, %d refused", won, refused)
			}
		}
	})
}

// Two subscribers, one on each replica, see identical frames (ids and
// bytes) in the same order.
func TestReplicasSubscribersAgree(t *testing.T) {
	eachStore(t, func(t *testing.T, storeURL string) {
		ag, ra, rb := pair(t, storeURL)
		tk := send(t, ra.URL(), "alice", message("stream 4", ""), true)
		waitState(t, rb.URL(), "alice", tk.ID, "TASK_STATE_WORKING")
		onA, _ := stream(t, ra.URL(), "alice", "SubscribeToTask", map[string]any{"id": tk.ID}, "")
		onB, _ := stream(t, rb.URL(), "alice", "SubscribeToTask", map[string]any{"id": tk.ID}, "")
		for range 4 {
			ag.next <- struct{}{}
		}
		read := func(s <-chan frame) []frame {
			var fs []frame
			for {
				f, ok := nextFrame(t, s)
				if !ok {
					return fs
				}
				fs = append(fs, f)
			}
		}
		a, b := read(onA), read(onB)
		// Each answers its own request: the JSON-RPC id is its own.
		for _, fs := range [][]frame{a, b} {
			for i := range fs {
				fs[i].data = rpcID.ReplaceAllString(fs[i].data, `{"jsonrpc":"2.0","id":0,`)
			}
		}
		// The first frame is each subscriber's snapshot; what follows is the
		// log, and must be the same.
		if len(a) < 5 || !slices.Equal(a[1:], b[1:]) {
			t.Fatalf("A saw %d frames, B %d; they differ:\nA %q\nB %q", len(a), len(b), a, b)
		}
		if describe(t, a[len(a)-1]) != "status:TASK_STATE_COMPLETED" {
			t.Fatalf("last frame %s", a[len(a)-1].data)
		}
	})
}

// rpcID is a JSON-RPC response's id member.
var rpcID = regexp.MustCompile(`^\{"jsonrpc":"2.0","id":[0-9]+,`)

// Redis unreachable: calls answer -32603 within the store's timeout, and
// the replica recovers by itself when Redis is back.
func TestReplicasRedisDown(t *testing.T) {
	a := startAgent(t)
	port := freePort(t)
	url, stop := startRedisOn(t, port)
	ra := startReplica(t, "A", portA, a.URL(), url, "timeout 1s")
	tk := send(t, ra.URL(), "alice", message("echo one", ""), false)
	stop()
	start := time.Now()
	if _, e := getTask(t, ra.URL(), "alice", tk.ID); e == nil || e.Code != -32603 {
		t.Fatalf("GetTask with Redis down: %+v", e)
	}
	var res struct {
		Task task `json:"task"`
	}
	if e := call(t, ra.URL(), "alice", "SendMessage", map[string]any{"message": message("echo two", "")}, &res); e == nil || e.Code != -32603 {
		t.Fatalf("SendMessage with Redis down: %+v %+v", res, e)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Fatalf("the answers took %s", d)
	}
	startRedisOn(t, port)
	deadline := time.Now().Add(15 * time.Second)
	for {
		var res struct {
			Task task `json:"task"`
		}
		e := call(t, ra.URL(), "alice", "SendMessage", map[string]any{"message": message("echo three", "")}, &res)
		if e == nil && res.Task.text() == "echo: three" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recovery after Redis came back: %+v %+v", res, e)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A replica started while Redis is down starts (the rest of the site is
// served), answers its A2A calls -32603 until Redis is up, then serves
// them with nothing done: the card meanwhile, a send after.
func TestReplicasStartWhileRedisDown(t *testing.T) {
	a := startAgent(t)
	port := freePort(t)
	url := "redis://127.0.0.1:" + strconv.Itoa(port)
	ra := startReplica(t, "A", portA, a.URL(), url, "timeout 1s")
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(portA) + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the card with Redis down: %s", resp.Status)
	}
	var res struct {
		Task task `json:"task"`
	}
	if e := call(t, ra.URL(), "alice", "SendMessage", map[string]any{"message": message("echo one", "")}, &res); e == nil || e.Code != -32603 {
		t.Fatalf("SendMessage with Redis down: %+v %+v", res, e)
	}
	startRedisOn(t, port)
	deadline := time.Now().Add(15 * time.Second)
	for {
		e := call(t, ra.URL(), "alice", "SendMessage", map[string]any{"message": message("echo two", "")}, &res)
		if e == nil && res.Task.text() == "echo: two" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recovery once Redis is up: %+v %+v", res, e)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if tk, e := getTask(t, ra.URL(), "alice", res.Task.ID); e != nil || tk.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("GetTask after the recovery: %+v %+v", tk, e)
	}
}

// A replica killed while running a task: its lease lapses and the other
// replica records the task failed with the generic message, within about
// 1.5 leases; the run is not executed again.
func TestReplicasFailover(t *testing.T) {
	eachStore(t, func(t *testing.T, storeURL string) {
		ag := startAgent(t)
		ra := startReplica(t, "A", portA, ag.URL(), storeURL, "lease 1s")
		rb := startReplica(t, "B", portB, ag.URL(), storeURL, "lease 1s")
		tk := send(t, ra.URL(), "alice", message("slow", ""), true)
		waitState(t, rb.URL(), "alice", tk.ID, "TASK_STATE_WORKING")
		for deadline := time.Now().Add(5 * time.Second); len(ag.Contexts()) == 0; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("A never called the agent")
			}
		}
		calls := len(ag.Contexts())
		if err := ra.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = ra.cmd.Wait()
		killed := time.Now()
		var got task
		for {
			var e *rpcError
			got, e = getTask(t, rb.URL(), "alice", tk.ID)
			if e == nil && got.Status.State == "TASK_STATE_FAILED" {
				break
			}
			if time.Since(killed) > 6*time.Second {
				t.Fatalf("6s after A died the task is %+v %+v", got, e)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if d := time.Since(killed); d > 3*time.Second {
			t.Errorf("the task was failed %s after A died, want within about 1.5 leases", d)
		}
		var raw struct {
			Status struct {
				Message struct {
					Parts []struct{ Text string } `json:"parts"`
				} `json:"message"`
			} `json:"status"`
		}
		call(t, rb.URL(), "alice", "GetTask", map[string]any{"id": tk.ID}, &raw)
		if len(raw.Status.Message.Parts) != 1 || raw.Status.Message.Parts[0].Text != "The agent could not complete the task." {
			t.Fatalf("status message %+v", raw.Status.Message)
		}
		if n := len(ag.Contexts()); n != calls {
			t.Fatalf("the agent was called again (%d calls, %d before)", n, calls)
		}
		// A task still running on a live replica is left alone.
		tk2 := send(t, rb.URL(), "alice", message("slow", ""), true)
		time.Sleep(2500 * time.Millisecond)
		if got, _ := getTask(t, rb.URL(), "alice", tk2.ID); got.Status.State != "TASK_STATE_WORKING" {
			t.Fatalf("a live replica's running task became %s", got.Status.State)
		}
	})
}

// A config reload with the same store settings keeps every task and the
// run in flight: the task is read, and canceled (the agent call aborted),
// through the reloaded config.
func TestReplicasReload(t *testing.T) {
	ag := startAgent(t)
	redis := startRedis(t)
	admin := freePort(t)
	adminAddr := "127.0.0.1:" + strconv.Itoa(admin)
	cfg := replicaConfig(portA, ag.URL(), redis, "", adminAddr)
	ra := runReplica(t, "A", portA, cfg)
	tk := send(t, ra.URL(), "alice", message("slow", ""), true)
	waitState(t, ra.URL(), "alice", tk.ID, "TASK_STATE_WORKING")
	req, _ := http.NewRequest("POST", "http://"+adminAddr+"/load", strings.NewReader(strings.Replace(cfg, "Replica agent", "Replica agent, reloaded", 1)))
	req.Header.Set("Content-Type", "text/caddyfile")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("reload: %d %s", resp.StatusCode, body)
	}
	settle(t, portA)
	if got := waitState(t, ra.URL(), "alice", tk.ID, "TASK_STATE_WORKING"); got.ID != tk.ID {
		t.Fatalf("after the reload: %+v", got)
	}
	var canceled task
	if e := call(t, ra.URL(), "alice", "CancelTask", map[string]any{"id": tk.ID}, &canceled); e != nil || canceled.Status.State != "TASK_STATE_CANCELED" {
		t.Fatalf("cancel after the reload: %+v %+v", canceled, e)
	}
	select {
	case <-ag.aborted:
	case <-time.After(10 * time.Second):
		t.Fatal("the run started before the reload was not aborted")
	}
}

// settle waits, after a config load, until five fresh connections in a
// row are answered, then drops the client's idle ones: the old server may
// take one more connection as it shuts down and close it unanswered
// (Caddy's, not the module's; the integration package says more).
func settle(t *testing.T, port int) {
	t.Helper()
	probe := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 2 * time.Second}
	deadline := time.Now().Add(5 * time.Second)
	for ok := 0; ok < 5; {
		resp, err := probe.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/.settle-probe")
		if err != nil {
			ok = 0
			if time.Now().After(deadline) {
				t.Fatalf("no answer after the reload: %v", err)
			}
		} else {
			resp.Body.Close()
			ok++
		}
		time.Sleep(10 * time.Millisecond)
	}
	client.CloseIdleConnections()
}

// Two replicas on a real three-shard Redis Cluster (`cluster` in the
// store block): a task made on A is read and continued on B, and a cancel
// on B aborts the agent call running on A.
func TestReplicasCluster(t *testing.T) {
	ag := startAgent(t)
	url := redistest.StartCluster(t)
	ra := startReplica(t, "A", portA, ag.URL(), url, "cluster")
	rb := startReplica(t, "B", portB, ag.URL(), url, "cluster")
	tk := send(t, ra.URL(), "alice", message("ask", ""), false)
	if tk.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("ask on A: %+v", tk)
	}
	if done := send(t, rb.URL(), "alice", message("Ada", tk.ID), false); done.Status.State != "TASK_STATE_COMPLETED" || done.text() != "hello Ada" {
		t.Fatalf("the next turn on B: %+v", done)
	}
	slow := send(t, ra.URL(), "alice", message("slow", ""), true)
	waitState(t, rb.URL(), "alice", slow.ID, "TASK_STATE_WORKING")
	var canceled task
	if e := call(t, rb.URL(), "alice", "CancelTask", map[string]any{"id": slow.ID}, &canceled); e != nil || canceled.Status.State != "TASK_STATE_CANCELED" {
		t.Fatalf("cancel on B: %+v %+v", canceled, e)
	}
	select {
	case <-ag.aborted:
	case <-time.After(10 * time.Second):
		t.Fatal("the agent call on A was not aborted")
	}
}

// A replica may reach Redis over a Unix socket (Redis on its machine)
// while another reaches the same server over TCP: with one key_prefix
// they are one server. A task asking for input on A (socket) continues
// on B (TCP), a cancel on A aborts the agent call running on B, and a
// stream of it on A gets the canceled status.
func TestReplicasUnixSocket(t *testing.T) {
	ag := startAgent(t)
	srv := redistest.StartUnix(t)
	ra := startReplica(t, "A", portA, ag.URL(), srv.UnixURL(), "")
	rb := startReplica(t, "B", portB, ag.URL(), srv.URL(), "")
	tk := send(t, ra.URL(), "alice", message("ask", ""), false)
	if tk.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("ask on A: %+v", tk)
	}
	if done := send(t, rb.URL(), "alice", message("Ada", tk.ID), false); done.Status.State != "TASK_STATE_COMPLETED" || done.text() != "hello Ada" {
		t.Fatalf("the next turn on B: %+v", done)
	}
	slow := send(t, rb.URL(), "alice", message("slow", ""), true)
	waitState(t, ra.URL(), "alice", slow.ID, "TASK_STATE_WORKING")
	onA, _ := stream(t, ra.URL(), "alice", "SubscribeToTask", map[string]any{"id": slow.ID}, "")
	if f, _ := nextFrame(t, onA); describe(t, f) != "task:TASK_STATE_WORKING" {
		t.Fatalf("first frame on A %s", f.data)
	}
	var canceled task
	if e := call(t, ra.URL(), "alice", "CancelTask", map[string]any{"id": slow.ID}, &canceled); e != nil || canceled.Status.State != "TASK_STATE_CANCELED" {
		t.Fatalf("cancel on A: %+v %+v", canceled, e)
	}
	select {
	case <-ag.aborted:
	case <-time.After(10 * time.Second):
		t.Fatal("the agent call on B was not aborted")
	}
	if f, ok := nextFrame(t, onA); !ok || describe(t, f) != "status:TASK_STATE_CANCELED" {
		t.Fatalf("stream on A: %q", f.data)
	}
}

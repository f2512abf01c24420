package replicas

import (
	"bufio"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/internal/redistest"
)

// redisClients is how many connections the redis-server at url has.
func redisClients(t *testing.T, url string) int {
	t.Helper()
	port, _ := strconv.Atoi(url[strings.LastIndexByte(url, ':')+1:])
	return redistest.Clients(t, port)
}

// 10,000 idle streams on one replica hold no Redis connection of their
// own: the replica has as many connections to Redis with 10,000 streams
// open as with 100, and a cancel of each task reaches every one of its
// streams through the replica's one subscriber. The streams come over
// h2c (servers { protocols h1 h2c }), as a caller holding many would.
func TestReplicasIdleStreamsShareConnections(t *testing.T) {
	const tasks, perTask = 100, 100
	ag := startAgent(t)
	redisURL := startRedis(t)
	cfg := strings.Replace(replicaConfig(portA, ag.URL(), redisURL, "", "off"),
		"persist_config off", "persist_config off\n\tservers {\n\t\tprotocols h1 h2c\n\t}", 1)
	ra := runReplica(t, "A", portA, cfg)
	// One caller per task: a caller's running tasks are bounded (32).
	ids := make([]string, tasks)
	for i := range ids {
		ids[i] = send(t, ra.URL(), fmt.Sprint("u", i), message("slow", ""), true).ID
	}
	for i, id := range ids {
		waitState(t, ra.URL(), fmt.Sprint("u", i), id, "TASK_STATE_WORKING")
	}
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: &http.Transport{Protocols: &protocols}}
	t.Cleanup(client.CloseIdleConnections)

	var opened, canceled atomic.Int64
	var failures sync.Map
	var wg sync.WaitGroup
	open := func(task int) {
		defer wg.Done()
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":%q}}`, ids[task])
		req, _ := http.NewRequest("POST", ra.URL(), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("X-Caller", fmt.Sprint("u", task))
		resp, err := client.Do(req)
		if err != nil {
			failures.Store(task, err.Error())
			return
		}
		defer resp.Body.Close()
		if resp.ProtoMajor != 2 {
			failures.Store(task, "not HTTP/2: "+resp.Proto)
			return
		}
		sc := bufio.NewScanner(resp.Body)
		first := true
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "data: ") {
				continue
			}
			if first {
				first = false
				opened.Add(1)
				continue
			}
			if strings.Contains(line, "TASK_STATE_CANCELED") {
				canceled.Add(1)
				return
			}
		}
		failures.Store(task, "the stream ended without the canceled status")
	}
	waitOpened := func(n int64) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for opened.Load() < n {
			if time.Now().After(deadline) {
				failures.Range(func(k, v any) bool { t.Errorf("stream of task %v: %v", k, v); return false })
				t.Fatalf("%d of %d streams open", opened.Load(), n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// One stream per task first, then the rest.
	for i := range tasks {
		wg.Add(1)
		go open(i)
	}
	waitOpened(tasks)
	withFew := redisClients(t, redisURL)
	for range perTask - 1 {
		for i := range tasks {
			wg.Add(1)
			go open(i)
		}
	}
	waitOpened(tasks * perTask)
	time.Sleep(200 * time.Millisecond) // any connection the streams made would be up by now
	withMany := redisClients(t, redisURL)
	if withMany != withFew {
		t.Fatalf("Redis connections: %d with %d streams open, %d with %d", withMany, tasks*perTask, withFew, tasks)
	}
	t.Logf("%d streams open on one replica; Redis has %d connections (the replica's and this test's), as with %d", tasks*perTask, withMany, tasks)
	for i, id := range ids {
		var c task
		if e := call(t, ra.URL(), fmt.Sprint("u", i), "CancelTask", map[string]any{"id": id}, &c); e != nil {
			t.Fatalf("CancelTask: %+v", e)
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("%d of %d streams got the canceled status", canceled.Load(), tasks*perTask)
	}
	failures.Range(func(k, v any) bool { t.Errorf("stream of task %v: %v", k, v); return true })
	if n := canceled.Load(); n != tasks*perTask {
		t.Fatalf("%d of %d streams got the canceled status", n, tasks*perTask)
	}
}

// commandCounts is the server's calls per command (INFO commandstats).
func commandCounts(t *testing.T, port int) map[string]int {
	t.Helper()
	out, err := exec.Command("redis-cli", "-p", strconv.Itoa(port), "info", "commandstats").Output()
	if err != nil {
		t.Fatalf("redis-cli info commandstats: %v", err)
	}
	counts := map[string]int{}
	for _, line := range strings.Split(string(out), "\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":calls=")
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
		counts[name] = n
	}
	return counts
}

// An idle replica, with a stream open and a task waiting for input, sends
// Redis nothing but its client's keep-alive PINGs and one orphan check
// every half lease: nothing polls tasks or logs. A blocking send then
// costs two scripts (and inside them nothing but the commands of a write).
func TestReplicasIdleSendsNothing(t *testing.T) {
	ag := startAgent(t)
	port := freePort(t)
	url, _ := startRedisOn(t, port)
	ra := startReplica(t, "A", portA, ag.URL(), url, "lease 4s")
	tk := send(t, ra.URL(), "alice", message("ask", ""), false)
	if tk.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("ask: %+v", tk)
	}
	slow := send(t, ra.URL(), "bob", message("slow", ""), true)
	waitState(t, ra.URL(), "bob", slow.ID, "TASK_STATE_WORKING")
	frames, _ := stream(t, ra.URL(), "bob", "SubscribeToTask", map[string]any{"id": slow.ID}, "")
	if f, _ := nextFrame(t, frames); describe(t, f) != "task:TASK_STATE_WORKING" {
		t.Fatalf("first frame %s", f.data)
	}
	before := commandCounts(t, port)
	time.Sleep(4 * time.Second)
	after := commandCounts(t, port)
	for name, n := range after {
		d := n - before[name]
		switch name {
		case "ping", "info":
		case "hello", "client":
			// A connection the client opens late (its pub/sub one, after
			// the subscription above) says HELLO once: a handshake, not a
			// poll. More would be a reconnect loop.
			if d > 1 {
				t.Errorf("%d × %s while idle: reconnecting", d, name)
			}
		case "zrangebyscore", "evalsha": // the orphan check, a script, every 2 s
			if d > 3 {
				t.Errorf("%d × %s in 4 s (lease 4s: one orphan check every 2 s)", d, name)
			}
		case "eval", "hmget", "zrem": // the check's first run loads its script; what it reads and drops
			if d > 3 {
				t.Errorf("%d × %s in 4 s", d, name)
			}
		case "zadd", "zmscore": // the running task's lease renewal, every 4/3 s
			if d > 4 {
				t.Errorf("%d %s in 4 s", d, name)
			}
		default:
			if d > 0 {
				t.Errorf("%d × %s while idle", d, name)
			}
		}
	}
	before = commandCounts(t, port)
	if done := send(t, ra.URL(), "carol", message("echo x", ""), false); done.text() != "echo: x" {
		t.Fatalf("send: %+v", done)
	}
	after = commandCounts(t, port)
	// An orphan check (a script too, every 2 s) may run meanwhile.
	scripts := after["evalsha"] + after["eval"] - before["evalsha"] - before["eval"]
	if scripts != 2 && scripts != 3 {
		t.Errorf("a blocking send ran %d scripts, want 2 (3 with an orphan check)", scripts)
	}
	for name, n := range after {
		d := n - before[name]
		switch {
		case name == "hello" || name == "client":
			// The client dials its pipelines when it first needs them:
			// the send may be the first to take one (a handshake, once).
			if d > 1 {
				t.Errorf("a blocking send ran %d × %s: reconnecting", d, name)
			}
		// get: the write that starts a turn checks the context key in its
		// script (a Redis that lost the key gets it back), and the send's
		// claim (exactly-once sends); set: it makes the claim, in the same
		// script.
		case d > 0 && !strings.Contains(" evalsha eval info ping zrangebyscore zadd zmscore zcard xadd hset hmget exists zrem publish pexpire time get set ", " "+name+" "):
			t.Errorf("a blocking send ran %d × %s", d, name)
		}
	}
}

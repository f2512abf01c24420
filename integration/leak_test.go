package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Caddy's own goroutines (admin server, listeners, timers) make a
// whole-process leak checker such as goleak unusable here. These checks
// look only at goroutines running this module's stream, reply and run code,
// which must all be gone once clients are closed and runs have ended.

// Frames of goroutines that serve one stream or one message reply: gone
// as soon as the stream's client or config is.
var streamFrames = []string{
	"caddy-a2a/binding/jsonrpc.Stream.Serve",
	"caddy-a2a/handler.(*Service).pump",
	"caddy-a2a/handler.(*Service).waitEvents",
	"caddy-a2a/handler.(*Service).streamReply",
	"caddy-a2a/handler.(*Service).runReply",
	"caddy-a2a/handler.(*Stream).Serve",
}

// Frames of a task run: gone once the run ended.
var runFrames = []string{
	"caddy-a2a/handler.(*run).execute",
	"caddy-a2a/handler.(*Runner).work", // an idle worker is skipped
}

// moduleFrames is any code of the bindings, the service and the upstream
// packages (every upstream kind lives below upstream/, in a package of its
// own): nothing may be running there once every client and run is done.
var moduleFrames = []string{"caddy-a2a/binding/", "caddy-a2a/handler.", "caddy-a2a/upstream.", "caddy-a2a/upstream/"}

// goroutinesIn returns the stacks of the goroutines with a frame (or a
// "created by" line) containing one of frames.
func goroutinesIn(frames []string) []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if idleWorker(g) {
			continue
		}
		for _, f := range frames {
			if strings.Contains(g, f) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// idleWorker reports whether stack g is a runner worker waiting for its
// next run: the runner keeps a worker for a while after its run ended, so
// that the next run needs no new goroutine (and it ends with the runner).
// A worker still running something has module frames above this one.
func idleWorker(g string) bool {
	for _, line := range strings.Split(g, "\n")[1:] {
		if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "runtime.") {
			continue
		}
		return strings.Contains(line, "caddy-a2a/handler.(*Runner).work(")
	}
	return false
}

// waitNoGoroutines polls (goroutines take a moment to exit) until no
// goroutine is in frames, and fails with their stacks after 5s.
func waitNoGoroutines(t *testing.T, what string, frames []string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := goroutinesIn(frames)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d goroutines left:\n\n%s", what, len(left), strings.Join(left, "\n\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// wantGoroutines asserts some goroutine is in frames: the positive
// control that shows the stack matching sees what it looks for.
func wantGoroutines(t *testing.T, what string, frames []string) {
	t.Helper()
	if len(goroutinesIn(frames)) == 0 {
		t.Fatalf("%s: no goroutine in %v, yet one must be running", what, frames)
	}
}

// openingTaskID reads a stream's first frame, the Task, and returns its id.
func openingTaskID(t *testing.T, s *sseStream) string {
	t.Helper()
	f, _ := s.next(t)
	var opening struct {
		Result struct {
			Task wireTask `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal(f.Data, &opening); err != nil || opening.Result.Task.ID == "" {
		t.Fatalf("first frame: %s", f.Data)
	}
	return opening.Result.Task.ID
}

// leakCfg is a task mount in front of {{.Agent}} and a message-reply mount
// on /reply in front of {{.Reply}}; {{.Desc}} changes to make a reload.
const leakCfg = `
http://:9080 {
	a2a {
		upstream {{.Agent}}
		name "Leak check"
		description "{{.Desc}}"
		skill echo {
			name "Echo"
			description "Echoes."
			tags test
		}
	}
	a2a {
		upstream {{.Reply}}
		rpc_path /reply
		card_path /reply/.well-known/agent-card.json
		reply message` + skillBlock + `
	}
}
`

// TestNoLeakAbortedClients: clients that hang up mid-stream (a send's
// stream, a subscriber, a streamed message reply) leave no stream
// goroutine behind while the task run goes on; once it ends, nothing of
// the module runs.
func TestNoLeakAbortedClients(t *testing.T) {
	gate := make(chan struct{})
	a, reply := streamAgent(t, gate), slowAgent(t)
	load(t, leakCfg, map[string]any{"Agent": a.URL(), "Reply": reply.URL(), "Desc": "clients"})
	url := base + "/a2a"

	own := openStream(t, url, "1.0", "SendStreamingMessage", map[string]any{"message": msg10("go", "", "")})
	id := openingTaskID(t, own)
	readUntil(t, own, "artifact:chunk one, ")
	sub := openStream(t, url, "", "tasks/resubscribe", map[string]any{"id": id})
	readUntil(t, sub, "task:working")
	msg := openStream(t, base+"/reply", "1.0", "SendStreamingMessage", map[string]any{"message": msg10("wait", "", "")})
	reply.next(t)

	wantGoroutines(t, "streams open", streamFrames)
	own.close()
	sub.close()
	msg.close()
	select {
	case <-reply.aborted:
	case <-timeout():
		t.Fatal("the hung-up message reply did not abort its agent call")
	}
	waitNoGoroutines(t, "after the clients hung up", streamFrames)
	// The task's run is still held by the agent: it must go on.
	wantGoroutines(t, "run held by the agent", runFrames)

	close(gate)
	if got := waitState(t, url, id, "TASK_STATE_COMPLETED"); got.text() != "chunk one, chunk two" {
		t.Errorf("task text %q", got.text())
	}
	waitNoGoroutines(t, "after the run ended", moduleFrames)
}

// TestNoLeakAbortedUpstreams: agents that drop the connection mid-stream
// or hang past the upstream timeout fail their tasks (streams and a
// message reply see the end) and leave nothing of the module running.
func TestNoLeakAbortedUpstreams(t *testing.T) {
	// The task agent fails only once the test has its subscriber attached
	// (release): a subscribe that came after the failure would rightly get
	// -32004 for a terminal task. Message replies have no subscriber and go
	// straight on.
	release := make(chan struct{}, 1)
	a := newAgent(t, func(w http.ResponseWriter, r *http.Request, c agentCall) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		io.WriteString(w, `{"text":"partial"}`+"\n")
		w.(http.Flusher).Flush()
		if r.URL.Query().Get("reply") == "" {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		if c.inputText() == "hang" {
			<-r.Context().Done()
			return
		}
		panic(http.ErrAbortHandler)
	})
	load(t, `
http://:9080 {
	a2a {
		upstream {{.Agent}} {
			timeout 1s
		}`+skillBlock+`
	}
	a2a {
		upstream {{.Agent}}?reply=1 {
			timeout 300ms
		}
		rpc_path /reply
		card_path /reply/.well-known/agent-card.json
		reply message`+skillBlock+`
	}
}
`, map[string]any{"Agent": a.URL()})
	url := base + "/a2a"

	for _, input := range []string{"drop", "hang"} {
		own := openStream(t, url, "1.0", "SendStreamingMessage", map[string]any{"message": msg10(input, "", "")})
		id := openingTaskID(t, own)
		sub := openStream(t, url, "1.0", "SubscribeToTask", map[string]any{"id": id})
		if f, _ := sub.next(t); !strings.HasPrefix(describe(t, f), "task:") {
			t.Fatalf("subscribe opened with %s", f.Data)
		}
		release <- struct{}{}
		readUntil(t, own, "status:TASK_STATE_FAILED")
		readUntil(t, sub, "status:TASK_STATE_FAILED")
		own.ended(t)
		sub.ended(t)

		s := openStream(t, base+"/reply", "1.0", "SendStreamingMessage", map[string]any{"message": msg10(input, "", "")})
		if f, _ := s.next(t); describe(t, f) != "error:-32603" {
			t.Errorf("message reply from a failing agent: %s", f.Data)
		}
		s.ended(t)
	}
	waitNoGoroutines(t, "after failed upstreams", moduleFrames)
}

// TestNoLeakReload: a reload ends the open streams of the old config
// (their goroutines go) while the task run goes on, and a message reply in
// flight finishes on the old server; afterwards nothing of the module
// runs.
func TestNoLeakReload(t *testing.T) {
	gate := make(chan struct{})
	a, reply := streamAgent(t, gate), slowAgent(t)
	data := map[string]any{"Agent": a.URL(), "Reply": reply.URL(), "Desc": "before"}
	load(t, leakCfg, data)
	url := base + "/a2a"

	own := openStream(t, url, "1.0", "SendStreamingMessage", map[string]any{"message": msg10("go", "", "")})
	id := openingTaskID(t, own)
	readUntil(t, own, "artifact:chunk one, ")
	sub := openStream(t, url, "1.0", "SubscribeToTask", map[string]any{"id": id})
	readUntil(t, sub, "task:TASK_STATE_WORKING")
	msg := openStream(t, base+"/reply", "1.0", "SendStreamingMessage", map[string]any{"message": msg10("across", "", "")})
	reply.next(t)

	data["Desc"] = "after"
	load(t, leakCfg, data)
	for _, s := range []*sseStream{own, sub} {
		for {
			f, ok := s.next(t)
			if !ok {
				break
			}
			if d := describe(t, f); d != "status:TASK_STATE_WORKING" {
				t.Fatalf("old stream got %q after the reload", d)
			}
		}
	}
	// The reply in flight is the only stream goroutine left: it finishes
	// on the old server with its answer.
	close(reply.release)
	f, _ := msg.next(t)
	var m struct {
		Result struct {
			Message *wireMessage `json:"message"`
		} `json:"result"`
	}
	if err := json.Unmarshal(f.Data, &m); err != nil || m.Result.Message == nil || len(m.Result.Message.Parts) != 1 ||
		m.Result.Message.Parts[0].Text != "finally done" {
		t.Fatalf("reply across the reload: %s", f.Data)
	}
	msg.ended(t)
	waitNoGoroutines(t, "after the reload ended the streams", streamFrames)
	wantGoroutines(t, "run across the reload", runFrames)

	close(gate)
	waitState(t, url, id, "TASK_STATE_COMPLETED")
	waitNoGoroutines(t, "after the run ended", moduleFrames)
}

// stalledClient sends one JSON-RPC request to path over a raw connection
// with a small receive buffer and never reads the answer: the server's
// writes stall once a few KB are in flight.
func stalledClient(t *testing.T, path, body string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		}); err != nil {
			return err
		}
		return serr
	}}
	c, err := d.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: %d\r\n\r\n%s",
		path, len(body), body)
	return c
}

// blockedInWrite reports whether a stream goroutine is parked in a
// connection write.
func blockedInWrite() bool {
	for _, g := range goroutinesIn([]string{"caddy-a2a/binding/httpbind.(*SSE)"}) {
		if strings.Contains(g, "waitWrite") {
			return true
		}
	}
	return false
}

// TestNoLeakStalledClientReload: a client that stops reading leaves its
// stream blocked in a write; a reload cuts it at once (long before the
// write timeout) and its goroutine goes, while the run goes on and ends.
func TestNoLeakStalledClientReload(t *testing.T) {
	gate, stop := make(chan struct{}), make(chan struct{})
	big := `{"text":"` + strings.Repeat("x", 256<<10) + `"}` + "\n"
	a := newAgent(t, func(w http.ResponseWriter, r *http.Request, _ agentCall) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		for range 32 { // 8 MiB of chunks, far more than the connection holds
			io.WriteString(w, big)
			w.(http.Flusher).Flush()
		}
		select {
		case <-gate:
		case <-stop:
			return
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, `{"text":"end"}`+"\n")
	})
	// Runs before the agent server's Close, which waits for held calls.
	t.Cleanup(func() { close(stop) })
	data := map[string]any{"Agent": a.URL(), "Reply": a.URL(), "Desc": "before"}
	load(t, leakCfg, data)

	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
		"params": map[string]any{"message": msg10("stall", "", "")}})
	stalledClient(t, "/a2a", string(body))
	a.next(t)
	deadline := time.Now().Add(5 * time.Second)
	for !blockedInWrite() {
		if time.Now().After(deadline) {
			t.Fatal("the stream never blocked in a write")
		}
		time.Sleep(10 * time.Millisecond)
	}

	data["Desc"] = "after"
	load(t, leakCfg, data)
	waitNoGoroutines(t, "after the reload", streamFrames)
	wantGoroutines(t, "run across the reload", runFrames)

	close(gate)
	waitNoGoroutines(t, "after the run ended", moduleFrames)
}

package jsonrpc

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// deadlineConn is a server connection that records its write deadlines.
type deadlineConn struct {
	net.Conn
	mu   sync.Mutex
	last time.Time
	sets int
	// atStart holds the write deadline each request found at its start.
	atStart []time.Time
}

// connKey is the request context key of the request's deadlineConn.
type connKey struct{}

func (c *deadlineConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.last, c.sets = t, c.sets+1
	c.mu.Unlock()
	return c.Conn.SetWriteDeadline(t)
}

// deadline returns the last write deadline set and how many were set.
func (c *deadlineConn) deadline() (time.Time, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last, c.sets
}

// smallListener gives every connection a small kernel send buffer, so a
// client that stops reading stalls the server's writes after a few KB,
// and hands each connection to the test.
type smallListener struct {
	net.Listener
	conns chan *deadlineConn
}

func (l smallListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	dc := &deadlineConn{Conn: c}
	select {
	case l.conns <- dc:
	default:
	}
	return dc, nil
}

// stallServer serves ep on a smallListener; served gets a value each time
// a request's Serve returns (for a stream: its goroutine is done).
type stallServer struct {
	srv    *httptest.Server
	served chan struct{}
	conns  chan *deadlineConn
}

func newStallServer(t *testing.T, ep *Binding) *stallServer {
	t.Helper()
	s := &stallServer{served: make(chan struct{}, 16), conns: make(chan *deadlineConn, 16)}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, ok := r.Context().Value(connKey{}).(*deadlineConn); ok {
			c.mu.Lock()
			c.atStart = append(c.atStart, c.last)
			c.mu.Unlock()
		}
		body, _ := io.ReadAll(r.Body)
		ep.Serve(w, r, body, handler.Caller{Owner: r.Header.Get(ownerHeader)})
		s.served <- struct{}{}
	}))
	s.srv.Listener = smallListener{Listener: s.srv.Listener, conns: s.conns}
	s.srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, c)
	}
	s.srv.Start()
	t.Cleanup(func() {
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
	return s
}

// waitServed waits for one request's Serve to return.
func (s *stallServer) waitServed(t *testing.T, what string) {
	t.Helper()
	select {
	case <-s.served:
	case <-time.After(waitTimeout):
		t.Fatalf("%s: the stream's goroutine did not end", what)
	}
}

// rawClient sends one JSON-RPC request over a raw connection with a
// small receive buffer: a client that does not read stalls the server.
func (s *stallServer) rawClient(t *testing.T, body string) net.Conn {
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
	c, err := d.Dial("tcp", s.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	writeRequest(c, body)
	return c
}

// writeRequest writes one JSON-RPC request of alice to c.
func writeRequest(c net.Conn, body string) {
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: a2a\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\n%s: alice\r\nContent-Length: %d\r\n\r\n%s",
		ownerHeader, len(body), body)
}

// stallStream starts a task, subscribes to it from a client that never
// reads, and feeds the run far more than the connection buffers hold: the
// stream's goroutine is left blocked in a write (or ended by its
// deadline). The run is returned still working.
func stallStream(t *testing.T, h *harness, agent *fakeAgent, s *stallServer) *fakeRun {
	t.Helper()
	id, run := startTask(t, h, agent)
	s.rawClient(t, rpcCall("SubscribeToTask", `{"id":"`+id+`"}`))
	big := strings.Repeat("x", 64<<10)
	for range 32 { // 2 MiB of frames against a few KB of buffers
		run.Send(t, text(big))
	}
	return run
}

// blockedInWrite reports whether a stream goroutine is parked in a
// connection write.
func blockedInWrite() bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "httpbind.(*SSE)") && strings.Contains(g, "waitWrite") {
			return true
		}
	}
	return false
}

// TestStreamWriteTimeout: a client that stops reading loses its stream
// once a frame write outlasts WriteTimeout; the run goes on.
func TestStreamWriteTimeout(t *testing.T) {
	agent := controlledAgent()
	h := newHarness(t, agent, func(o *handler.Options) { o.WriteTimeout = 200 * time.Millisecond })
	s := newStallServer(t, h.ep)
	run := stallStream(t, h, agent, s)
	s.waitServed(t, "client not reading")

	run.Send(t, text("after"))
	close(run.Steps)
	waitFor(t, "task completed", func() bool {
		rec, err := h.store.Get(context.Background(), "alice", run.Req.TaskID)
		return err == nil && rec.Task.Status.State == protocol.StateCompleted
	})
}

// TestStreamUnloadCutsBlockedWrite: an unload ends a stream blocked in a
// write at once, long before its write timeout.
func TestStreamUnloadCutsBlockedWrite(t *testing.T) {
	agent := controlledAgent()
	h := newHarness(t, agent, func(o *handler.Options) { o.WriteTimeout = time.Hour })
	s := newStallServer(t, h.ep)
	run := stallStream(t, h, agent, s)
	waitFor(t, "the stream blocked in a write", blockedInWrite)
	h.closeDone()
	s.waitServed(t, "unload while blocked in a write")
	close(run.Steps)
}

// TestStreamIdleHoldsNoDeadline: a stream waiting for events (after a
// frame, after a heartbeat) leaves its connection without a write
// deadline, so an old one cannot cut it (an expired HTTP/2 deadline resets
// the stream even when nothing is written).
func TestStreamIdleHoldsNoDeadline(t *testing.T) {
	agent := controlledAgent()
	h := newHarness(t, agent, func(o *handler.Options) { o.WriteTimeout = time.Hour; o.Heartbeat = 20 * time.Millisecond })
	s := newStallServer(t, h.ep)
	id, run := startTask(t, h, agent)
	c := s.rawClient(t, rpcCall("SubscribeToTask", `{"id":"`+id+`"}`))
	conn := <-s.conns
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	sr := newSSEReader(t, resp)
	sr.event(t) // the Task
	idle := func(what string) {
		waitFor(t, what, func() bool {
			last, sets := conn.deadline()
			return sets > 0 && last.IsZero()
		})
	}
	idle("no deadline after the Task frame")
	if f, err := sr.next(); err != nil || f.comment == "" {
		t.Fatalf("want a heartbeat, got %+v %v", f, err)
	}
	idle("no deadline after a heartbeat")
	close(run.Steps)
	sr.rest(t)
	s.waitServed(t, "completed")
}

// TestStreamWriteDeadlineDoesNotLeak: whichever way an answer ends (an
// error frame, the last status, an unload while idle), the next request on
// the kept-alive connection starts without a write deadline, which would
// cut an unrelated answer.
func TestStreamWriteDeadlineDoesNotLeak(t *testing.T) {
	agent := controlledAgent()
	h := newHarness(t, agent, func(o *handler.Options) { o.WriteTimeout = time.Hour })
	s := newStallServer(t, h.ep)
	id, run := startTask(t, h, agent)

	cases := []struct {
		name string
		body string
		// end makes the server end the stream that sr reads (nil: it ends
		// by itself).
		end func(t *testing.T, sr *sseReader)
	}{
		{"an error frame", rpcCall("tasks/resubscribe", `{}`), nil},
		{"the last status", rpcCall("SubscribeToTask", `{"id":"`+id+`"}`), func(t *testing.T, sr *sseReader) {
			sr.event(t) // the Task
			run.Send(t, text("done"))
			close(run.Steps)
		}},
		{"an unload while idle", sendV10("SendStreamingMessage", "m-2", "", ""), func(t *testing.T, sr *sseReader) {
			sr.event(t) // the Task
			agent.Next(t)
			h.closeDone()
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := s.rawClient(t, tc.body)
			conn := <-s.conns
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			sr := newSSEReader(t, resp)
			if tc.end != nil {
				tc.end(t, sr)
			}
			sr.rest(t) // fails unless the answer ends cleanly
			s.waitServed(t, tc.name)
			if _, sets := conn.deadline(); sets == 0 {
				t.Fatal("the stream set no write deadline")
			}

			writeRequest(c, rpcCall("GetTask", `{"id":"nope"}`))
			next, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("the next request on the connection: %v", err)
			}
			io.Copy(io.Discard, next.Body)
			next.Body.Close()
			s.waitServed(t, "next request")
			conn.mu.Lock()
			defer conn.mu.Unlock()
			if len(conn.atStart) != 2 || !conn.atStart[1].IsZero() {
				t.Fatalf("deadlines at the start of each request %v; want the second one none", conn.atStart)
			}
		})
	}
}

func TestWriteTimeoutOptionChecked(t *testing.T) {
	r := handler.NewRunner(nil)
	defer r.Close()
	_, err := handler.New(handler.Options{Store: newHarnessStore(t), Agent: scriptAgent(), Runner: r, WriteTimeout: -time.Second})
	if err == nil || !strings.Contains(err.Error(), "WriteTimeout") {
		t.Fatalf("negative WriteTimeout: %v", err)
	}
}

// TestStreamBurstSetsFewDeadlines: events at hand are written as one burst
// with one write deadline (and one flush), not one per event. The burst:
// the subscription's Task frame (300 KB of artifact) blocks its write on a
// client that does not read yet, and 300 more chunks are stored meanwhile;
// once the client reads, the stream finds all of them at hand at once.
func TestStreamBurstSetsFewDeadlines(t *testing.T) {
	agent := controlledAgent()
	h := newHarness(t, agent, func(o *handler.Options) { o.WriteTimeout = time.Hour })
	s := newStallServer(t, h.ep)
	id, run := startTask(t, h, agent)
	kb := strings.Repeat("x", 1<<10)
	for range 300 {
		run.Send(t, text(kb))
	}
	waitFor(t, "the first chunks stored", func() bool {
		evs, _ := h.store.Events(context.Background(), id, "", false)
		return len(evs) >= 302
	})
	c := s.rawClient(t, rpcCall("SubscribeToTask", `{"id":"`+id+`"}`))
	conn := <-s.conns
	waitFor(t, "the Task frame's write blocked", func() bool { return blockedInWrite() })
	for i := range 300 {
		run.Send(t, text(fmt.Sprint(i)))
	}
	waitFor(t, "the burst stored", func() bool {
		evs, _ := h.store.Events(context.Background(), id, "", false)
		return len(evs) >= 602
	})
	_, before := conn.deadline()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	sr := newSSEReader(t, resp)
	for range 301 { // the Task, then the burst
		sr.event(t)
	}
	close(run.Steps)
	sr.rest(t)
	s.waitServed(t, "burst")
	if _, sets := conn.deadline(); sets-before > 12 {
		t.Errorf("%d write deadlines set for a burst of 300 frames and the run's end", sets-before)
	}
}

// TestLargeAnswerWriteTimeout: a plain JSON answer too large for the
// connection's buffers (a task holding 2 MiB of artifacts) to a client
// that stops reading is cut once its write outlasts WriteTimeout: the
// request's goroutine does not stay blocked in the write.
func TestLargeAnswerWriteTimeout(t *testing.T) {
	big := strings.Repeat("x", 64<<10)
	steps := make([]step, 32)
	for i := range steps {
		steps[i] = text(big)
	}
	h := newHarness(t, scriptAgent(steps...), func(o *handler.Options) { o.WriteTimeout = 200 * time.Millisecond })
	resp := h.rpc(req{version: "1.0", owner: "alice", body: sendV10("SendMessage", "m", "", "")})
	id := str(t, resp, "result", "task", "id")
	s := newStallServer(t, h.ep)
	s.rawClient(t, rpcCall("GetTask", `{"id":"`+id+`"}`))
	s.waitServed(t, "a 2 MiB answer to a client not reading")
}

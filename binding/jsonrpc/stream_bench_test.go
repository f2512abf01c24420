package jsonrpc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/store/memory"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// Streaming micro-benchmarks: how long an agent chunk takes to become a
// flushed SSE frame (the handler's share of the relay latency), and what
// one event costs when N streams watch the task. Run with -benchmem; ns/op
// is per chunk.

// chunkAgent hands each run to the benchmark, which feeds it chunks one at
// a time; closing chunks ends the run.
type chunkAgent struct{ runs chan *chunkRun }

type chunkRun struct {
	req    *upstream.RunRequest
	ctx    context.Context
	chunks chan string
}

func (a *chunkAgent) Run(ctx context.Context, req *upstream.RunRequest) (upstream.Stream, error) {
	r := &chunkRun{req: req, ctx: ctx, chunks: make(chan string)}
	a.runs <- r
	return r, nil
}

func (r *chunkRun) Next() (upstream.Event, error) {
	select {
	case c, ok := <-r.chunks:
		if !ok {
			return upstream.Event{}, io.EOF
		}
		return upstream.Event{Kind: upstream.EventText, Text: c}, nil
	case <-r.ctx.Done():
		return upstream.Event{}, r.ctx.Err()
	}
}

func (r *chunkRun) Close() error { return nil }

// frameWriter is an SSE client in the same process: every event a Flush
// carries is announced on flushed. It keeps a copy of the latest frame in a
// reused buffer so a check can read it without the writer allocating.
type frameWriter struct {
	h       http.Header
	code    int
	mu      sync.Mutex
	pending []byte
	last    []byte
	frames  int
	flushed chan<- struct{}
}

func (w *frameWriter) Header() http.Header { return w.h }
func (w *frameWriter) WriteHeader(c int)   { w.code = c }
func (w *frameWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	w.pending = append(w.pending, b...)
	w.mu.Unlock()
	return len(b), nil
}

// Flush announces every SSE event it carries (a burst of events already
// at hand goes out in one flush); last keeps what the flush carried.
func (w *frameWriter) Flush() {
	w.mu.Lock()
	n := bytes.Count(w.pending, frameEnd)
	w.last, w.pending = append(w.last[:0], w.pending...), w.last[:0]
	w.frames += n
	w.mu.Unlock()
	for range n {
		w.flushed <- struct{}{}
	}
}

var frameEnd = []byte("\n\n")

func (w *frameWriter) lastFrame() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.last)
}

// streamBench is an endpoint with streaming on and n open streams on one
// running task: the SendStreamingMessage that started it plus n-1
// SubscribeToTask streams.
type streamBench struct {
	store   *memory.Store
	runner  *handler.Runner
	run     *chunkRun
	writers []*frameWriter
	flushed chan struct{}
	served  sync.WaitGroup
}

func newStreamBench(b *testing.B, n int) *streamBench {
	b.Helper()
	// A log long enough for every b.N: the stream never has to restart.
	sb := &streamBench{
		store:   memory.New(memory.Options{MaxEventsPerTask: 1 << 24}),
		runner:  handler.NewRunner(zap.NewNop()),
		flushed: make(chan struct{}, 1024),
	}
	agent := &chunkAgent{runs: make(chan *chunkRun, 1)}
	ep, err := bind(handler.New(handler.Options{Store: sb.store, Agent: agent, Runner: sb.runner, Streaming: true}))
	if err != nil {
		b.Fatal(err)
	}
	open := func(body string) *frameWriter {
		w := &frameWriter{h: http.Header{}, flushed: sb.flushed}
		sb.writers = append(sb.writers, w)
		r := httptest.NewRequest(http.MethodPost, "/a2a", strings.NewReader(body))
		r.Header.Set("A2A-Version", "1.0")
		sb.served.Add(1)
		go func() {
			defer sb.served.Done()
			ep.Serve(w, r, []byte(body), handler.Caller{Owner: "alice"})
		}()
		return w
	}
	open(`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"go"}]}}}`)
	select {
	case sb.run = <-agent.runs:
	case <-time.After(5 * time.Second):
		b.Fatal("agent not called")
	}
	// The starting stream has the Task and the working status.
	sb.await(b, 2)
	for i := 1; i < n; i++ {
		open(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"SubscribeToTask","params":{"id":%q}}`, i+1, sb.run.req.TaskID))
		sb.await(b, 1) // the Task snapshot
	}
	return sb
}

// await waits for n flushed frames, across all streams.
func (sb *streamBench) await(b *testing.B, n int) {
	for range n {
		select {
		case <-sb.flushed:
		case <-time.After(5 * time.Second):
			b.Fatalf("no frame within 5s")
		}
	}
}

// finish ends the run (every stream closes on its completed status) and
// shuts everything down.
func (sb *streamBench) finish(b *testing.B) {
	b.Helper()
	close(sb.run.chunks)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-sb.flushed:
			case <-done:
				return
			}
		}
	}()
	sb.served.Wait()
	close(done)
	if err := sb.runner.Close(); err != nil {
		b.Fatal(err)
	}
	sb.store.Close()
	for i, w := range sb.writers {
		if w.code != http.StatusOK {
			b.Fatalf("stream %d: HTTP %d", i, w.code)
		}
	}
}

// benchStreams feeds b.N chunks to streams of perStream chunks each, with
// n open streams per task; setting a stream up and tearing it down is not
// timed. Every stream must have the last chunk as its last frame.
func benchStreams(b *testing.B, n, perStream int) {
	var sb *streamBench
	check := func() {
		for i, w := range sb.writers {
			if f := w.lastFrame(); !strings.Contains(f, `"artifactUpdate"`) || !strings.Contains(f, `"text":"chunk"`) {
				b.Fatalf("stream %d: last frame is not the chunk: %q", i, f)
			}
		}
		sb.finish(b)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if i%perStream == 0 {
			b.StopTimer()
			if sb != nil {
				check()
			}
			sb = newStreamBench(b, n)
			b.StartTimer()
		}
		sb.run.chunks <- "chunk"
		sb.await(b, n)
	}
	b.StopTimer()
	check()
}

// BenchmarkStreamChunkRelay is one agent chunk → one flushed SSE frame on
// one stream: the run goroutine stores the event, the stream goroutine
// wakes, encodes and flushes it. The cost per chunk should not depend on
// how many chunks the stream already carried; the sub-benchmarks show
// whether it does.
func BenchmarkStreamChunkRelay(b *testing.B) {
	for _, per := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("chunks-per-stream=%d", per), func(b *testing.B) { benchStreams(b, 1, per) })
	}
}

// BenchmarkStreamFanOut is one agent chunk reaching N open streams of the
// same task; ns/op and allocs/op are per chunk, all streams together.
func BenchmarkStreamFanOut(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("streams=%d", n), func(b *testing.B) { benchStreams(b, n, 1000) })
	}
}

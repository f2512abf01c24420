package jsonrpc

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store/memory"
	"github.com/caddy-a2a/caddy-a2a/upstream/upstreamtest"
)

func BenchmarkSendMessageBlocking(b *testing.B) {
	for _, tc := range []struct{ name, version, body string }{
		{"v1.0", "1.0", sendV10("SendMessage", "m-1", "", "")},
		{"v0.3", "", sendV03("message/send", "m-1", "", "")},
	} {
		b.Run(tc.name, func(b *testing.B) {
			st := memory.New(memory.Options{MaxTasks: 1 << 20})
			runner := handler.NewRunner(zap.NewNop())
			ep, err := bind(handler.New(handler.Options{Store: st, Agent: upstreamtest.Echo{}, Runner: runner}))
			if err != nil {
				b.Fatal(err)
			}
			body := []byte(tc.body)
			r := httptest.NewRequest(http.MethodPost, "/a2a", nil)
			if tc.version != "" {
				r.Header.Set("A2A-Version", tc.version)
			}
			w := &nopWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				ep.Serve(w, r, body, handler.Caller{Owner: "alice"})
				if w.code != http.StatusOK {
					b.Fatal(w.code)
				}
			}
			b.StopTimer()
			if w.errors > 0 {
				b.Fatalf("%d of the answers were errors", w.errors)
			}
			if err := runner.Close(); err != nil {
				b.Fatal(err)
			}
			st.Close()
		})
	}
}

// TestSendBenchmarkAnswersCompleted keeps the benchmark honest: the same
// setup really answers a completed task.
func TestSendBenchmarkAnswersCompleted(t *testing.T) {
	st := memory.New(memory.Options{})
	defer st.Close()
	runner := handler.NewRunner(zap.NewNop())
	defer runner.Close()
	ep, err := bind(handler.New(handler.Options{Store: st, Agent: upstreamtest.Echo{}, Runner: runner}))
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, "/a2a", nil)
	r.Header.Set("A2A-Version", "1.0")
	w := httptest.NewRecorder()
	ep.Serve(w, r, []byte(sendV10("SendMessage", "m-1", "", "")), handler.Caller{Owner: "alice"})
	m := decode(t, w.Body.Bytes())
	if str(t, m, "result", "task", "status", "state") != "TASK_STATE_COMPLETED" ||
		str(t, m, "result", "task", "artifacts", 0, "parts", 0, "text") != "hello" {
		t.Fatalf("answer %v", m)
	}
	_ = protocol.V10
}

// nopWriter is a ResponseWriter that allocates nothing per request.
type nopWriter struct {
	h    http.Header
	code int
	// errors counts JSON-RPC error answers written: a benchmark whose
	// every answer is an error measures the wrong thing.
	errors int
}

func (w *nopWriter) Header() http.Header { return w.h }
func (w *nopWriter) WriteHeader(c int)   { w.code = c }
func (w *nopWriter) Write(b []byte) (int, error) {
	if bytes.Contains(b, []byte(`,"error":{`)) {
		w.errors++
	}
	return len(b), nil
}

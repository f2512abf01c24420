package rest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/store/memory"
	"github.com/caddy-a2a/caddy-a2a/upstream/upstreamtest"
)

// nopWriter is a ResponseWriter that allocates nothing per request.
type nopWriter struct {
	h    http.Header
	code int
}

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) WriteHeader(c int)           { w.code = c }
func (w *nopWriter) Write(b []byte) (int, error) { return len(b), nil }

const sendBody = `{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}`

func newBenchBinding(tb testing.TB) (*Binding, func()) {
	st := memory.New(memory.Options{MaxTasks: 1 << 20})
	runner := handler.NewRunner(zap.NewNop())
	svc, err := handler.New(handler.Options{Store: st, Agent: upstreamtest.Echo{}, Runner: runner})
	if err != nil {
		tb.Fatal(err)
	}
	return New(svc), func() {
		if err := runner.Close(); err != nil {
			tb.Error(err)
		}
		st.Close()
	}
}

// BenchmarkSendMessageBlocking is binding/jsonrpc's benchmark of the same
// name over POST message:send: the HTTP+JSON send's own cost beside the
// JSON-RPC one's, without the network.
func BenchmarkSendMessageBlocking(b *testing.B) {
	bd, done := newBenchBinding(b)
	defer done()
	rt := Match(http.MethodPost, "/message:send")
	body := []byte(sendBody)
	r := httptest.NewRequest(http.MethodPost, "/a2a/rest/message:send", nil)
	r.Header.Set("A2A-Version", "1.0")
	w := &nopWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		bd.Start(w, r, rt, body, handler.Caller{Owner: "alice"})
		if w.code != http.StatusOK {
			b.Fatal(w.code)
		}
	}
}

// TestSendBenchmarkAnswersTask keeps the benchmark honest: the same setup
// answers a completed task.
func TestSendBenchmarkAnswersTask(t *testing.T) {
	bd, done := newBenchBinding(t)
	defer done()
	r := httptest.NewRequest(http.MethodPost, "/a2a/rest/message:send", nil)
	w := httptest.NewRecorder()
	bd.Start(w, r, Match(http.MethodPost, "/message:send"), []byte(sendBody), handler.Caller{Owner: "alice"})
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"state":"TASK_STATE_COMPLETED"`) || !strings.Contains(w.Body.String(), `"text":"hello"`) {
		t.Fatalf("answer %d %s", w.Code, w.Body)
	}
}

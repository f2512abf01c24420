package integration

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestTracing: with Caddy's tracing in the route, a run joins the
// caller's trace and the agent gets a traceparent of that trace (a span
// of its own); without it, the agent gets none, whatever the caller sent.
func TestTracing(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	var mu sync.Mutex
	var got []string
	a := newAgent(t, func(w http.ResponseWriter, r *http.Request, c agentCall) {
		mu.Lock()
		got = append(got, r.Header.Get("Traceparent"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "traced")
	})
	const traceID, parentSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	sent := withHeader("traceparent", "00-"+traceID+"-"+parentSpan+"-01")

	load(t, `http://:9080 {
	tracing {
		span a2a
	}
	a2a {
		upstream {{.Agent}}`+skillBlock+`
	}
}
`, map[string]any{"Agent": a.URL()})
	send10(t, base+"/a2a", msg10("hi", "", ""), sent)
	mu.Lock()
	tp := got[len(got)-1]
	mu.Unlock()
	parts := strings.Split(tp, "-")
	if len(parts) != 4 || parts[0] != "00" || parts[1] != traceID || parts[2] == parentSpan || len(parts[2]) != 16 {
		t.Errorf("the agent got traceparent %q, want one of trace %s with a span of its own", tp, traceID)
	}

	// A message reply's agent call joins the trace the same way.
	load(t, `http://:9080 {
	tracing {
		span a2a
	}
	a2a {
		upstream {{.Agent}}
		reply message`+skillBlock+`
	}
}
`, map[string]any{"Agent": a.URL()})
	var res struct {
		Message *wireMessage `json:"message"`
	}
	call(t, base+"/a2a", "1.0", "SendMessage", map[string]any{"message": msg10("hi", "", "")}, sent).ok(t, &res)
	mu.Lock()
	tp = got[len(got)-1]
	mu.Unlock()
	if res.Message == nil || !strings.Contains(tp, "-"+traceID+"-") {
		t.Errorf("message reply: %v, the agent got traceparent %q", res.Message, tp)
	}

	load(t, minimal(), map[string]any{"Agent": a.URL()})
	send10(t, base+"/a2a", msg10("hi", "", ""), sent)
	mu.Lock()
	tp = got[len(got)-1]
	mu.Unlock()
	if tp != "" {
		t.Errorf("without tracing the agent got traceparent %q", tp)
	}
}

package interop

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// edgeSurface is one protocol surface of one agent: which URL, which dialect.
type edgeSurface struct {
	name  string
	start func(t *testing.T) *peer
	// url picks the endpoint of the started peer.
	url     func(p *peer) string
	dialect rawDialect
}

var edgeSurfaces = []edgeSurface{
	{"a2a-go-v2", func(t *testing.T) *peer { return startV2Agent(t, localListener(t)) }, func(p *peer) string { return p.RPC }, raw10},
	{"a2a-go-v2-hybrid/0.3", func(t *testing.T) *peer { return startV2HybridAgent(t, localListener(t)) }, func(p *peer) string { return p.RPC03 }, raw03},
	{"a2a-go-v0.3", func(t *testing.T) *peer { return startV03Agent(t, localListener(t)) }, func(p *peer) string { return p.RPC }, raw03},
	{"a2a-js", func(t *testing.T) *peer { return startJSAgent(t, 0) }, func(p *peer) string { return p.RPC }, raw10},
	{"a2a-js-hybrid/0.3", func(t *testing.T) *peer { return startJSHybridAgent(t, 0) }, func(p *peer) string { return p.RPC03 }, raw03},
}

// JSON-RPC error codes the SDKs answer with.
const (
	codeInvalidParams        = -32602
	codeMethodNotFound       = -32601
	codeTaskNotFound         = -32001
	codeTaskNotCancelable    = -32002
	codeUnsupportedOperation = -32004
	codeVersionNotSupported  = -32009
)

// TestPeerEdges pins down, by raw JSON-RPC, where the agent SDKs answer the
// same request differently, so a gateway in front of any of them knows what
// it will be passed. Each row is one SDK surface; the comments on the
// fields say how they differ.
func TestPeerEdges(t *testing.T) {
	want := map[string]struct {
		// sendToFinished: a message to a completed task. a2a-go (v2 and
		// v0.3) refuse it as InvalidParams (-32602); @a2a-js/sdk as
		// UnsupportedOperation (-32004), what 1.0 specifies — on its 0.3
		// surface too.
		sendToFinished int
		// subscribeFinished: subscribe/resubscribe to a completed task.
		// a2a-go answers TaskNotFound (-32001); @a2a-js/sdk
		// UnsupportedOperation (-32004), as 1.0 specifies.
		subscribeFinished int
		// subscribeSSE: whether that refusal comes as an SSE frame. a2a-go
		// (both lines) and @a2a-js/sdk's 0.3 surface stream it; @a2a-js/sdk
		// on 1.0 answers a plain JSON body (application/json), which the
		// a2a-go v2 client does not report (TestPeerEdgesClients).
		subscribeSSE bool
		// cancelFinished: cancel of a completed task is TaskNotCancelable
		// (-32002) everywhere.
		cancelFinished int
		// cancelAgain: a second cancel of a canceled task answers the task,
		// still canceled, everywhere (not TaskNotCancelable).
		cancelAgain string
		// getUnknown: TaskNotFound (-32001) everywhere.
		getUnknown int
	}{
		"a2a-go-v2":            {codeInvalidParams, codeTaskNotFound, true, codeTaskNotCancelable, "canceled", codeTaskNotFound},
		"a2a-go-v2-hybrid/0.3": {codeInvalidParams, codeTaskNotFound, true, codeTaskNotCancelable, "canceled", codeTaskNotFound},
		"a2a-go-v0.3":          {codeInvalidParams, codeTaskNotFound, true, codeTaskNotCancelable, "canceled", codeTaskNotFound},
		"a2a-js":               {codeUnsupportedOperation, codeUnsupportedOperation, false, codeTaskNotCancelable, "canceled", codeTaskNotFound},
		"a2a-js-hybrid/0.3":    {codeUnsupportedOperation, codeUnsupportedOperation, true, codeTaskNotCancelable, "canceled", codeTaskNotFound},
	}
	for _, s := range edgeSurfaces {
		t.Run(s.name, func(t *testing.T) {
			w := want[s.name]
			p := s.start(t)
			url, d := s.url(p), s.dialect
			done := d.send(t, url, "echo done", "")
			if done.Code != 0 || done.state() != "completed" {
				t.Fatalf("send(echo) answered %+v, want a completed task", done)
			}
			id := done.taskID()

			t.Run("SendToFinishedTask", func(t *testing.T) {
				if a := d.send(t, url, "again", id); a.Code != w.sendToFinished {
					t.Errorf("send to a completed task: %s (%s), want %d", a.outcome(), a.Message, w.sendToFinished)
				}
			})
			t.Run("SubscribeToFinishedTask", func(t *testing.T) {
				a := d.onTask(t, url, "subscribe", id)
				if a.Code != w.subscribeFinished {
					t.Errorf("subscribe to a completed task: %s (%s), want %d", a.outcome(), a.Message, w.subscribeFinished)
				}
				if sse := strings.HasPrefix(a.ContentType, "text/event-stream"); sse != w.subscribeSSE || (sse && a.Frames != 1) {
					t.Errorf("subscribe error came as %q with %d SSE frame(s), want SSE %v (1 frame)", a.ContentType, a.Frames, w.subscribeSSE)
				}
			})
			t.Run("CancelFinishedTask", func(t *testing.T) {
				if a := d.onTask(t, url, "cancel", id); a.Code != w.cancelFinished {
					t.Errorf("cancel of a completed task: %s (%s), want %d", a.outcome(), a.Message, w.cancelFinished)
				}
			})
			t.Run("CancelTwice", func(t *testing.T) {
				slow := rawRPC(t, url, d.version, d.ops["send"], map[string]any{
					"message":       d.message("slow", ""),
					"configuration": nonBlockingConfig(d),
				})
				sid := slow.taskID()
				if slow.Code != 0 || sid == "" {
					t.Fatalf("non-blocking send(slow): %+v", slow)
				}
				waitRawState(t, d, url, sid, "working")
				first := d.onTask(t, url, "cancel", sid)
				if first.Code != 0 || first.state() != "canceled" {
					t.Fatalf("first cancel: %s (%s) state %q, want canceled", first.outcome(), first.Message, first.state())
				}
				again := d.onTask(t, url, "cancel", sid)
				if got := again.state(); again.Code != 0 || got != w.cancelAgain {
					t.Errorf("second cancel: %s (%s) state %q, want %s", again.outcome(), again.Message, got, w.cancelAgain)
				}
			})
			t.Run("GetUnknownTask", func(t *testing.T) {
				if a := d.onTask(t, url, "get", "00000000-0000-4000-8000-000000000000"); a.Code != w.getUnknown {
					t.Errorf("get of an unknown task: %s (%s), want %d", a.outcome(), a.Message, w.getUnknown)
				}
			})
		})
	}
}

// nonBlockingConfig is the send configuration that returns at once: 1.0's
// returnImmediately, 0.3's blocking=false.
func nonBlockingConfig(d rawDialect) map[string]any {
	if d.version == "1.0" {
		return map[string]any{"returnImmediately": true}
	}
	return map[string]any{"blocking": false}
}

// waitRawState polls get until the task is in state, 100 times at most.
func waitRawState(t *testing.T, d rawDialect, url, id, state string) {
	t.Helper()
	var last rpcAnswer
	for range 100 {
		last = d.onTask(t, url, "get", id)
		if last.Code == 0 && last.state() == state {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("task %s is %q (%s), want %s", id, last.state(), last.outcome(), state)
}

// TestPeerEdgesVersionHeader: the A2A-Version header decides the dialect on
// @a2a-js/sdk, and is ignored by a2a-go.
func TestPeerEdgesVersionHeader(t *testing.T) {
	v2 := startV2Agent(t, localListener(t))
	js := startJSAgent(t, 0)
	jsHybrid := startJSHybridAgent(t, 0)
	cases := []struct {
		name, url, version, method string
		want                       int
	}{
		// a2a-go v2 serves 1.0 on its 1.0 endpoint with or without the header.
		{"a2a-go-v2/1.0-body-no-header", v2.RPC, "", "SendMessage", 0},
		// @a2a-js/sdk takes a missing header for 0.3 (A2A 1.0 §3.6.2) and,
		// without legacyCompat, refuses it as VersionNotSupported: a 1.0
		// request must carry A2A-Version: 1.0.
		{"a2a-js/1.0-body-no-header", js.RPC, "", "SendMessage", codeVersionNotSupported},
		{"a2a-js/1.0-body-1.0-header", js.RPC, "1.0", "SendMessage", 0},
		// With legacyCompat a missing header routes to the 0.3 handler,
		// where the 1.0 method name does not exist.
		{"a2a-js-hybrid/1.0-body-no-header", jsHybrid.RPC, "", "SendMessage", codeMethodNotFound},
		{"a2a-js-hybrid/0.3-body-no-header", jsHybrid.RPC, "", "message/send", 0},
		// …and a 1.0 header routes 0.3 method names nowhere.
		{"a2a-js-hybrid/0.3-body-1.0-header", jsHybrid.RPC, "1.0", "message/send", codeMethodNotFound},
		// An unknown version is refused by the JS server.
		{"a2a-js/2.0-header", js.RPC, "2.0", "SendMessage", codeVersionNotSupported},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := raw10
			if c.method == "message/send" {
				d = raw03
			}
			a := rawRPC(t, c.url, c.version, c.method, map[string]any{"message": d.message("echo v", "")})
			if a.Code != c.want {
				t.Errorf("%s with A2A-Version %q: %s (%s), want %d", c.method, c.version, a.outcome(), a.Message, c.want)
			}
		})
	}
}

// TestPeerEdgesClients: what the real clients make of those differences,
// and how a cancel reaches a stream that is open on the canceled task.
func TestPeerEdgesClients(t *testing.T) {
	agents := []struct {
		name   string
		start  func(t *testing.T) *peer
		driver string
		// sendToFinished is the error code the client reports for a send to
		// a completed task (see TestPeerEdges).
		sendToFinished int
		// subscribeFinished is the code reported for subscribing to a
		// completed task; 0 means the client reports nothing at all: the
		// a2a-go v2 client drops the plain-JSON error @a2a-js/sdk answers on
		// 1.0 and ends the stream with no event and no error.
		subscribeFinished int
	}{
		{"a2a-go-v2", func(t *testing.T) *peer { return startV2Agent(t, localListener(t)) }, "v2-1.0", codeInvalidParams, codeTaskNotFound},
		{"a2a-go-v0.3", func(t *testing.T) *peer { return startV03Agent(t, localListener(t)) }, "v0.3", codeInvalidParams, codeTaskNotFound},
		{"a2a-js", func(t *testing.T) *peer { return startJSAgent(t, 0) }, "v2-1.0", codeUnsupportedOperation, 0},
		{"a2a-js-hybrid/0.3", func(t *testing.T) *peer { return startJSHybridAgent(t, 0) }, "v0.3", codeUnsupportedOperation, codeUnsupportedOperation},
	}
	for _, a := range agents {
		t.Run(a.name, func(t *testing.T) {
			p := a.start(t)
			ctx, w := testCtx(t), newWire(t)
			d := connectDriver(t, ctx, p, w, a.driver)
			done, err := d.send(ctx, "echo x", nil, false)
			if err != nil {
				t.Fatal(err)
			}

			t.Run("SendToFinishedTask", func(t *testing.T) {
				if _, err := d.send(ctx, "again", &done, false); !d.is(err, a.sendToFinished) {
					t.Errorf("send to a completed task: error %v, want code %d", err, a.sendToFinished)
				}
			})
			t.Run("SubscribeToFinishedTask", func(t *testing.T) {
				evs, err := d.subscribe(ctx, done.TaskID)
				if len(evs) != 0 {
					t.Errorf("subscribe to a completed task delivered %v, want no event", evs)
				}
				if a.subscribeFinished == 0 {
					if err != nil {
						t.Errorf("subscribe to a completed task: error %v, want the client to drop it (nil)", err)
					}
				} else if !d.is(err, a.subscribeFinished) {
					t.Errorf("subscribe to a completed task: error %v, want code %d", err, a.subscribeFinished)
				}
			})
			t.Run("CancelDuringStream", func(t *testing.T) {
				// Every SDK ends the open stream with the canceled status, and
				// the cancel answers the task canceled.
				type result struct {
					evs []pEvent
					err error
				}
				sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				working := make(chan string, 1)
				ended := make(chan result, 1)
				go func() {
					evs, err := d.streamEach(sctx, "slow", func(e pEvent) {
						if e.Kind == "status" && e.State == "working" {
							working <- e.TaskID
						}
					})
					ended <- result{evs, err}
				}()
				var id string
				select {
				case id = <-working:
				case <-sctx.Done():
					t.Fatalf("the slow stream never reported working")
				}
				c, err := d.cancel(ctx, id)
				if err != nil || c.State != "canceled" {
					t.Errorf("cancel: %+v, %v; want the task canceled", c, err)
				}
				r := <-ended
				want := []string{"task(submitted)", "status(working)", "status(canceled)"}
				if got := eventsString(r.evs); r.err != nil || !slices.Equal(got, want) {
					t.Errorf("the canceled stream gave %v, %v; want %v and its end", got, r.err, want)
				}
			})
		})
	}
}

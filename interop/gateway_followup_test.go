package interop

import (
	"net/http"
	"slices"
	"testing"
)

// TestGatewayContinuedTurn: the follow-up of an input-required task
// through `upstream a2a`, with agents written as their SDK's docs say.
// @a2a-js/sdk's executor publishes the stored task first on every
// execution, so the follow-up's stream opens with the task still
// input-required, asking the old question, before working, the answer
// and completed; a2a-go v2's (a2asrv's template) sends no task on a
// follow-up, only status and artifact updates. The module's turn must end
// as the agent's did: completed with the answer, never the old question,
// the agent's own task saying the same. The JS agent is also put behind
// the module with a card that says it does not stream, so that the
// module's blocking SendMessage path carries the follow-up. The caller is
// a2a-go v2 (1.0), sending and streaming.
func TestGatewayContinuedTurn(t *testing.T) {
	restoreBase(t)
	for _, tc := range []struct {
		name  string
		start func(t *testing.T) *peer
		// op is what the module sends the agent for each turn.
		op string
	}{
		{"a2a-js", func(t *testing.T) *peer { return startJSAgent(t, 0) }, "SendStreamingMessage"},
		{"a2a-js-not-streaming", func(t *testing.T) *peer { return startJSBlockingAgent(t, 0) }, "SendMessage"},
		{"a2a-go-v2", func(t *testing.T) *peer { return startV2Agent(t, localListener(t)) }, "SendStreamingMessage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.start(t)
			loadGateway(t, p)
			for _, streamed := range []bool{false, true} {
				name := "send"
				if streamed {
					name = "stream"
				}
				t.Run(name, func(t *testing.T) {
					ctx := testCtx(t)
					w := newWire(t)
					w.header = http.Header{"X-Caller": {"u-" + uniq(t)}}
					d := connectDriver(t, ctx, &peer{Name: "gateway", URL: gatewayURL}, w, "v2-1.0")
					p.ResetCalls()
					var first pResult
					if streamed {
						evs, err := d.stream(ctx, "askdoc", nil)
						if err != nil {
							t.Fatalf("stream(askdoc) after %v: %v", eventsString(evs), err)
						}
						if len(evs) < 2 || evs[0].Kind != "task" || evs[len(evs)-1].String() != `status(input-required "what is your name?")` {
							t.Fatalf("stream(askdoc) = %v, want the Task, then input-required asking %q", eventsString(evs), peerQuestion)
						}
						if first, err = d.get(ctx, evs[0].TaskID); err != nil {
							t.Fatalf("get: %v", err)
						}
						evs, err = d.stream(ctx, "Ada", &first)
						if err != nil {
							t.Fatalf("stream(follow-up) after %v: %v", eventsString(evs), err)
						}
						want := []string{"task(working)", `artifact("hello Ada" append=false last=true)`, "status(completed)"}
						if got := eventsString(evs); !slices.Equal(got, want) || evs[0].TaskID != first.TaskID {
							t.Fatalf("stream(follow-up) = %v (task %s), want %v of task %s", got, evs[0].TaskID, want, first.TaskID)
						}
					} else {
						var err error
						first, err = d.send(ctx, "askdoc", nil, false)
						if err != nil {
							t.Fatalf("send(askdoc): %v", err)
						}
						if first.Kind != "task" || first.State != "input-required" || first.Status != peerQuestion {
							t.Fatalf("send(askdoc) = %+v, want input-required asking %q", first, peerQuestion)
						}
						final, err := d.send(ctx, "Ada", &first, false)
						if err != nil {
							t.Fatalf("send(follow-up): %v", err)
						}
						if final.TaskID != first.TaskID || final.State != "completed" || final.Status != "" || final.text() != "hello Ada" {
							t.Fatalf("follow-up = %+v, want task %s completed with %q and no status message", final, first.TaskID, "hello Ada")
						}
					}
					got, err := d.get(ctx, first.TaskID)
					if err != nil {
						t.Fatalf("get: %v", err)
					}
					if got.State != "completed" || got.Status != "" || got.text() != "hello Ada" {
						t.Errorf("get after the follow-up = %+v, want completed with %q", got, "hello Ada")
					}
					// One call per turn, no task read: the answer came on the
					// follow-up's own stream or answer.
					var sends []peerCall
					for _, c := range p.Calls() {
						if c.Method != "" {
							sends = append(sends, c)
						}
					}
					if len(sends) != 2 || sends[0].Method != tc.op || sends[1].Method != tc.op || sends[1].TaskID == "" {
						t.Fatalf("the agent got %+v, want two %s, the second continuing its task", sends, tc.op)
					}
					// The agent's own record of its task says the same.
					ad := connectDriver(t, ctx, p, newWire(t), "v2-1.0")
					at, err := ad.get(ctx, sends[1].TaskID)
					if err != nil {
						t.Fatalf("the agent's get: %v", err)
					}
					if at.State != "completed" || at.text() != "hello Ada" {
						t.Errorf("the agent's task = %+v, want completed with %q", at, "hello Ada")
					}
				})
			}
		})
	}
}

package interop

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
)

var (
	// gatewayURL and gatewayLegacyURL are the module's mounts in front of
	// the real agent a gateway test started.
	gatewayURL       = fmt.Sprintf("http://127.0.0.1:%d", gatewayPort)
	gatewayLegacyURL = fmt.Sprintf("http://127.0.0.1:%d", gatewayLegacyPort)
)

// gatewaySite renders one mount fronting agentURL: the owner is the
// X-Caller header, which header_up hands the agent as X-User, and no
// card field is set (they all come from the agent's card).
func gatewaySite(port int, versions, agentURL string) string {
	return fmt.Sprintf(`http://127.0.0.1:%d {
	bind 127.0.0.1
	a2a {
		upstream a2a %s {
			timeout 30s
			header_up X-User {http.request.header.X-Caller}
		}
		owner {http.request.header.X-Caller}
		spec_version %s
		store memory {
			share gateway-%d
		}
	}
}
`, port, agentURL, versions, port)
}

// loadCaddyfile adapts and loads text in place of the running config.
func loadCaddyfile(text string) error {
	cfgJSON, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(text), map[string]any{"filename": "Caddyfile"})
	if err != nil {
		return fmt.Errorf("adapting: %w", err)
	}
	return caddy.Load(cfgJSON, true)
}

// loadGateway loads TestMain's sites plus the two gateway mounts in front
// of p, and waits until the module serves the agent's card on both.
func loadGateway(t *testing.T, p *peer) {
	t.Helper()
	text := baseCaddyfile + gatewaySite(gatewayPort, "0.3 1.0", p.URL) + gatewaySite(gatewayLegacyPort, "0.3", p.URL)
	if err := loadCaddyfile(text); err != nil {
		t.Fatalf("loading the gateway config: %v", err)
	}
	for _, base := range []string{gatewayURL, gatewayLegacyURL} {
		if err := waitReady(base + "/.well-known/agent-card.json"); err != nil {
			t.Fatalf("the gateway's card in front of %s: %v", p.Name, err)
		}
	}
}

// restoreBase loads TestMain's config back, for the tests that follow.
func restoreBase(t *testing.T) {
	t.Helper()
	t.Cleanup(func() {
		if err := loadCaddyfile(baseCaddyfile); err != nil {
			t.Errorf("loading the base config back: %v", err)
		}
	})
}

// gatewayCase is one agent behind the module and the clients that reach
// it through the module.
type gatewayCase struct {
	name    string
	start   func(t *testing.T) *peer
	drivers []string
	// js runs the @a2a-js/sdk client suite through the module too.
	js bool
}

var gatewayCases = []gatewayCase{
	{name: "a2a-go-v2", start: func(t *testing.T) *peer { return startV2Agent(t, localListener(t)) },
		drivers: []string{"v2-1.0", "v2-0.3-compat", "v0.3"}, js: true},
	{name: "a2a-go-v2-hybrid", start: func(t *testing.T) *peer { return startV2HybridAgent(t, localListener(t)) },
		drivers: []string{"v2-1.0", "v0.3"}, js: true},
	{name: "a2a-go-v0.3", start: func(t *testing.T) *peer { return startV03Agent(t, localListener(t)) },
		drivers: []string{"v2-1.0", "v2-0.3-compat", "v0.3"}, js: true},
	{name: "a2a-js", start: func(t *testing.T) *peer { return startJSAgent(t, 0) },
		drivers: []string{"v2-1.0", "v2-0.3-compat", "v0.3"}, js: true},
	{name: "a2a-js-hybrid", start: func(t *testing.T) *peer { return startJSHybridAgent(t, 0) },
		drivers: []string{"v2-1.0", "v0.3"}, js: true},
}

// gwRun is one scenario's view: the client (driver) at the module, the
// agent behind it, and who calls.
type gwRun struct {
	p      *peer
	d      peerDriver
	w      *wire
	caller string
	// agentVersion is the version the module speaks to the agent (1.0
	// whenever its card offers it), agentOps that version's methods.
	agentVersion string
	agentOps     map[string]string
}

// gatewayScenarios run for every agent with every client flavour.
var gatewayScenarios = []struct {
	name string
	run  func(t *testing.T, ctx context.Context, g *gwRun)
}{
	{"SendEcho", gwSendEcho},
	{"StreamChunks", gwStreamChunks},
	{"SendChunks", gwSendChunks},
	{"AskMultiTurn", gwAsk},
	{"AskMultiTurnStream", gwAskStream},
	{"AskAcrossVersions", gwAskAcross},
	{"CancelInputRequired", gwCancelAsk},
	{"Fail", gwFail},
	{"Data", gwData},
	{"MessageReply", gwMsg},
	{"MessageReplyStream", gwMsgStream},
	{"SlowCancel", gwSlowCancel},
	{"Resubscribe", gwResubscribe},
	{"Ownership", gwOwnership},
}

// TestGateway puts each real SDK agent behind the module (`upstream a2a`)
// and drives it through the module with each real client: the module
// bridges versions, keeps the tasks (the caller's own), and the agent only
// ever hears its own version, the caller's X-User, and none of the
// caller's credentials.
func TestGateway(t *testing.T) {
	restoreBase(t)
	for _, gc := range gatewayCases {
		t.Run(gc.name, func(t *testing.T) {
			p := gc.start(t)
			loadGateway(t, p)
			agentVersion, agentOps := "1.0", ops10
			if p.Version == "0.3" {
				agentVersion, agentOps = "0.3", ops03
			}
			for _, dn := range gc.drivers {
				t.Run(dn, func(t *testing.T) {
					for _, sc := range gatewayScenarios {
						t.Run(sc.name, func(t *testing.T) {
							ctx := testCtx(t)
							g := &gwRun{p: p, w: newWire(t), caller: "u-" + uniq(t), agentVersion: agentVersion, agentOps: agentOps}
							// The caller's credentials, which must stay at the edge.
							g.w.header = http.Header{"X-Caller": {g.caller}, "Authorization": {"Bearer caller-token"}, "Cookie": {"s=1"}}
							g.d = connectDriver(t, ctx, &peer{Name: "gateway", URL: gatewayURL}, g.w, dn)
							p.ResetCalls()
							sc.run(t, ctx, g)
							g.checkAgentCalls(t)
							// The client spoke its own version to the module (the
							// one scenario that mixes versions shares the wire).
							if sc.name != "AskAcrossVersions" {
								methods := slices.Collect(maps.Values(g.d.op))
								if g.d.name == "v2-1.0" {
									methods = append(methods, "ListTasks")
								}
								g.w.requireDialect(t, g.d.sentVersion, methods...)
							}
							if t.Failed() {
								t.Logf("agent %s recorded: %+v", p.Name, p.Calls())
							}
						})
					}
				})
			}
			if gc.js {
				t.Run("a2a-js-client", func(t *testing.T) { gwJSClient(t, p, agentVersion, agentOps) })
			}
		})
	}
}

// checkAgentCalls asserts what reached the agent: every JSON-RPC call in
// the agent's version, on its endpoint of that version, as the caller
// (X-User), without the caller's Authorization or Cookie.
func (g *gwRun) checkAgentCalls(t *testing.T) {
	t.Helper()
	checkGatewayCalls(t, g.p, g.agentVersion, g.agentOps, func(u string) bool { return u == g.caller })
}

// checkGatewayCalls is checkAgentCalls for runs of the callers isCaller
// accepts.
func checkGatewayCalls(t *testing.T, p *peer, version string, ops map[string]string, isCaller func(string) bool) {
	t.Helper()
	allowed := map[string]bool{}
	for _, m := range ops {
		allowed[m] = true
	}
	wantPath := p.RPC
	if version == "0.3" {
		wantPath = p.RPC03
	}
	for _, c := range p.Calls() {
		if c.Authorization != "" || c.Cookie != "" {
			t.Errorf("%s %s %s reached the agent with Authorization %q Cookie %q, want neither", c.HTTPMethod, c.Path, c.Method, c.Authorization, c.Cookie)
		}
		if c.Method == "" {
			continue // the module's card fetches
		}
		if c.HTTPMethod != http.MethodPost || c.A2AVersion != version || !isCaller(c.XUser) || !allowed[c.Method] || p.URL+c.Path != wantPath {
			t.Errorf("the agent got %s %s %s A2A-Version %q X-User %q, want POST %s, a %s method, A2A-Version %q, the caller's X-User",
				c.HTTPMethod, c.Path, c.Method, c.A2AVersion, c.XUser, wantPath, version, version)
		}
	}
}

// rpcMethods is the agent's JSON-RPC methods since the last reset.
func (g *gwRun) rpcMethods() []string { return g.p.Methods() }

// waitAgentMethod waits (at most 5s) until the agent got method m.
func (g *gwRun) waitAgentMethod(t *testing.T, m string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !slices.Contains(g.rpcMethods(), m) {
		if time.Now().After(deadline) {
			t.Fatalf("the agent never got %s; it got %v", m, g.rpcMethods())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ownerContext is the form of the context id the agent is told: the
// module's id for the owner's conversation (a UUIDv8), never the id the
// caller sees, so callers cannot meet in a context at the agent.
var ownerContext = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// agentContext is the context id of the agent's first send since the
// reset, checked to be the owner's id and not the caller's.
func (g *gwRun) agentContext(t *testing.T, callerContext string) string {
	t.Helper()
	for _, c := range g.p.Calls() {
		if c.Method == g.agentOps["stream"] || c.Method == g.agentOps["send"] {
			if !ownerContext.MatchString(c.ContextID) || c.ContextID == callerContext {
				t.Errorf("the agent was told context %q, want the owner's UUIDv8, not the caller's %q", c.ContextID, callerContext)
			}
			return c.ContextID
		}
	}
	t.Errorf("the agent got no send: %v", g.rpcMethods())
	return ""
}

// seen asserts the agent's metadata.peerSeen on what the module relayed:
// the agent saw its own version, the caller as X-User and the context it
// was sent.
func (g *gwRun) seen(t *testing.T, what string, s *peerSeen, agentContext string) {
	t.Helper()
	want := peerSeen{A2AVersion: g.agentVersion, XUser: g.caller, ContextID: agentContext}
	if s == nil || *s != want {
		t.Errorf("%s: peerSeen %+v, want %+v", what, s, want)
	}
}

func gwSendEcho(t *testing.T, ctx context.Context, g *gwRun) {
	r, err := g.d.send(ctx, "echo hi", nil, false)
	if err != nil {
		t.Fatalf("send(echo hi): %v", err)
	}
	if r.Kind != "task" || r.State != "completed" || len(r.Artifacts) != 1 || r.text() != "echo: hi" {
		t.Fatalf("send(echo hi) = %+v, want a completed task with one artifact %q", r, "echo: hi")
	}
	g.seen(t, "artifact", r.Artifacts[0].Seen, g.agentContext(t, r.ContextID))
	got, err := g.d.get(ctx, r.TaskID)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.TaskID != r.TaskID || got.ContextID != r.ContextID || got.State != "completed" || len(got.Artifacts) != 1 || got.text() != "echo: hi" {
		t.Errorf("get = %+v, want the completed task %s with %q", got, r.TaskID, "echo: hi")
	}
	// The get is answered from the module's record.
	if m := g.rpcMethods(); !slices.Equal(m, []string{g.agentOps["stream"]}) {
		t.Errorf("the agent got %v, want one %s", m, g.agentOps["stream"])
	}
	if calls := g.p.Calls(); len(calls) > 0 {
		for _, c := range calls {
			if c.Method != "" && (c.Text != "echo hi" || c.TaskID != "") {
				t.Errorf("the agent's call %+v, want text %q and no task id", c, "echo hi")
			}
		}
	}
}

func gwStreamChunks(t *testing.T, ctx context.Context, g *gwRun) {
	evs, err := g.d.stream(ctx, "stream 3", nil)
	if err != nil {
		t.Fatalf("stream after %v: %v", eventsString(evs), err)
	}
	if len(evs) == 0 || evs[0].Kind != "task" {
		t.Fatalf("stream(stream 3) = %v, want the Task first", eventsString(evs))
	}
	var arts []string
	for _, e := range evs {
		if e.Kind == "artifact" {
			arts = append(arts, e.String())
		}
	}
	want := []string{
		`artifact("chunk 1 " append=false last=false)`,
		`artifact("chunk 2 " append=true last=false)`,
		`artifact("chunk 3 " append=true last=true)`,
	}
	if !slices.Equal(arts, want) {
		t.Errorf("stream(stream 3) artifacts %v, want %v (all events %v)", arts, want, eventsString(evs))
	}
	if last := evs[len(evs)-1]; last.String() != "status(completed)" {
		t.Errorf("stream(stream 3) ends with %s, want status(completed) (all events %v)", last, eventsString(evs))
	}
	task, err := g.d.get(ctx, evs[0].TaskID)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if task.State != "completed" || len(task.Artifacts) != 1 || task.text() != "chunk 1 chunk 2 chunk 3 " {
		t.Errorf("get after the stream = %+v, want completed with one artifact %q", task, "chunk 1 chunk 2 chunk 3 ")
	}
	if m := g.rpcMethods(); !slices.Equal(m, []string{g.agentOps["stream"]}) {
		t.Errorf("the agent got %v, want one %s", m, g.agentOps["stream"])
	}
}

// gwSendChunks: a blocking send of "stream 3" answers the task with the
// agent's streamed chunks as one artifact; a non-blocking one settles the
// same way.
func gwSendChunks(t *testing.T, ctx context.Context, g *gwRun) {
	r, err := g.d.send(ctx, "stream 3", nil, false)
	if err != nil {
		t.Fatalf("send(stream 3): %v", err)
	}
	if r.State != "completed" || len(r.Artifacts) != 1 || r.text() != "chunk 1 chunk 2 chunk 3 " {
		t.Fatalf("send(stream 3) = %+v, want completed with one artifact %q", r, "chunk 1 chunk 2 chunk 3 ")
	}
	n, err := g.d.send(ctx, "stream 3", nil, true)
	if err != nil {
		t.Fatalf("send(stream 3, non-blocking): %v", err)
	}
	for i := 0; n.State != "completed" && i < 100; i++ {
		time.Sleep(20 * time.Millisecond)
		if n, err = g.d.get(ctx, n.TaskID); err != nil {
			t.Fatalf("get: %v", err)
		}
	}
	if n.State != "completed" || len(n.Artifacts) != 1 || n.text() != "chunk 1 chunk 2 chunk 3 " {
		t.Fatalf("non-blocking send(stream 3), then get = %+v, want completed with one artifact %q", n, "chunk 1 chunk 2 chunk 3 ")
	}
	if m := g.rpcMethods(); !slices.Equal(m, []string{g.agentOps["stream"], g.agentOps["stream"]}) {
		t.Errorf("the agent got %v, want two %s", m, g.agentOps["stream"])
	}
}

func gwAsk(t *testing.T, ctx context.Context, g *gwRun) {
	first, err := g.d.send(ctx, "ask", nil, false)
	if err != nil {
		t.Fatalf("send(ask): %v", err)
	}
	if first.Kind != "task" || first.State != "input-required" || first.Status != peerQuestion {
		t.Fatalf("send(ask) = %+v, want input-required asking %q", first, peerQuestion)
	}
	final, err := g.d.send(ctx, "Ada", &first, false)
	if err != nil {
		t.Fatalf("send(follow-up): %v", err)
	}
	if final.TaskID != first.TaskID || final.ContextID != first.ContextID || final.State != "completed" || final.text() != "hello Ada" {
		t.Fatalf("follow-up = %+v, want task %s completed with %q", final, first.TaskID, "hello Ada")
	}
	actx := g.agentContext(t, first.ContextID)
	g.seen(t, "artifact", final.Artifacts[len(final.Artifacts)-1].Seen, actx)
	var sends []peerCall
	for _, c := range g.p.Calls() {
		if c.Method != "" {
			sends = append(sends, c)
		}
	}
	if len(sends) != 2 || sends[0].Method != g.agentOps["stream"] || sends[1].Method != g.agentOps["stream"] {
		t.Fatalf("the agent got %v, want two %s", g.rpcMethods(), g.agentOps["stream"])
	}
	// The follow-up names the agent's own task, never the module's.
	if c := sends[1]; c.Text != "Ada" || c.TaskID == "" || c.TaskID == first.TaskID || c.ContextID != actx {
		t.Errorf("the follow-up reached the agent as %+v, want text Ada, the agent's task id (not %s), context %s", c, first.TaskID, actx)
	}
}

func gwAskStream(t *testing.T, ctx context.Context, g *gwRun) {
	evs, err := g.d.stream(ctx, "ask", nil)
	if err != nil {
		t.Fatalf("stream(ask) after %v: %v", eventsString(evs), err)
	}
	if len(evs) < 2 || evs[0].Kind != "task" || evs[len(evs)-1].String() != `status(input-required "what is your name?")` {
		t.Fatalf("stream(ask) = %v, want the Task, then input-required asking %q", eventsString(evs), peerQuestion)
	}
	first, err := g.d.get(ctx, evs[0].TaskID)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	evs, err = g.d.stream(ctx, "Ada", &first)
	if err != nil {
		t.Fatalf("stream(follow-up) after %v: %v", eventsString(evs), err)
	}
	var arts []string
	for _, e := range evs {
		if e.Kind == "artifact" {
			arts = append(arts, e.String())
		}
	}
	if len(evs) == 0 || evs[0].Kind != "task" || evs[0].TaskID != first.TaskID ||
		!slices.Equal(arts, []string{`artifact("hello Ada" append=false last=true)`}) || evs[len(evs)-1].String() != "status(completed)" {
		t.Fatalf("stream(follow-up) = %v, want task %s, one artifact %q, then status(completed)", eventsString(evs), first.TaskID, "hello Ada")
	}
	if m := g.rpcMethods(); !slices.Equal(m, []string{g.agentOps["stream"], g.agentOps["stream"]}) {
		t.Errorf("the agent got %v, want two %s", m, g.agentOps["stream"])
	}
}

// gwAskAcross starts "ask" with the client and answers it with a client
// of the other version, as the same caller: the task is the module's,
// whatever version reads or continues it.
func gwAskAcross(t *testing.T, ctx context.Context, g *gwRun) {
	first, err := g.d.send(ctx, "ask", nil, false)
	if err != nil {
		t.Fatalf("send(ask): %v", err)
	}
	if first.State != "input-required" {
		t.Fatalf("send(ask) = %+v, want input-required", first)
	}
	other := "v0.3"
	if g.d.sentVersion != "1.0" {
		other = "v2-1.0"
	}
	od := connectDriver(t, ctx, &peer{Name: "gateway", URL: gatewayURL}, g.w, other)
	final, err := od.send(ctx, "Ada", &first, false)
	if err != nil {
		t.Fatalf("send(follow-up) with %s: %v", other, err)
	}
	if final.TaskID != first.TaskID || final.ContextID != first.ContextID || final.State != "completed" || final.text() != "hello Ada" {
		t.Fatalf("follow-up with %s = %+v, want task %s completed with %q", other, final, first.TaskID, "hello Ada")
	}
	got, err := g.d.get(ctx, first.TaskID)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.State != "completed" || got.text() != "hello Ada" {
		t.Errorf("get after the follow-up = %+v, want completed with %q", got, "hello Ada")
	}
	if m := g.rpcMethods(); !slices.Equal(m, []string{g.agentOps["stream"], g.agentOps["stream"]}) {
		t.Errorf("the agent got %v, want two %s", m, g.agentOps["stream"])
	}
}

// gwCancelAsk cancels a task that waits for input: the module cancels
// its task and tells the agent.
func gwCancelAsk(t *testing.T, ctx context.Context, g *gwRun) {
	first, err := g.d.send(ctx, "ask", nil, false)
	if err != nil {
		t.Fatalf("send(ask): %v", err)
	}
	if first.State != "input-required" {
		t.Fatalf("send(ask) = %+v, want input-required", first)
	}
	c, err := g.d.cancel(ctx, first.TaskID)
	if err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if c.TaskID != first.TaskID || c.State != "canceled" {
		t.Errorf("cancel = %+v, want task %s canceled", c, first.TaskID)
	}
	g.checkCanceled(t, first.TaskID)
}

func gwFail(t *testing.T, ctx context.Context, g *gwRun) {
	r, err := g.d.send(ctx, "fail", nil, false)
	if err != nil {
		t.Fatalf("send(fail): %v", err)
	}
	if r.Kind != "task" || r.State != "failed" || r.Status != peerBoom {
		t.Errorf("send(fail) = %+v, want failed with the agent's status message %q", r, peerBoom)
	}
}

func gwData(t *testing.T, ctx context.Context, g *gwRun) {
	r, err := g.d.send(ctx, "data", nil, false)
	if err != nil {
		t.Fatalf("send(data): %v", err)
	}
	if r.State != "completed" || len(r.Artifacts) != 1 {
		t.Fatalf("send(data) = %+v, want completed with one artifact", r)
	}
	want := []string{`data:{"k":"v"}`, "raw:f.txt:text/plain:hi", "url:f.txt:text/plain:https://example.com/f.txt"}
	if got := r.Artifacts[0].Parts; !slices.Equal(got, want) {
		t.Errorf("data artifact parts %q, want %q", got, want)
	}
	got, err := g.d.get(ctx, r.TaskID)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if len(got.Artifacts) != 1 || !slices.Equal(got.Artifacts[0].Parts, want) {
		t.Errorf("get: artifacts %+v, want one with parts %q", got.Artifacts, want)
	}
}

func gwMsg(t *testing.T, ctx context.Context, g *gwRun) {
	r, err := g.d.send(ctx, "msg hi", nil, false)
	if err != nil {
		t.Fatalf("send(msg hi): %v", err)
	}
	// The module's default (`reply task`): the agent's Message is the
	// task's artifact.
	if r.Kind != "task" || r.State != "completed" || len(r.Artifacts) != 1 || r.text() != "msg: hi" {
		t.Fatalf("send(msg hi) = %+v, want a completed task with one artifact %q", r, "msg: hi")
	}
}

func gwMsgStream(t *testing.T, ctx context.Context, g *gwRun) {
	evs, err := g.d.stream(ctx, "msg hi", nil)
	if err != nil {
		t.Fatalf("stream after %v: %v", eventsString(evs), err)
	}
	var arts []string
	for _, e := range evs {
		if e.Kind == "artifact" {
			arts = append(arts, e.String())
		}
	}
	if len(evs) == 0 || evs[0].Kind != "task" || !slices.Equal(arts, []string{`artifact("msg: hi" append=false last=true)`}) ||
		evs[len(evs)-1].String() != "status(completed)" {
		t.Fatalf("stream(msg hi) = %v, want the Task, one artifact %q, then status(completed)", eventsString(evs), "msg: hi")
	}
	if m := g.rpcMethods(); !slices.Equal(m, []string{g.agentOps["stream"]}) {
		t.Errorf("the agent got %v, want one %s", m, g.agentOps["stream"])
	}
}

// startSlow sends "slow" without blocking and waits (bounded) until the
// module's task is working.
func (g *gwRun) startSlow(t *testing.T, ctx context.Context) pResult {
	t.Helper()
	r, err := g.d.send(ctx, "slow", nil, true)
	if err != nil {
		t.Fatalf("send(slow, non-blocking): %v", err)
	}
	if r.Kind != "task" || (r.State != "submitted" && r.State != "working") {
		t.Fatalf("send(slow) = %+v, want a submitted or working task", r)
	}
	for i := 0; r.State != "working" && i < 100; i++ {
		time.Sleep(20 * time.Millisecond)
		if r, err = g.d.get(ctx, r.TaskID); err != nil {
			t.Fatalf("get: %v", err)
		}
	}
	if r.State != "working" {
		t.Fatalf("slow task is %s after 2s, want working", r.State)
	}
	// The module's task is working from the start; the agent's task id
	// reaches the module only with the first frame of the agent's stream,
	// and a cancel before that never reaches the agent (see
	// TestGatewayCancelBeforeAgentNamesTask).
	g.waitAgentMethod(t, g.agentOps["stream"])
	time.Sleep(150 * time.Millisecond)
	return r
}

// checkCanceled asserts the agent heard the cancel in its own version:
// the run's stream, then one cancel of the agent's own task (the module's
// id never reaches it).
func (g *gwRun) checkCanceled(t *testing.T, moduleTask string) {
	t.Helper()
	g.waitAgentMethod(t, g.agentOps["cancel"])
	var rpcs []peerCall
	for _, c := range g.p.Calls() {
		if c.Method != "" {
			rpcs = append(rpcs, c)
		}
	}
	if want := []string{g.agentOps["stream"], g.agentOps["cancel"]}; !slices.Equal(g.rpcMethods(), want) {
		t.Fatalf("the agent got %v, want %v", g.rpcMethods(), want)
	}
	if c := rpcs[1]; c.TaskID == "" || c.TaskID == moduleTask {
		t.Errorf("the agent was told to cancel task %q, want its own task's id (not the module's %s)", c.TaskID, moduleTask)
	}
}

func gwSlowCancel(t *testing.T, ctx context.Context, g *gwRun) {
	r := g.startSlow(t, ctx)
	c, err := g.d.cancel(ctx, r.TaskID)
	if err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if c.TaskID != r.TaskID || c.State != "canceled" {
		t.Errorf("cancel = %+v, want task %s canceled", c, r.TaskID)
	}
	got, err := g.d.get(ctx, r.TaskID)
	if err != nil {
		t.Fatalf("get after cancel: %v", err)
	}
	if got.State != "canceled" {
		t.Errorf("get after cancel: state %s, want canceled", got.State)
	}
	g.checkCanceled(t, r.TaskID)
}

func gwResubscribe(t *testing.T, ctx context.Context, g *gwRun) {
	r := g.startSlow(t, ctx)
	type result struct {
		evs []pEvent
		err error
	}
	done := make(chan result, 1)
	go func() {
		evs, err := g.d.subscribe(ctx, r.TaskID)
		done <- result{evs, err}
	}()
	// The subscription is open once the module answered its headers.
	deadline := time.Now().Add(5 * time.Second)
	for !g.subscribed() {
		if time.Now().After(deadline) {
			t.Fatalf("the subscription to %s did not open", r.TaskID)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := g.d.cancel(ctx, r.TaskID); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	var res result
	select {
	case res = <-done:
	case <-ctx.Done():
		t.Fatalf("the subscription did not end after the cancel")
	}
	if res.err != nil {
		t.Fatalf("subscribe after %v: %v", eventsString(res.evs), res.err)
	}
	if len(res.evs) < 2 || res.evs[0].Kind != "task" || res.evs[0].TaskID != r.TaskID || res.evs[0].State != "working" {
		t.Fatalf("subscribe = %v, want the working task %s first", eventsString(res.evs), r.TaskID)
	}
	if last := res.evs[len(res.evs)-1]; last.String() != "status(canceled)" {
		t.Errorf("subscribe ends with %s, want status(canceled) (all %v)", last, eventsString(res.evs))
	}
	g.checkCanceled(t, r.TaskID)
}

// subscribed reports whether the module answered the subscribe's headers.
func (g *gwRun) subscribed() bool {
	for _, e := range g.w.rpcs() {
		if e.rpcMethod() == g.d.op["subscribe"] {
			e.mu.Lock()
			n := e.respBody.Len()
			e.mu.Unlock()
			if n > 0 {
				return true
			}
		}
	}
	return false
}

// gwOwnership: another caller's get is TaskNotFound, and (1.0 clients)
// ListTasks lists the caller's tasks only.
func gwOwnership(t *testing.T, ctx context.Context, g *gwRun) {
	mine, err := g.d.send(ctx, "echo mine", nil, false)
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	wOther := newWire(t)
	other := "o-" + uniq(t)
	wOther.header = http.Header{"X-Caller": {other}}
	od := connectDriver(t, ctx, &peer{Name: "gateway", URL: gatewayURL}, wOther, g.d.name)
	theirs, err := od.send(ctx, "echo theirs", nil, false)
	if err != nil {
		t.Fatalf("send as %s: %v", other, err)
	}
	// Each run reached the agent as its own caller.
	checkGatewayCalls(t, g.p, g.agentVersion, g.agentOps, func(u string) bool { return u == g.caller || u == other })
	var users []string
	for _, c := range g.p.Calls() {
		if c.Method != "" {
			users = append(users, c.XUser+":"+c.Text)
		}
	}
	if want := []string{g.caller + ":echo mine", other + ":echo theirs"}; !slices.Equal(users, want) {
		t.Errorf("the agent's calls (X-User:text) %v, want %v", users, want)
	}
	g.p.ResetCalls()
	if _, err := od.get(ctx, mine.TaskID); !od.is(err, codeTaskNotFound) {
		t.Errorf("get of %s's task as %s: error %v, want TaskNotFound (-32001)", g.caller, other, err)
	}
	if _, err := od.cancel(ctx, mine.TaskID); !od.is(err, codeTaskNotFound) {
		t.Errorf("cancel of %s's task as %s: error %v, want TaskNotFound (-32001)", g.caller, other, err)
	}
	if g.d.name == "v2-1.0" {
		c := connectV10(t, ctx, g.w, gatewayURL)
		list, err := c.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: 50})
		if err != nil {
			t.Fatalf("ListTasks: %v", err)
		}
		var ids []string
		for _, tk := range list.Tasks {
			ids = append(ids, string(tk.ID))
		}
		if !slices.Equal(ids, []string{mine.TaskID}) || list.TotalSize != 1 {
			t.Errorf("ListTasks as %s = %v (totalSize %d), want only %s (not %s's %s)", g.caller, ids, list.TotalSize, mine.TaskID, other, theirs.TaskID)
		}
	}
	// Nothing of this reached the agent: the module answers from its record.
	if m := g.rpcMethods(); len(m) != 0 {
		t.Errorf("the agent got %v for another caller's get and cancel and a list, want nothing", m)
	}
}

// gwJSClient runs the @a2a-js/sdk client suite (js/test/gateway.test.js,
// over 1.0 and, legacyCompat on against the 0.3-only mount, over 0.3)
// through the gateway to p, then checks what p recorded of it: the same
// rules as for the Go clients, and the cancels (two scenarios cancel a
// running task) in p's own version.
func gwJSClient(t *testing.T, p *peer, agentVersion string, agentOps map[string]string) {
	node, dir := nodeSuite(t)
	caller := "js-" + uniq(t)
	p.ResetCalls()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "test/gateway.test.js")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"A2A_GW_URL="+gatewayURL,
		"A2A_GW_LEGACY_URL="+gatewayLegacyURL,
		"A2A_GW_CALLER="+caller,
		"A2A_GW_AGENT_VERSION="+agentVersion,
		"NO_COLOR=1",
	)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test test/gateway.test.js:\n%s", out)
	if err != nil {
		t.Fatalf("node --test test/gateway.test.js failed: %v (its output is above)", err)
	}
	if !strings.Contains(string(out), "ℹ pass 16\n") || !strings.Contains(string(out), "ℹ skipped 0\n") {
		t.Errorf("the node suite did not pass its 16 tests (8 per setup)")
	}
	checkGatewayCalls(t, p, agentVersion, agentOps, func(u string) bool { return strings.HasPrefix(u, caller+".") })
	var cancels int
	for _, m := range p.Methods() {
		if m == agentOps["cancel"] {
			cancels++
		}
	}
	// Two cancels of a running task per setup: each reaches the agent at
	// least once (the aborted run may tell it again).
	if cancels < 4 {
		t.Errorf("the agent got %d %s, want at least 4: %v", cancels, agentOps["cancel"], p.Methods())
	}
}

// TestGatewayCancelBeforeAgentNamesTask: a cancel of a running task that
// comes before the module has read the first frame of the agent's stream
// (a non-blocking send canceled at once) answers canceled and tells the
// agent too, which would go on working otherwise (the @a2a-js/sdk agent's
// task stayed TASK_STATE_WORKING): the module reads the agent's stream on
// until it names its task, then cancels that.
func TestGatewayCancelBeforeAgentNamesTask(t *testing.T) {
	restoreBase(t)
	p := startV03Agent(t, localListener(t))
	loadGateway(t, p)
	ctx := testCtx(t)
	g := &gwRun{p: p, w: newWire(t), caller: "u-" + uniq(t), agentVersion: "0.3", agentOps: ops03}
	g.w.header = http.Header{"X-Caller": {g.caller}}
	g.d = connectDriver(t, ctx, &peer{Name: "gateway", URL: gatewayURL}, g.w, "v2-1.0")
	// The window is short and its width varies: five tries, each of which
	// must reach the agent.
	lost := 0
	for range 5 {
		p.ResetCalls()
		r, err := g.d.send(ctx, "slow", nil, true)
		if err != nil {
			t.Fatalf("send(slow, non-blocking): %v", err)
		}
		c, err := g.d.cancel(ctx, r.TaskID)
		if err != nil || c.State != "canceled" {
			t.Fatalf("cancel = %+v, %v; want canceled", c, err)
		}
		deadline := time.Now().Add(2 * time.Second)
		for !slices.Contains(p.Methods(), "tasks/cancel") && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if !slices.Contains(p.Methods(), "tasks/cancel") {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of 5 cancels did not reach the agent (it got only message/stream for them)", lost)
	}
}

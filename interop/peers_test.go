package interop

import (
	"context"
	"encoding/base64"
	"net/http"
	"slices"
	"testing"
	"time"
)

func decodeB64(s string) string {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "!base64:" + s
	}
	return string(b)
}

// peerCase is one agent and the client flavours that drive it.
type peerCase struct {
	name    string // the peer's Name
	start   func(t *testing.T) *peer
	drivers []string // v2-1.0, v2-0.3-compat, v0.3
}

var peerCases = []peerCase{
	{name: "a2a-go-v2", start: func(t *testing.T) *peer { return startV2Agent(t, localListener(t)) }, drivers: []string{"v2-1.0"}},
	{name: "a2a-go-v2-hybrid", start: func(t *testing.T) *peer { return startV2HybridAgent(t, localListener(t)) }, drivers: []string{"v2-1.0", "v2-0.3-compat", "v0.3"}},
	{name: "a2a-go-v0.3", start: func(t *testing.T) *peer { return startV03Agent(t, localListener(t)) }, drivers: []string{"v0.3", "v2-0.3-compat"}},
	{name: "a2a-js", start: func(t *testing.T) *peer { return startJSAgent(t, 0) }, drivers: []string{"v2-1.0"}},
	{name: "a2a-js-hybrid", start: func(t *testing.T) *peer { return startJSHybridAgent(t, 0) }, drivers: []string{"v2-1.0", "v2-0.3-compat", "v0.3"}},
}

// peerScenarios run against every agent with every client flavour it speaks.
var peerScenarios = []struct {
	name string
	run  func(t *testing.T, ctx context.Context, p *peer, d peerDriver)
}{
	{"SendEcho", peerSendEcho},
	{"SendMsg", peerSendMsg},
	{"StreamEcho", peerStreamEcho},
	{"StreamChunks", peerStreamChunks},
	{"StreamMsg", peerStreamMsg},
	{"AskMultiTurn", peerAsk},
	{"AskMultiTurnStream", peerAskStream},
	{"SlowCancel", peerSlowCancel},
	{"Data", peerData},
	{"Fail", peerFail},
}

// TestPeerAgents drives the real agent servers (a2a-go v2, its 0.3 compat
// surface, a2a-go v0.3, @a2a-js/sdk) with the real clients through the
// whole script, and checks what the agent recorded of each request.
func TestPeerAgents(t *testing.T) {
	for _, pc := range peerCases {
		t.Run(pc.name, func(t *testing.T) {
			// One agent for every client and scenario: node takes a while to boot.
			p := pc.start(t)
			if p.Name != pc.name {
				t.Fatalf("started %q, want %q", p.Name, pc.name)
			}
			for _, dn := range pc.drivers {
				t.Run(dn, func(t *testing.T) {
					for _, sc := range peerScenarios {
						t.Run(sc.name, func(t *testing.T) {
							ctx, w := testCtx(t), newWire(t)
							// Headers a gateway must forward (or must not): each agent
							// records them, and reports X-User back in peerSeen.
							w.header = http.Header{"X-User": {"alice"}, "Authorization": {"Bearer peer-token"}, "Cookie": {"s=1"}}
							d := connectDriver(t, ctx, p, w, dn)
							p.ResetCalls()
							sc.run(t, ctx, p, d)
							if t.Failed() {
								t.Logf("agent %s recorded: %+v", p.Name, p.Calls())
							}
						})
					}
				})
			}
		})
	}
}

func connectDriver(t *testing.T, ctx context.Context, p *peer, w *wire, name string) peerDriver {
	t.Helper()
	switch name {
	case "v2-1.0":
		return v2Driver(t, ctx, p, w, false)
	case "v2-0.3-compat":
		return v2Driver(t, ctx, p, w, true)
	case "v0.3":
		return v03DriverFor(t, ctx, p, w)
	}
	t.Fatalf("unknown driver %q", name)
	return peerDriver{}
}

// checkSeen asserts what the agent says it saw on the request.
func checkSeen(t *testing.T, what string, s *peerSeen, d peerDriver, contextID string) {
	t.Helper()
	want := peerSeen{A2AVersion: d.sentVersion, XUser: "alice", ContextID: contextID}
	if s == nil {
		t.Errorf("%s carries no metadata.peerSeen", what)
		return
	}
	if *s != want {
		t.Errorf("%s peerSeen %+v, want %+v", what, *s, want)
	}
}

// checkCalls asserts the agent's recorded RPCs: methods in order, and the
// headers the client sent on each.
func checkCalls(t *testing.T, p *peer, d peerDriver, ops ...string) []peerCall {
	t.Helper()
	var rpcs []peerCall
	for _, c := range p.Calls() {
		if c.Method == "" {
			continue
		}
		rpcs = append(rpcs, c)
	}
	var got []string
	for _, c := range rpcs {
		got = append(got, c.Method)
		if c.HTTPMethod != http.MethodPost || c.A2AVersion != d.sentVersion || c.XUser != "alice" ||
			c.Authorization != "Bearer peer-token" || c.Cookie != "s=1" {
			t.Errorf("call %s: %s A2A-Version %q X-User %q Authorization %q Cookie %q, want POST %q %q %q %q",
				c.Method, c.HTTPMethod, c.A2AVersion, c.XUser, c.Authorization, c.Cookie, d.sentVersion, "alice", "Bearer peer-token", "s=1")
		}
		wantPath := p.RPC
		if d.sentVersion != "1.0" {
			wantPath = p.RPC03
		}
		if p.URL+c.Path != wantPath {
			t.Errorf("call %s went to %s, want %s", c.Method, p.URL+c.Path, wantPath)
		}
	}
	if want := d.methods(ops...); !slices.Equal(got, want) {
		t.Errorf("agent got methods %v, want %v", got, want)
	}
	return rpcs
}

func peerSendEcho(t *testing.T, ctx context.Context, p *peer, d peerDriver) {
	word := "w" + time.Now().Format("150405.000000")
	r, err := d.send(ctx, "echo "+word, nil, false)
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	if r.Kind != "task" || r.State != "completed" || r.text() != "echo: "+word || len(r.Artifacts) != 1 {
		t.Fatalf("send(echo) = %+v, want a completed task with one artifact %q", r, "echo: "+word)
	}
	checkSeen(t, "artifact", r.Artifacts[0].Seen, d, r.ContextID)
	calls := checkCalls(t, p, d, "send")
	if len(calls) == 1 {
		if c := calls[0]; c.Text != "echo "+word || c.TaskID != "" || c.ContextID != "" {
			t.Errorf("recorded call %+v, want text %q and no task or context id", c, "echo "+word)
		}
	}
}

func peerSendMsg(t *testing.T, ctx context.Context, p *peer, d peerDriver) {
	r, err := d.send(ctx, "msg hi", nil, false)
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	if r.Kind != "message" || r.Text != "msg: hi" || r.TaskID != "" {
		t.Fatalf("send(msg) = %+v, want a message %q with no task", r, "msg: hi")
	}
	checkSeen(t, "message", r.Seen, d, r.ContextID)
	checkCalls(t, p, d, "send")
}

// streamBody drops the leading Task snapshot and a trailing one, which SDKs
// may add, and returns the updates in between.
func streamBody(t *testing.T, evs []pEvent) []pEvent {
	t.Helper()
	if len(evs) == 0 || evs[0].Kind != "task" {
		t.Fatalf("stream %v does not open with the Task", evs)
	}
	body := evs[1:]
	if n := len(body); n > 0 && body[n-1].Kind == "task" {
		body = body[:n-1]
	}
	return body
}

func eventsString(evs []pEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.String()
	}
	return out
}

func peerStreamEcho(t *testing.T, ctx context.Context, p *peer, d peerDriver) {
	evs, err := d.stream(ctx, "echo s", nil)
	if err != nil {
		t.Fatalf("stream after %v: %v", evs, err)
	}
	if evs[0].State != "submitted" {
		t.Errorf("first Task state %s, want submitted", evs[0].State)
	}
	got := eventsString(streamBody(t, evs))
	want := []string{`artifact("echo: s" append=false last=true)`, "status(completed)"}
	if !slices.Equal(got, want) {
		t.Errorf("stream(echo) = %v, want Task then %v", got, want)
	}
	calls := checkCalls(t, p, d, "stream")
	if len(calls) == 1 && calls[0].Accept != "text/event-stream" {
		t.Errorf("stream call Accept %q, want text/event-stream", calls[0].Accept)
	}
}

func peerStreamChunks(t *testing.T, ctx context.Context, p *peer, d peerDriver) {
	evs, err := d.stream(ctx, "stream 3", nil)
	if err != nil {
		t.Fatalf("stream after %v: %v", evs, err)
	}
	body := streamBody(t, evs)
	want := []string{
		"status(working)",
		`artifact("chunk 1 " append=false last=false)`,
		`artifact("chunk 2 " append=true last=false)`,
		`artifact("chunk 3 " append=true last=true)`,
		"status(completed)",
	}
	if got := eventsString(body); !slices.Equal(got, want) {
		t.Fatalf("stream(stream 3) = %v, want Task then %v", got, want)
	}
	if body[1].ArtifactID == "" || body[2].ArtifactID != body[1].ArtifactID || body[3].ArtifactID != body[1].ArtifactID {
		t.Errorf("chunks carry artifact ids %q %q %q, want one id", body[1].ArtifactID, body[2].ArtifactID, body[3].ArtifactID)
	}
	task, err := d.get(ctx, evs[0].TaskID)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if task.State != "completed" || len(task.Artifacts) != 1 || task.text() != "chunk 1 chunk 2 chunk 3 " {
		t.Errorf("get after the stream = %+v, want completed with one artifact %q", task, "chunk 1 chunk 2 chunk 3 ")
	}
	if len(task.Artifacts) == 1 {
		checkSeen(t, "stored artifact", task.Artifacts[0].Seen, d, task.ContextID)
	}
	calls := checkCalls(t, p, d, "stream", "get")
	if len(calls) == 2 && calls[1].TaskID != evs[0].TaskID {
		t.Errorf("get recorded task id %q, want %q", calls[1].TaskID, evs[0].TaskID)
	}
}

func peerStreamMsg(t *testing.T, ctx context.Context, p *peer, d peerDriver) {
	evs, err := d.stream(ctx, "msg s", nil)
	if err != nil {
		t.Fatalf("stream after %v: %v", evs, err)
	}
	if got, want := eventsString(evs), []string{`message("msg: s")`}; !slices.Equal(got, want) {
		t.Fatalf("stream(msg) = %v, want %v", got, want)
	}
	checkSeen(t, "message", evs[0].Seen, d, seenContext(evs[0].Seen))
	checkCalls(t, p, d, "stream")
}

// seenContext is the context id an agent reported, for events that carry no
// context of their own in the reduced form.
func seenContext(s *peerSeen) string {
	if s == nil {
		return ""
	}
	return s.ContextID
}

func peerAsk(t *testing.T, ctx context.Context, p *peer, d peerDriver) {
	first, err := d.send(ctx, "ask", nil, false)
	if err != nil {
		t.Fatalf("send(ask): %v", err)
	}
	if first.Kind != "task" || first.State != "input-required" || first.Status != peerQuestion {
		t.Fatalf("send(ask) = %+v, want input-required asking %q", first, peerQuestion)
	}
	final, err := d.send(ctx, "Ada", &first, false)
	if err != nil {
		t.Fatalf("send(follow-up): %v", err)
	}
	if final.TaskID != first.TaskID || final.ContextID != first.ContextID || final.State != "completed" || final.text() != "hello Ada" {
		t.Fatalf("follow-up = %+v, want task %s completed with %q", final, first.TaskID, "hello Ada")
	}
	checkSeen(t, "artifact", final.Artifacts[0].Seen, d, first.ContextID)
	calls := checkCalls(t, p, d, "send", "send")
	if len(calls) == 2 {
		if c := calls[1]; c.TaskID != first.TaskID || c.ContextID != first.ContextID || c.Text != "Ada" {
			t.Errorf("follow-up recorded %+v, want task %s context %s text Ada", c, first.TaskID, first.ContextID)
		}
	}
}

func peerAskStream(t *testing.T, ctx context.Context, p *peer, d peerDriver) {
	evs, err := d.stream(ctx, "ask", nil)
	if err != nil {
		t.Fatalf("stream(ask) after %v: %v", evs, err)
	}
	if got, want := eventsString(streamBody(t, evs)), []string{`status(input-required "what is your name?")`}; !slices.Equal(got, want) {
		t.Fatalf("stream(ask) = %v, want Task then %v", got, want)
	}
	first, err := d.get(ctx, evs[0].TaskID)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	evs, err = d.stream(ctx, "Ada", &first)
	if err != nil {
		t.Fatalf("stream(follow-up) after %v: %v", evs, err)
	}
	if evs[0].TaskID != first.TaskID || evs[0].State != "working" {
		t.Errorf("follow-up stream opens with task %s %s, want %s working", evs[0].TaskID, evs[0].State, first.TaskID)
	}
	if got, want := eventsString(streamBody(t, evs)), []string{`artifact("hello Ada" append=false last=true)`, "status(completed)"}; !slices.Equal(got, want) {
		t.Errorf("stream(follow-up) = %v, want Task then %v", got, want)
	}
	checkCalls(t, p, d, "stream", "get", "stream")
}

func peerSlowCancel(t *testing.T, ctx context.Context, p *peer, d peerDriver) {
	r, err := d.send(ctx, "slow", nil, true)
	if err != nil {
		t.Fatalf("send(slow, non-blocking): %v", err)
	}
	if r.Kind != "task" || (r.State != "submitted" && r.State != "working") {
		t.Fatalf("send(slow) = %+v, want a submitted or working task", r)
	}
	polls := 1
	for i := 0; r.State != "working" && i < 100; i++ {
		time.Sleep(20 * time.Millisecond)
		if r, err = d.get(ctx, r.TaskID); err != nil {
			t.Fatalf("get: %v", err)
		}
		polls++
	}
	if r.State != "working" {
		t.Fatalf("slow task is %s after 2s, want working", r.State)
	}
	c, err := d.cancel(ctx, r.TaskID)
	if err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if c.TaskID != r.TaskID || c.State != "canceled" {
		t.Errorf("cancel = %+v, want task %s canceled", c, r.TaskID)
	}
	g, err := d.get(ctx, r.TaskID)
	if err != nil {
		t.Fatalf("get after cancel: %v", err)
	}
	if g.State != "canceled" {
		t.Errorf("get after cancel: state %s, want canceled", g.State)
	}
	ops := []string{"send"}
	for range polls - 1 {
		ops = append(ops, "get")
	}
	calls := checkCalls(t, p, d, append(ops, "cancel", "get")...)
	if n := len(calls); n >= 2 && calls[n-2].TaskID != r.TaskID {
		t.Errorf("cancel recorded task id %q, want %q", calls[n-2].TaskID, r.TaskID)
	}
}

func peerData(t *testing.T, ctx context.Context, p *peer, d peerDriver) {
	r, err := d.send(ctx, "data", nil, false)
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
	checkSeen(t, "artifact", r.Artifacts[0].Seen, d, r.ContextID)
	checkCalls(t, p, d, "send")
}

func peerFail(t *testing.T, ctx context.Context, p *peer, d peerDriver) {
	r, err := d.send(ctx, "fail", nil, false)
	if err != nil {
		t.Fatalf("send(fail): %v", err)
	}
	if r.Kind != "task" || r.State != "failed" || r.Status != peerBoom {
		t.Errorf("send(fail) = %+v, want failed with status message %q", r, peerBoom)
	}
	checkCalls(t, p, d, "send")
}

package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// gatewayMount fronts {{.Peer}} (an A2A agent) with the card taken from
// the agent; the owner is the X-Caller header, which header_up passes to
// the agent as X-User.
const gatewayMount = `http://:9080 {
	a2a {
		upstream a2a {{.Peer}} {
			card_refresh 1s
			header_up X-User {http.request.header.X-Caller}
		}
		owner {http.request.header.X-Caller}
		{{.Extra}}
	}
}
`

func loadGateway(t *testing.T, p *peerAgent, extra string) {
	t.Helper()
	load(t, gatewayMount, map[string]any{"Peer": p.URL(), "Extra": extra})
}

// wireCard is the part of a card the gateway tests read.
type wireCard struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Version     string `json:"version"`
	Provider    *struct {
		Organization string `json:"organization"`
	} `json:"provider"`
	Capabilities struct {
		Streaming         bool `json:"streaming"`
		PushNotifications bool `json:"pushNotifications"`
		Extensions        []struct {
			URI string `json:"uri"`
		} `json:"extensions"`
	} `json:"capabilities"`
	Skills []struct {
		ID string `json:"id"`
	} `json:"skills"`
	SupportedInterfaces []struct {
		URL             string `json:"url"`
		ProtocolBinding string `json:"protocolBinding"`
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"supportedInterfaces"`
}

func readCard(t *testing.T) (wireCard, *http.Response) {
	t.Helper()
	resp, body := get(t, "GET", base+"/.well-known/agent-card.json", withHeader("A2A-Version", "1.0"))
	var c wireCard
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, &c); err != nil {
			t.Fatalf("card: %v: %s", err, body)
		}
	}
	return c, resp
}

// waitCard reads the card until cond holds.
func waitCard(t *testing.T, what string, cond func(wireCard, *http.Response) bool) wireCard {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, resp := readCard(t)
		if cond(c, resp) {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("card: %s: still %d %+v", what, resp.StatusCode, c)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The card is the agent's, with the mount's interfaces and capabilities,
// the Caddyfile's fields over it; a changed card is served after the
// refresh with a new ETag, and a refresh of an unchanged card is a 304.
func TestGatewayCard(t *testing.T) {
	p := startPeer(t, protocol.V03, false)
	loadGateway(t, p, "")
	c := waitCard(t, "served", func(_ wireCard, r *http.Response) bool { return r.StatusCode == 200 })
	if c.Name != "Peer 0.3" || c.Description != "An A2A agent behind the gateway." || c.Version != "2.0.0" ||
		c.Provider == nil || c.Provider.Organization != "Peers" || len(c.Skills) != 1 || c.Skills[0].ID != "peer" {
		t.Fatalf("card %+v", c)
	}
	// The module's own capabilities: it streams whatever the agent does,
	// and has no push of its own to offer.
	if !c.Capabilities.Streaming || c.Capabilities.PushNotifications ||
		len(c.Capabilities.Extensions) != 1 || c.Capabilities.Extensions[0].URI != "urn:peer:ext" {
		t.Fatalf("capabilities %+v", c.Capabilities)
	}
	if len(c.SupportedInterfaces) != 2 || c.SupportedInterfaces[0].URL != base+"/a2a" || c.SupportedInterfaces[0].ProtocolVersion != "1.0" ||
		c.SupportedInterfaces[1].ProtocolVersion != "0.3" {
		t.Fatalf("interfaces %+v", c.SupportedInterfaces)
	}
	_, r1 := readCard(t)
	etag := r1.Header.Get("Etag")
	// Unchanged: the refreshes are conditional and answered 304.
	deadline := time.Now().Add(5 * time.Second)
	for {
		p.mu.Lock()
		n := p.notMod
		p.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no conditional refresh of the card")
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.setName("Peer renamed")
	c = waitCard(t, "renamed", func(c wireCard, _ *http.Response) bool { return c.Name == "Peer renamed" })
	if _, r2 := readCard(t); r2.Header.Get("Etag") == etag {
		t.Fatal("the changed card kept its ETag")
	}

	// The Caddyfile's fields win.
	loadGateway(t, p, `name "Edge name"
		skill edge {
			name "Edge"
			description "At the edge."
			tags edge
		}`)
	c = waitCard(t, "overridden", func(c wireCard, r *http.Response) bool { return r.StatusCode == 200 })
	if c.Name != "Edge name" || c.Description != "An A2A agent behind the gateway." || len(c.Skills) != 1 || c.Skills[0].ID != "edge" {
		t.Fatalf("overridden card %+v", c)
	}
}

// Caddy starts while the agent is down: the card is 503 with Retry-After
// until the agent answers (or the Caddyfile's card, when it makes one),
// and runs fail cleanly meanwhile.
func TestGatewayAgentDownAtStart(t *testing.T) {
	p := startPeer(t, protocol.V10, true)
	p.stop()
	loadGateway(t, p, "")
	_, resp := readCard(t)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("card while the agent is down: %d %v", resp.StatusCode, resp.Header)
	}
	task := send10(t, base+"/a2a", msg10("echo hi", "", ""))
	if task.Status.State != "TASK_STATE_FAILED" || task.statusText() != "The agent could not complete the task." {
		t.Fatalf("a send while the agent is down: %+v", task)
	}
	p.restart(t)
	waitCard(t, "up", func(c wireCard, r *http.Response) bool { return r.StatusCode == 200 && c.Name == "Peer 1.0" })
	task = send10(t, base+"/a2a", msg10("echo hi", "", ""))
	if task.Status.State != "TASK_STATE_COMPLETED" || task.text() != "echo: hi" {
		t.Fatalf("a send once the agent is up: %+v", task)
	}

	// With a card of its own in the Caddyfile, that card is served until
	// the agent's comes.
	q := startPeer(t, protocol.V10, true)
	q.stop()
	load(t, gatewayMount, map[string]any{"Peer": q.URL(), "Extra": skillBlock})
	if c, resp := readCard(t); resp.StatusCode != 200 || c.Name != "Test agent" {
		t.Fatalf("the Caddyfile's card while the agent is down: %d %+v", resp.StatusCode, c)
	}
}

// peerKinds are the agents the bridging tests front: each version, with
// and without streaming.
var peerKinds = []struct {
	name    string
	version protocol.Version
	streams bool
}{
	{"1.0 streaming", protocol.V10, true},
	{"1.0 blocking", protocol.V10, false},
	{"0.3 streaming", protocol.V03, true},
	{"0.3 blocking", protocol.V03, false},
}

// Every caller version reaches every agent version: send (blocking and
// not), stream, get, list, cancel, multi-turn and every part kind; the
// agent is always spoken to in its own version with A2A-Version, the
// module's task is the caller's (the agent's ids never show), and the
// caller's credentials stay at the edge.
func TestGatewayBridging(t *testing.T) {
	for _, pk := range peerKinds {
		t.Run(pk.name, func(t *testing.T) {
			p := startPeer(t, pk.version, pk.streams)
			loadGateway(t, p, "")
			waitCard(t, "served", func(_ wireCard, r *http.Response) bool { return r.StatusCode == 200 })
			alice := withHeader("X-Caller", "alice")
			creds := withHeader("Authorization", "Bearer secret")
			url := base + "/a2a"

			// 1.0 caller, blocking echo.
			task := send10(t, url, msg10("echo one", "", "ctx-a"), alice, creds, withHeader("A2A-Extensions", "urn:peer:ext, urn:unknown"))
			if task.Status.State != "TASK_STATE_COMPLETED" || task.text() != "echo: one" || task.ContextID != "ctx-a" ||
				strings.HasPrefix(task.ID, "ptask-") {
				t.Fatalf("1.0 echo: %+v", task)
			}
			// 0.3 caller, blocking echo.
			t03 := send03(t, url, msg03("echo two", ""), alice)
			if t03.Status.State != "completed" || t03.text() != "echo: two" {
				t.Fatalf("0.3 echo: %+v", t03)
			}
			want := map[bool]string{true: "SendStreamingMessage", false: "SendMessage"}[pk.streams]
			if pk.version == protocol.V03 {
				want = map[bool]string{true: "message/stream", false: "message/send"}[pk.streams]
			}
			for _, c := range p.Calls()[:2] {
				if c.Method != want || c.Version != pk.version.String() || c.XUser != "alice" || c.Auth != "" || c.Cookie != "" {
					t.Fatalf("the agent got %+v, want %s in %s as alice, no credentials", c, want, pk.version)
				}
			}
			// The agent's extension, activated by the caller, is passed on;
			// one no card declares is not.
			first := p.Calls()[0]
			if first.TaskID != "" || first.Text != "echo one" || first.ContextID == "" || first.ContextID == "ctx-a" || first.Extensions != "urn:peer:ext" {
				t.Fatalf("first call %+v", first)
			}
			// The agent gets the module's id for the caller's context: the
			// same for every task of it, another for another caller's
			// context of the same name.
			send10(t, url, msg10("echo again", "", "ctx-a"), alice)
			send10(t, url, msg10("echo bob", "", "ctx-a"), withHeader("X-Caller", "bob"))
			calls := p.Calls()
			if again, bob := calls[len(calls)-2], calls[len(calls)-1]; again.ContextID != first.ContextID || bob.ContextID == first.ContextID {
				t.Fatalf("agent context ids: alice %q then %q, bob %q", first.ContextID, again.ContextID, bob.ContextID)
			}

			// Ownership: bob sees none of alice's tasks.
			bob := withHeader("X-Caller", "bob")
			call(t, url, "1.0", "GetTask", map[string]any{"id": task.ID}, bob).fails(t, protocol.CodeTaskNotFound)
			var list struct {
				Tasks []wireTask `json:"tasks"`
			}
			call(t, url, "1.0", "ListTasks", map[string]any{}, alice).ok(t, &list)
			if len(list.Tasks) != 3 {
				t.Fatalf("alice lists %d tasks", len(list.Tasks))
			}

			// Streaming through the module, whatever the agent does.
			s := openStream(t, url, "1.0", "SendStreamingMessage", map[string]any{"message": msg10("stream 3", "", "")}, alice)
			seen, _ := readUntil(t, s, "status:TASK_STATE_COMPLETED")
			// A streaming agent's chunks come as chunks; a blocking
			// agent's whole answer as one artifact update.
			chunks := []string{"artifact:c1 ", "artifact:c2 ", "artifact:c3 "}
			if !pk.streams {
				chunks = []string{"artifact:c1 c2 c3 "}
			}
			var arts []string
			for _, d := range seen {
				if strings.HasPrefix(d, "artifact:") {
					arts = append(arts, d)
				}
			}
			if !slices.Equal(arts, chunks) {
				t.Fatalf("stream frames %q, want the artifact updates %q", seen, chunks)
			}
			s03 := openStream(t, url, "", "message/stream", map[string]any{"message": msg03("echo three", "")}, alice)
			seen, _ = readUntil(t, s03, "status:completed(final)")
			if !slices.Contains(seen, "artifact:echo: three") {
				t.Fatalf("0.3 stream frames %q", seen)
			}

			// Multi-turn: input-required, then the continuation reaches
			// the agent's own task.
			ask := send10(t, url, msg10("ask", "", ""), alice)
			if ask.Status.State != "TASK_STATE_INPUT_REQUIRED" || ask.statusText() != "what is your name?" {
				t.Fatalf("ask: %+v", ask)
			}
			done := send03(t, url, msg03("Ada", ask.ID), alice)
			if done.Status.State != "completed" || done.text() != "hello Ada" {
				t.Fatalf("continuation: %+v", done)
			}
			calls = p.Calls()
			last := calls[len(calls)-1]
			if !strings.HasPrefix(last.TaskID, "ptask-") || last.Text != "Ada" {
				t.Fatalf("the continuation reached the agent as %+v", last)
			}

			// Every part kind.
			d := send10(t, url, msg10("data", "", ""), alice)
			raw := call(t, url, "1.0", "GetTask", map[string]any{"id": d.ID}, alice).Result
			for _, want := range []string{`{"data":{"k":"v"}`, `{"raw":"aGk=","filename":"f.txt","mediaType":"text/plain"}`,
				`{"url":"https://example.com/f.txt","mediaType":"text/plain"}`} {
				if !strings.Contains(string(raw), want) {
					t.Fatalf("data artifacts lack %s: %s", want, raw)
				}
			}

			// A message reply is the task's answer.
			m := send10(t, url, msg10("msg hi", "", ""), alice)
			if m.Status.State != "TASK_STATE_COMPLETED" || m.text() != "msg: hi" {
				t.Fatalf("message answer: %+v", m)
			}

			// Cancel of a running task reaches the agent.
			var res struct {
				Task *wireTask `json:"task"`
			}
			call(t, url, "1.0", "SendMessage", map[string]any{"message": msg10("slow", "", ""),
				"configuration": map[string]any{"returnImmediately": true}}, alice).ok(t, &res)
			waitAgentCall(t, p, func(c peerCall) bool { return c.Text == "slow" })
			time.Sleep(100 * time.Millisecond) // the agent's task id has reached the module
			var canceled wireTask
			call(t, url, "1.0", "CancelTask", map[string]any{"id": res.Task.ID}, alice).ok(t, &canceled)
			if canceled.Status.State != "TASK_STATE_CANCELED" {
				t.Fatalf("cancel: %+v", canceled)
			}
			if pk.streams {
				waitAgentCall(t, p, func(c peerCall) bool { return c.Method == p.codec.MethodName(protocol.MethodCancelTask) })
			} else {
				// An agent that does not stream names its task only in
				// its answer: the cancel aborts the module's call to it,
				// which is all it can be told.
				deadline := time.Now().Add(5 * time.Second)
				for {
					p.mu.Lock()
					n := p.aborted
					p.mu.Unlock()
					if n == 1 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("the agent's call was not aborted by the cancel")
					}
					time.Sleep(10 * time.Millisecond)
				}
			}

			// Canceling a task that waits for input tells the agent too.
			ask = send10(t, url, msg10("ask", "", ""), alice)
			call(t, url, "1.0", "CancelTask", map[string]any{"id": ask.ID}, alice).ok(t, nil)
			n := len(p.Calls())
			waitAgentCall(t, p, func(c peerCall) bool {
				return c.Method == p.codec.MethodName(protocol.MethodCancelTask) && len(p.Calls()) >= n
			})
		})
	}
}

// waitAgentCall waits until the agent has had a call cond accepts.
func waitAgentCall(t *testing.T, p *peerAgent, cond func(peerCall) bool) peerCall {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, c := range p.Calls() {
			if cond(c) {
				return c
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent had no such call; it had %v", p.methods())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The agent's protocol errors about what the caller asked reach it with
// the same code (the module's words, not the agent's); anything else is a
// failed task, the agent's text in the log only.
func TestGatewayErrors(t *testing.T) {
	for _, pk := range peerKinds {
		t.Run(pk.name, func(t *testing.T) {
			p := startPeer(t, pk.version, pk.streams)
			loadGateway(t, p, "")
			waitCard(t, "served", func(_ wireCard, r *http.Response) bool { return r.StatusCode == 200 })
			url := base + "/a2a"
			e := call(t, url, "1.0", "SendMessage", map[string]any{"message": msg10("refuse", "", "")}).fails(t, protocol.CodeInvalidParams)
			if e.Message != "The agent refused the request's parameters" {
				t.Fatalf("refusal message %q", e.Message)
			}
			call(t, url, "", "message/send", map[string]any{"message": msg03("refuse", "")}).fails(t, protocol.CodeInvalidParams)
			// A streaming send refused before any output: the error is
			// the answer, a plain JSON-RPC one as from the agent itself.
			a := call(t, url, "1.0", "SendStreamingMessage", map[string]any{"message": msg10("refuse", "", "")})
			if !pk.streams {
				// An agent that does not stream answers only when the turn
				// is done; the stream is not held for it, so its refusal
				// is a failed task.
				if !strings.Contains(string(a.Body), `"state":"TASK_STATE_FAILED"`) || strings.Contains(string(a.Body), `"error"`) {
					t.Fatalf("streaming send refused by a blocking agent: %s", a.Body)
				}
			} else if e := streamError(t, a, protocol.CodeInvalidParams); e.Message != "The agent refused the request's parameters" || e.Data != nil {
				t.Fatalf("streaming refusal: %s", a.Body)
			}
			for _, word := range []string{"internal", "garbage"} {
				task := send10(t, url, msg10(word, "", ""))
				if task.Status.State != "TASK_STATE_FAILED" || task.statusText() != "The agent could not complete the task." {
					t.Fatalf("%s: %+v", word, task)
				}
				raw, _ := json.Marshal(task)
				if strings.Contains(string(raw), "password") || strings.Contains(string(raw), "not json") {
					t.Fatalf("%s: the agent's text reached the caller: %s", word, raw)
				}
			}
		})
	}
}

// A slow agent over the upstream timeout: the task fails and the agent is
// told to cancel its own. An agent that goes away mid-run fails the task.
func TestGatewaySlowAndRestart(t *testing.T) {
	p := startPeer(t, protocol.V10, true)
	load(t, `http://:9080 {
	a2a {
		upstream a2a {{.Peer}} {
			timeout 500ms
		}
	}
}
`, map[string]any{"Peer": p.URL()})
	waitCard(t, "served", func(_ wireCard, r *http.Response) bool { return r.StatusCode == 200 })
	url := base + "/a2a"
	task := send10(t, url, msg10("slow", "", ""))
	if task.Status.State != "TASK_STATE_FAILED" {
		t.Fatalf("slow: %+v", task)
	}
	waitAgentCall(t, p, func(c peerCall) bool { return c.Method == "CancelTask" })

	var res struct {
		Task *wireTask `json:"task"`
	}
	load(t, gatewayMount, map[string]any{"Peer": p.URL(), "Extra": ""})
	call(t, url, "1.0", "SendMessage", map[string]any{"message": msg10("slow", "", ""),
		"configuration": map[string]any{"returnImmediately": true}}).ok(t, &res)
	waitAgentCall(t, p, func(c peerCall) bool { return c.Text == "slow" && c.Method == "SendStreamingMessage" })
	p.stop()
	got := waitState(t, url, res.Task.ID, "TASK_STATE_FAILED")
	if got.statusText() != "The agent could not complete the task." {
		t.Fatalf("after the agent went away: %+v", got)
	}
	p.restart(t)
	if task := send10(t, url, msg10("echo back", "", "")); task.text() != "echo: back" {
		t.Fatalf("after the restart: %+v", task)
	}
	_ = fmt.Sprint
}

// A client that vanishes mid-stream does not stop the relay; a resubscribe
// with Last-Event-ID resumes from the module's own record (the task as it
// is now, the agent never asked), and the cancel reaches both.
func TestGatewayResubscribe(t *testing.T) {
	p := startPeer(t, protocol.V03, true)
	loadGateway(t, p, "")
	waitCard(t, "served", func(_ wireCard, r *http.Response) bool { return r.StatusCode == 200 })
	url := base + "/a2a"
	alice := withHeader("X-Caller", "alice")
	s := openStream(t, url, "1.0", "SendStreamingMessage", map[string]any{"message": msg10("slow", "", "")}, alice)
	first, _ := s.next(t)
	var head struct {
		Result struct {
			Task wireTask `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal(first.Data, &head); err != nil || head.Result.Task.ID == "" || first.ID == "" {
		t.Fatalf("first frame %s (id %q): %v", first.Data, first.ID, err)
	}
	id := head.Result.Task.ID
	s.close()
	waitAgentCall(t, p, func(c peerCall) bool { return c.Text == "slow" })
	if got := getTask10(t, url, id, alice); got.Status.State != "TASK_STATE_WORKING" {
		t.Fatalf("after the client left: %s", got.Status.State)
	}
	r := openStream(t, url, "", "tasks/resubscribe", map[string]any{"id": id}, alice, withHeader("Last-Event-ID", first.ID))
	var seen []string
	f, _ := r.next(t)
	seen = append(seen, describe(t, f))
	call(t, url, "1.0", "CancelTask", map[string]any{"id": id}, alice).ok(t, nil)
	more, _ := readUntil(t, r, "status:canceled(final)")
	seen = append(seen, more...)
	// The working status after first.ID is in the task: not sent again.
	if !slices.Equal(seen, []string{"task:working", "status:canceled(final)"}) {
		t.Fatalf("resubscribed frames %q", seen)
	}
	r.ended(t)
	waitAgentCall(t, p, func(c peerCall) bool { return c.Method == "tasks/cancel" })
	if m := p.methods(); slices.Contains(m, "tasks/resubscribe") {
		t.Fatalf("the agent's calls %v", m)
	}
}

// reply message: each send is answered with one Message made of the
// agent's answer, nothing stored.
func TestGatewayReplyMessage(t *testing.T) {
	p := startPeer(t, protocol.V10, true)
	loadGateway(t, p, "reply message")
	waitCard(t, "served", func(_ wireCard, r *http.Response) bool { return r.StatusCode == 200 })
	var m wireMessage
	call(t, base+"/a2a", "", "message/send", map[string]any{"message": msg03("echo hi", "")}).ok(t, &m)
	if m.Kind != "message" || m.Role != "agent" || len(m.Parts) != 1 || m.Parts[0].Text != "echo: hi" {
		t.Fatalf("reply %+v", m)
	}
	call(t, base+"/a2a", "", "message/send", map[string]any{"message": msg03("msg hey", "")}).ok(t, &m)
	if m.Parts[0].Text != "msg: hey" {
		t.Fatalf("reply %+v", m)
	}
}

// A card that fails validation is not served: the one before stays.
func TestGatewayInvalidCardKept(t *testing.T) {
	p := startPeer(t, protocol.V10, true)
	loadGateway(t, p, "")
	waitCard(t, "served", func(c wireCard, r *http.Response) bool { return r.StatusCode == 200 && c.Name == "Peer 1.0" })
	p.setName("")
	p.mu.Lock()
	gets := p.cardGets
	p.mu.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	for {
		p.mu.Lock()
		n := p.cardGets
		p.mu.Unlock()
		if n >= gets+2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the card was not fetched again")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if c, r := readCard(t); r.StatusCode != 200 || c.Name != "Peer 1.0" {
		t.Fatalf("after an invalid card: %d %+v", r.StatusCode, c)
	}
}

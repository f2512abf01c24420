package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// peerAgent is an A2A agent for the gateway tests: a real HTTP server
// speaking A2A JSON-RPC in one version (0.3 or 1.0) with the protocol
// package's server codecs. What it does is chosen by the first word of
// the message's text:
//
//	echo X    → a completed task with the artifact "echo: X"
//	msg X     → a Message "msg: X" (no task)
//	stream N  → working, N chunks of one artifact ("c1 ", "c2 ", …), completed
//	ask       → input-required "what is your name?"; the next message T
//	            in that task → the artifact "hello T", completed
//	slow      → working, then nothing until tasks/cancel (→ canceled)
//	refuse    → the JSON-RPC error -32602
//	internal  → the JSON-RPC error -32603
//	garbage   → an answer that is not JSON
//	data      → a data part, a file by bytes and a file by URI
//
// The real SDK agents (a2a-go, @a2a-js/sdk) are in the interop module;
// this one can also misbehave on demand and restart.
type peerAgent struct {
	t       *testing.T
	version protocol.Version
	codec   protocol.Codec
	// streams: the card says capabilities.streaming, and message/stream
	// is served.
	streams bool
	ln      net.Listener
	srv     *httptest.Server

	mu        sync.Mutex
	name      string
	calls     []peerCall
	cardGets  int
	notMod    int
	tasks     map[string]*protocol.Task
	waiting   map[string]chan struct{} // slow tasks, closed on cancel
	nextID    int
	cardCode  int // non-zero: the card answers this status
	aborted   int // blocking sends whose caller went away while the agent worked
	sseCancel map[string]bool
}

// peerCall is one JSON-RPC request the agent got.
type peerCall struct {
	Method, Version, XUser, Auth, Cookie, Extensions string
	TaskID, ContextID, Text                          string
}

func startPeer(t *testing.T, v protocol.Version, streams bool) *peerAgent {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &peerAgent{t: t, version: v, codec: protocol.NewCodec(v, protocol.Limits{}), streams: streams, ln: ln,
		name: "Peer " + v.String(), tasks: map[string]*protocol.Task{}, waiting: map[string]chan struct{}{}}
	p.serve()
	return p
}

func (p *peerAgent) serve() {
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(p.handle))
	p.srv.Listener.Close()
	p.srv.Listener = p.ln
	p.srv.Start()
	p.t.Cleanup(p.stop)
}

// URL is the agent's base URL.
func (p *peerAgent) URL() string { return "http://" + p.ln.Addr().String() }

// stop closes the server (the agent goes down); restart brings it back
// on the same address with its tasks.
func (p *peerAgent) stop() {
	// The connections go first, as in a crash: a slow task's stream must
	// not get to say canceled before it is cut.
	p.srv.CloseClientConnections()
	p.mu.Lock()
	for id, ch := range p.waiting {
		close(ch)
		delete(p.waiting, id)
	}
	p.mu.Unlock()
	p.srv.Close()
}

func (p *peerAgent) restart(t *testing.T) {
	t.Helper()
	addr := p.ln.Addr().String()
	var err error
	for range 50 {
		if p.ln, err = net.Listen("tcp", addr); err == nil {
			p.serve()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("restart on %s: %v", addr, err)
}

func (p *peerAgent) setName(n string) {
	p.mu.Lock()
	p.name = n
	p.mu.Unlock()
}

func (p *peerAgent) Calls() []peerCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]peerCall(nil), p.calls...)
}

func (p *peerAgent) methods() []string {
	var m []string
	for _, c := range p.Calls() {
		m = append(m, c.Method)
	}
	return m
}

func (p *peerAgent) handle(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/.well-known/agent-card.json":
		p.serveCard(w, r)
	case r.URL.Path == "/rpc" && r.Method == http.MethodPost:
		p.serveRPC(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (p *peerAgent) card() []byte {
	p.mu.Lock()
	name := p.name
	p.mu.Unlock()
	card := &protocol.AgentCard{
		Name:               name,
		Description:        "An A2A agent behind the gateway.",
		Version:            "2.0.0",
		Provider:           &protocol.Provider{Organization: "Peers", URL: "https://peers.example"},
		Streaming:          p.streams,
		PushNotifications:  true,
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain", "application/json"},
		Extensions:         []protocol.Extension{{URI: "urn:peer:ext", Description: "an extension of the peer's"}},
		Skills:             []protocol.Skill{{ID: "peer", Name: "Peer", Description: "Does peer things.", Tags: []string{"peer"}}},
		Interfaces:         []protocol.Interface{{URL: p.URL() + "/rpc", Binding: "JSONRPC", Version: p.version}},
	}
	variant := protocol.CardV10
	if p.version == protocol.V03 {
		variant = protocol.CardHybrid
	}
	return protocol.RenderCard(card, variant)
}

func (p *peerAgent) serveCard(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.cardGets++
	code := p.cardCode
	p.mu.Unlock()
	if code != 0 {
		http.Error(w, "no card", code)
		return
	}
	body := p.card()
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	w.Header().Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		p.mu.Lock()
		p.notMod++
		p.mu.Unlock()
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

func (p *peerAgent) newID(prefix string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nextID++
	return prefix + "-" + strconv.Itoa(p.nextID)
}

func (p *peerAgent) serveRPC(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req, perr := protocol.DecodeRequestLimit(body, 0)
	if perr != nil {
		p.rpcError(w, nil, perr)
		return
	}
	m, ok := p.codec.Method(req.Method)
	c := peerCall{Method: req.Method, Version: r.Header.Get("A2A-Version"), XUser: r.Header.Get("X-User"),
		Auth: r.Header.Get("Authorization"), Cookie: r.Header.Get("Cookie"),
		Extensions: r.Header.Get("A2A-Extensions") + r.Header.Get("X-A2A-Extensions")}
	if !ok {
		p.record(c)
		p.rpcError(w, req.ID, protocol.ErrMethodNotFound(req.Method))
		return
	}
	switch m {
	case protocol.MethodSend, protocol.MethodStream:
		sp, err := p.codec.DecodeSend(req.Params)
		if err != nil {
			p.record(c)
			p.rpcError(w, req.ID, err.(*protocol.Error))
			return
		}
		c.TaskID, c.ContextID = sp.Message.TaskID, sp.Message.ContextID
		if len(sp.Message.Parts) > 0 {
			c.Text = sp.Message.Parts[0].Text
		}
		p.record(c)
		p.send(w, r, req.ID, sp, m == protocol.MethodStream)
	case protocol.MethodGetTask:
		gp, _ := p.codec.DecodeGetTask(req.Params)
		c.TaskID = gp.ID
		p.record(c)
		p.mu.Lock()
		t := p.tasks[gp.ID]
		var cp protocol.Task
		if t != nil {
			cp = *t
		}
		p.mu.Unlock()
		if t == nil {
			p.rpcError(w, req.ID, protocol.ErrTaskNotFound(gp.ID))
			return
		}
		p.result(w, req.ID, p.codec.AppendTask(nil, &cp))
	case protocol.MethodCancelTask:
		tp, _ := p.codec.DecodeTaskID(req.Params)
		c.TaskID = tp.ID
		p.record(c)
		p.mu.Lock()
		t := p.tasks[tp.ID]
		if t == nil || t.Status.State.Terminal() {
			p.mu.Unlock()
			p.rpcError(w, req.ID, protocol.ErrTaskNotCancelable(tp.ID))
			return
		}
		t.Status = protocol.TaskStatus{State: protocol.StateCanceled, Timestamp: time.Now().UTC()}
		if ch := p.waiting[tp.ID]; ch != nil {
			close(ch)
			delete(p.waiting, tp.ID)
		}
		cp := *t
		p.mu.Unlock()
		p.result(w, req.ID, p.codec.AppendTask(nil, &cp))
	default:
		p.record(c)
		p.rpcError(w, req.ID, protocol.ErrUnsupportedOperation("not here"))
	}
}

func (p *peerAgent) record(c peerCall) {
	p.mu.Lock()
	p.calls = append(p.calls, c)
	p.mu.Unlock()
}

func (p *peerAgent) rpcError(w http.ResponseWriter, id []byte, e *protocol.Error) {
	if id == nil {
		id = []byte("null")
	}
	b := protocol.AppendErrorHead(nil, id)
	b = protocol.AppendResponseEnd(p.codec.AppendError(b, e))
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func (p *peerAgent) result(w http.ResponseWriter, id, result []byte) {
	b := protocol.AppendResponseEnd(append(protocol.AppendResultHead(nil, id), result...))
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func textPart(s string) protocol.Part { return protocol.Part{Kind: protocol.PartText, Text: s} }

func agentMsg(taskID, contextID, text string) *protocol.Message {
	return &protocol.Message{ID: "am-" + strconv.FormatInt(time.Now().UnixNano(), 36), TaskID: taskID, ContextID: contextID,
		Role: protocol.RoleAgent, Parts: []protocol.Part{textPart(text)}}
}

// send runs the behaviour the message asks for; a stream's events go out
// as SSE frames, a blocking send answers the task as it ends.
func (p *peerAgent) send(w http.ResponseWriter, r *http.Request, id []byte, sp *protocol.SendParams, stream bool) {
	text := ""
	if len(sp.Message.Parts) > 0 {
		text = sp.Message.Parts[0].Text
	}
	word, rest, _ := strings.Cut(text, " ")
	switch word {
	case "refuse":
		p.rpcError(w, id, protocol.ErrInvalidParams("peer refuses", protocol.FieldViolation{Field: "message", Description: "refused"}))
		return
	case "internal":
		p.rpcError(w, id, &protocol.Error{Code: protocol.CodeInternal, Message: "peer internals: db password wrong"})
		return
	case "garbage":
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("{not json"))
		return
	case "msg":
		m := agentMsg("", sp.Message.ContextID, "msg: "+rest)
		if stream {
			p.frames(w, id, []protocol.Event{{Message: m}}, nil)
		} else {
			p.result(w, id, p.codec.AppendSendResult(nil, &protocol.Event{Message: m}))
		}
		return
	}
	// A task: a new one, or the continuation of an input-required one.
	p.mu.Lock()
	var t *protocol.Task
	if tid := sp.Message.TaskID; tid != "" {
		t = p.tasks[tid]
		if t == nil || t.Status.State != protocol.StateInputRequired {
			p.mu.Unlock()
			p.rpcError(w, id, protocol.ErrTaskNotFound(tid))
			return
		}
	} else {
		p.nextID++
		ctxID := sp.Message.ContextID
		if ctxID == "" {
			ctxID = "pctx-" + strconv.Itoa(p.nextID)
		}
		t = &protocol.Task{ID: "ptask-" + strconv.Itoa(p.nextID), ContextID: ctxID}
		p.tasks[t.ID] = t
	}
	cont := t.Status.State == protocol.StateInputRequired
	t.Status = protocol.TaskStatus{State: protocol.StateWorking, Timestamp: time.Now().UTC()}
	snap := *t
	p.mu.Unlock()

	status := func(st protocol.TaskState, msg string) protocol.Event {
		s := protocol.TaskStatus{State: st, Timestamp: time.Now().UTC()}
		if msg != "" {
			s.Message = agentMsg(t.ID, t.ContextID, msg)
		}
		return protocol.Event{Status: &protocol.StatusUpdate{TaskID: t.ID, ContextID: t.ContextID, Status: s,
			Final: st.Terminal() || st.Interrupted()}}
	}
	artifact := func(aid string, parts []protocol.Part, appendTo, last bool) protocol.Event {
		return protocol.Event{Artifact: &protocol.ArtifactUpdate{TaskID: t.ID, ContextID: t.ContextID,
			Artifact: protocol.Artifact{ID: aid, Parts: parts}, Append: appendTo, LastChunk: last}}
	}
	var evs []protocol.Event
	var wait chan struct{}
	switch {
	case cont:
		evs = append(evs, artifact("hello", []protocol.Part{textPart("hello " + text)}, false, true), status(protocol.StateCompleted, ""))
	case word == "echo":
		evs = append(evs, artifact("echo", []protocol.Part{textPart("echo: " + rest)}, false, true), status(protocol.StateCompleted, ""))
	case word == "stream":
		n, _ := strconv.Atoi(rest)
		evs = append(evs, status(protocol.StateWorking, "on it"))
		for i := 1; i <= n; i++ {
			evs = append(evs, artifact("s", []protocol.Part{textPart("c" + strconv.Itoa(i) + " ")}, i > 1, i == n))
		}
		evs = append(evs, status(protocol.StateCompleted, ""))
	case word == "ask":
		evs = append(evs, status(protocol.StateInputRequired, "what is your name?"))
	case word == "data":
		evs = append(evs, artifact("d", []protocol.Part{
			{Kind: protocol.PartData, Data: []byte(`{"k":"v"}`)},
			{Kind: protocol.PartFile, Raw: []byte("hi"), Filename: "f.txt", MediaType: "text/plain"},
			{Kind: protocol.PartFile, URL: "https://example.com/f.txt", MediaType: "text/plain"},
		}, false, true), status(protocol.StateCompleted, ""))
	case word == "slow":
		wait = make(chan struct{})
		p.mu.Lock()
		p.waiting[t.ID] = wait
		p.mu.Unlock()
		evs = append(evs, status(protocol.StateWorking, ""))
	default:
		evs = append(evs, status(protocol.StateFailed, "boom"))
	}
	if stream {
		first := snap
		first.Status.State = protocol.StateSubmitted
		if cont {
			first.Status.State = protocol.StateWorking
		}
		p.frames(w, id, append([]protocol.Event{{Task: &first}}, evs...), func(ev protocol.Event) { p.apply(t.ID, ev) })
		if wait != nil {
			p.waitCanceled(w, r, id, t, wait)
		}
		return
	}
	for _, ev := range evs {
		p.apply(t.ID, ev)
	}
	if wait != nil {
		select {
		case <-wait:
		case <-r.Context().Done():
			p.mu.Lock()
			p.aborted++
			p.mu.Unlock()
			return
		}
	}
	p.mu.Lock()
	cp := *p.tasks[t.ID]
	p.mu.Unlock()
	p.result(w, id, p.codec.AppendSendResult(nil, &protocol.Event{Task: &cp}))
}

// apply records ev in the agent's task.
func (p *peerAgent) apply(taskID string, ev protocol.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.tasks[taskID]
	switch {
	case ev.Status != nil:
		t.Status = ev.Status.Status
	case ev.Artifact != nil:
		a := ev.Artifact.Artifact
		for i := range t.Artifacts {
			if t.Artifacts[i].ID == a.ID {
				if ev.Artifact.Append {
					t.Artifacts[i].Parts = append(t.Artifacts[i].Parts, a.Parts...)
				} else {
					t.Artifacts[i] = a
				}
				return
			}
		}
		t.Artifacts = append(t.Artifacts, a)
	}
}

// frames writes evs as SSE frames, flushing each, applying each first.
func (p *peerAgent) frames(w http.ResponseWriter, id []byte, evs []protocol.Event, apply func(protocol.Event)) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for i := range evs {
		if apply != nil && evs[i].Task == nil {
			apply(evs[i])
		}
		p.frame(w, id, &evs[i])
		rc.Flush()
	}
}

func (p *peerAgent) frame(w io.Writer, id []byte, ev *protocol.Event) {
	b := protocol.AppendResponseEnd(p.codec.AppendStreamResult(protocol.AppendResultHead(nil, id), ev))
	var buf bytes.Buffer
	buf.WriteString("data: ")
	buf.Write(b)
	buf.WriteString("\n\n")
	w.Write(buf.Bytes())
}

// waitCanceled holds a slow task's stream open until it is canceled, then
// sends the canceled status.
func (p *peerAgent) waitCanceled(w http.ResponseWriter, r *http.Request, id []byte, t *protocol.Task, wait chan struct{}) {
	select {
	case <-wait:
	case <-r.Context().Done():
		return
	}
	ev := protocol.Event{Status: &protocol.StatusUpdate{TaskID: t.ID, ContextID: t.ContextID, Final: true,
		Status: protocol.TaskStatus{State: protocol.StateCanceled, Timestamp: time.Now().UTC()}}}
	p.frame(w, id, &ev)
	http.NewResponseController(w).Flush()
}

var _ = context.Background
var _ = fmt.Sprint

package interop

import (
	"context"
	"encoding/base64"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"

	a2a03 "github.com/a2aproject/a2a-go/a2a"
	a2asrv03 "github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"
)

// startV03Agent starts an a2a-go v0.3 agent (A2A 0.3, JSON-RPC) on ln. Its
// card is a 0.3 card: url = URL+"/rpc", preferredTransport JSONRPC,
// protocolVersion 0.3, streaming true.
func startV03Agent(t *testing.T, ln net.Listener) *peer {
	t.Helper()
	base := baseURL(ln)
	card := &a2a03.AgentCard{
		Name:               "a2a-go v0.3 peer",
		Description:        "Scripted A2A agent for gateway tests",
		Version:            "1.0.0",
		URL:                base + peerRPCPath,
		PreferredTransport: a2a03.TransportProtocolJSONRPC,
		ProtocolVersion:    "0.3.0",
		Capabilities:       a2a03.AgentCapabilities{Streaming: true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             []a2a03.AgentSkill{{ID: "script", Name: "Script", Description: "echo, msg, stream, ask, slow, data, fail", Tags: []string{"test"}}},
	}
	handler := a2asrv03.NewHandler(&v03PeerExecutor{})
	mux := http.NewServeMux()
	mux.Handle(peerRPCPath, a2asrv03.NewJSONRPCHandler(handler))
	mux.Handle(a2asrv03.WellKnownAgentCardPath, a2asrv03.NewStaticAgentCardHandler(card))
	return serveGoPeer(t, ln, &callLog{}, mux, &peer{
		Name: "a2a-go-v0.3", URL: base, RPC: base + peerRPCPath, RPC03: base + peerRPCPath, Version: "0.3",
	})
}

// v03PeerExecutor runs the peer script on a2a-go v0.3.
type v03PeerExecutor struct {
	mu       sync.Mutex
	canceled map[a2a03.TaskID]chan struct{}
}

func (e *v03PeerExecutor) cancelChan(id a2a03.TaskID) chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.canceled == nil {
		e.canceled = map[a2a03.TaskID]chan struct{}{}
	}
	ch, ok := e.canceled[id]
	if !ok {
		ch = make(chan struct{})
		e.canceled[id] = ch
	}
	return ch
}

func v03Seen(ctx context.Context, rc *a2asrv03.RequestContext) peerSeen {
	s := peerSeen{ContextID: rc.ContextID}
	if cc, ok := a2asrv03.CallContextFrom(ctx); ok {
		if v, ok := cc.RequestMeta().Get("A2A-Version"); ok && len(v) > 0 {
			s.A2AVersion = v[0]
		}
		if v, ok := cc.RequestMeta().Get("X-User"); ok && len(v) > 0 {
			s.XUser = v[0]
		}
	}
	return s
}

func v03FirstText(m *a2a03.Message) string {
	if m == nil {
		return ""
	}
	for _, p := range m.Parts {
		if t, ok := p.(a2a03.TextPart); ok {
			return t.Text
		}
	}
	return ""
}

// Execute implements a2asrv.AgentExecutor (v0.3): events go to the queue,
// and the status that ends the interaction carries final=true, as 0.3 wants.
func (e *v03PeerExecutor) Execute(ctx context.Context, rc *a2asrv03.RequestContext, q eventqueue.Queue) error {
	seen := v03Seen(ctx, rc)
	meta := func() map[string]any { return seenMeta(seen) }
	agentMsg := func(text string) *a2a03.Message {
		m := a2a03.NewMessageForTask(a2a03.MessageRoleAgent, rc, a2a03.TextPart{Text: text})
		m.Metadata = meta()
		return m
	}
	artifact := func(parts ...a2a03.Part) *a2a03.TaskArtifactUpdateEvent {
		ev := a2a03.NewArtifactEvent(rc, parts...)
		ev.Artifact.Metadata = meta()
		ev.LastChunk = true
		return ev
	}
	status := func(state a2a03.TaskState, m *a2a03.Message) error {
		ev := a2a03.NewStatusUpdateEvent(rc, state, m)
		ev.Final = state.Terminal() || state == a2a03.TaskStateInputRequired
		return q.Write(ctx, ev)
	}
	text := v03FirstText(rc.Message)

	if st := rc.StoredTask; st != nil && st.Status.State == a2a03.TaskStateInputRequired {
		// Opened with the task, working, as the JS agent must (see the v2 executor).
		snap := *st
		snap.Status = a2a03.TaskStatus{State: a2a03.TaskStateWorking}
		if err := q.Write(ctx, &snap); err != nil {
			return err
		}
		if err := q.Write(ctx, artifact(a2a03.TextPart{Text: "hello " + text})); err != nil {
			return err
		}
		return status(a2a03.TaskStateCompleted, nil)
	}
	verb, arg := peerCommand(text)
	if verb == "msg" {
		m := a2a03.NewMessage(a2a03.MessageRoleAgent, a2a03.TextPart{Text: "msg: " + arg})
		m.ContextID = rc.ContextID
		m.Metadata = meta()
		return q.Write(ctx, m)
	}
	if rc.StoredTask == nil {
		if err := q.Write(ctx, a2a03.NewSubmittedTask(rc, rc.Message)); err != nil {
			return err
		}
	}
	switch verb {
	case "echo":
		if err := q.Write(ctx, artifact(a2a03.TextPart{Text: "echo: " + arg})); err != nil {
			return err
		}
		return status(a2a03.TaskStateCompleted, nil)
	case "stream":
		n, _ := strconv.Atoi(arg)
		if err := status(a2a03.TaskStateWorking, nil); err != nil {
			return err
		}
		var id a2a03.ArtifactID
		for i := 1; i <= n; i++ {
			part := a2a03.TextPart{Text: "chunk " + strconv.Itoa(i) + " "}
			var ev *a2a03.TaskArtifactUpdateEvent
			if i == 1 {
				ev = a2a03.NewArtifactEvent(rc, part)
				id = ev.Artifact.ID
			} else {
				ev = a2a03.NewArtifactUpdateEvent(rc, id, part)
			}
			ev.Artifact.Metadata = meta()
			ev.LastChunk = i == n
			if err := q.Write(ctx, ev); err != nil {
				return err
			}
		}
		return status(a2a03.TaskStateCompleted, nil)
	case "ask":
		return status(a2a03.TaskStateInputRequired, agentMsg(peerQuestion))
	case "slow":
		if err := status(a2a03.TaskStateWorking, nil); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
		case <-e.cancelChan(rc.TaskID):
		}
		return nil
	case "data":
		raw := a2a03.FilePart{File: a2a03.FileBytes{
			FileMeta: a2a03.FileMeta{Name: "f.txt", MimeType: "text/plain"},
			Bytes:    base64.StdEncoding.EncodeToString([]byte("hi")),
		}}
		uri := a2a03.FilePart{File: a2a03.FileURI{
			FileMeta: a2a03.FileMeta{Name: "f.txt", MimeType: "text/plain"},
			URI:      "https://example.com/f.txt",
		}}
		if err := q.Write(ctx, artifact(a2a03.DataPart{Data: map[string]any{"k": "v"}}, raw, uri)); err != nil {
			return err
		}
		return status(a2a03.TaskStateCompleted, nil)
	case "fail":
		return status(a2a03.TaskStateFailed, agentMsg(peerBoom))
	default:
		return status(a2a03.TaskStateFailed, agentMsg("unknown command: "+text))
	}
}

// Cancel implements a2asrv.AgentExecutor (v0.3).
func (e *v03PeerExecutor) Cancel(ctx context.Context, rc *a2asrv03.RequestContext, q eventqueue.Queue) error {
	ch := e.cancelChan(rc.TaskID)
	e.mu.Lock()
	select {
	case <-ch:
	default:
		close(ch)
	}
	e.mu.Unlock()
	ev := a2a03.NewStatusUpdateEvent(rc, a2a03.TaskStateCanceled, nil)
	ev.Final = true
	return q.Write(ctx, ev)
}

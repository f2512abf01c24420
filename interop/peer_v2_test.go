package interop

import (
	"context"
	"iter"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// peerRPCPath and peerRPC03Path are where the Go agents serve JSON-RPC.
const (
	peerRPCPath   = "/rpc"
	peerRPC03Path = "/v03"
)

// startV2Agent starts an a2a-go v2 agent (A2A 1.0, JSON-RPC) on ln. Its card
// declares one 1.0 JSONRPC interface at URL+"/rpc", streaming true.
func startV2Agent(t *testing.T, ln net.Listener) *peer {
	t.Helper()
	base := baseURL(ln)
	card := peerCardV2("a2a-go v2 peer", []*a2a.AgentInterface{
		{URL: base + peerRPCPath, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "1.0"},
	})
	handler := a2asrv.NewHandler(&v2PeerExecutor{})
	mux := http.NewServeMux()
	mux.Handle(peerRPCPath, a2asrv.NewJSONRPCHandler(handler))
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	return serveGoPeer(t, ln, &callLog{}, mux, &peer{
		Name: "a2a-go-v2", URL: base, RPC: base + peerRPCPath, Version: "1.0",
	})
}

// startV2HybridAgent starts an a2a-go v2 agent serving A2A 1.0 at URL+"/rpc"
// and, through the SDK's a2av0 compat handler on the same request handler
// (one task store), A2A 0.3 at URL+"/v03". The card is the SDK's union
// card: 1.0 supportedInterfaces listing both, plus the 0.3 url /
// preferredTransport fields pointing at the 0.3 endpoint.
func startV2HybridAgent(t *testing.T, ln net.Listener) *peer {
	t.Helper()
	base := baseURL(ln)
	card := peerCardV2("a2a-go v2 hybrid peer", []*a2a.AgentInterface{
		{URL: base + peerRPCPath, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "1.0"},
		{URL: base + peerRPC03Path, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version},
	})
	handler := a2asrv.NewHandler(&v2PeerExecutor{})
	mux := http.NewServeMux()
	mux.Handle(peerRPCPath, a2asrv.NewJSONRPCHandler(handler))
	mux.Handle(peerRPC03Path, a2av0.NewJSONRPCHandler(handler))
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewAgentCardHandler(a2av0.NewStaticAgentCardProducer(card)))
	return serveGoPeer(t, ln, &callLog{}, mux, &peer{
		Name: "a2a-go-v2-hybrid", URL: base, RPC: base + peerRPCPath, RPC03: base + peerRPC03Path, Version: "1.0 0.3",
	})
}

func peerCardV2(name string, ifaces []*a2a.AgentInterface) *a2a.AgentCard {
	return &a2a.AgentCard{
		Name:                name,
		Description:         "Scripted A2A agent for gateway tests",
		Version:             "1.0.0",
		SupportedInterfaces: ifaces,
		Capabilities:        a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:   []string{"text/plain"},
		DefaultOutputModes:  []string{"text/plain"},
		Skills:              []a2a.AgentSkill{{ID: "script", Name: "Script", Description: "echo, msg, stream, ask, slow, data, fail", Tags: []string{"test"}}},
	}
}

// v2PeerExecutor runs the peer script on a2a-go v2.
type v2PeerExecutor struct {
	mu sync.Mutex
	// canceled is closed per task when Cancel runs, so "slow" stops even if
	// the SDK kept its context alive.
	canceled map[a2a.TaskID]chan struct{}
}

func (e *v2PeerExecutor) cancelChan(id a2a.TaskID) chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.canceled == nil {
		e.canceled = map[a2a.TaskID]chan struct{}{}
	}
	ch, ok := e.canceled[id]
	if !ok {
		ch = make(chan struct{})
		e.canceled[id] = ch
	}
	return ch
}

func v2Seen(ec *a2asrv.ExecutorContext) peerSeen {
	s := peerSeen{ContextID: ec.ContextID}
	if v, ok := ec.ServiceParams.Get("A2A-Version"); ok && len(v) > 0 {
		s.A2AVersion = v[0]
	}
	if v, ok := ec.ServiceParams.Get("X-User"); ok && len(v) > 0 {
		s.XUser = v[0]
	}
	return s
}

func v2FirstText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	for _, p := range m.Parts {
		if t, ok := p.Content.(a2a.Text); ok {
			return string(t)
		}
	}
	return ""
}

// Execute implements a2asrv.AgentExecutor.
func (e *v2PeerExecutor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		seen := v2Seen(ec)
		meta := func() map[string]any { return seenMeta(seen) }
		agentMsg := func(text string) *a2a.Message {
			m := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(text))
			m.Metadata = meta()
			return m
		}
		artifact := func(parts ...*a2a.Part) *a2a.TaskArtifactUpdateEvent {
			ev := a2a.NewArtifactEvent(ec, parts...)
			ev.Artifact.Metadata = meta()
			ev.LastChunk = true
			return ev
		}
		status := func(state a2a.TaskState, m *a2a.Message) bool {
			return yield(a2a.NewStatusUpdateEvent(ec, state, m), nil)
		}
		text := v2FirstText(ec.Message)

		// A follow-up to "askdoc", written as a2asrv's AgentExecutor docs
		// template: a stored task gets no Task event (a2asrv would end the
		// execution at an input-required one), only working, the answer,
		// completed.
		if st := ec.StoredTask; st != nil && st.Status.State == a2a.TaskStateInputRequired &&
			len(st.History) > 0 && v2FirstText(st.History[0]) == "askdoc" {
			if status(a2a.TaskStateWorking, nil) && yield(artifact(a2a.NewTextPart("hello "+text)), nil) {
				status(a2a.TaskStateCompleted, nil)
			}
			return
		}
		// A follow-up to "ask": the name completes the task.
		if st := ec.StoredTask; st != nil && st.Status.State == a2a.TaskStateInputRequired {
			// The @a2a-js/sdk server demands a Task or Message first on every
			// execution; all agents open a follow-up with the task, working,
			// so their streams match.
			snap := *st
			snap.Status = a2a.TaskStatus{State: a2a.TaskStateWorking}
			if yield(&snap, nil) && yield(artifact(a2a.NewTextPart("hello "+text)), nil) {
				status(a2a.TaskStateCompleted, nil)
			}
			return
		}
		verb, arg := peerCommand(text)
		if verb == "msg" {
			m := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("msg: "+arg))
			m.ContextID = ec.ContextID
			m.Metadata = meta()
			yield(m, nil)
			return
		}
		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		switch verb {
		case "echo":
			if yield(artifact(a2a.NewTextPart("echo: "+arg)), nil) {
				status(a2a.TaskStateCompleted, nil)
			}
		case "stream":
			n, _ := strconv.Atoi(arg)
			if !status(a2a.TaskStateWorking, nil) {
				return
			}
			var id a2a.ArtifactID
			for i := 1; i <= n; i++ {
				part := a2a.NewTextPart("chunk " + strconv.Itoa(i) + " ")
				var ev *a2a.TaskArtifactUpdateEvent
				if i == 1 {
					ev = a2a.NewArtifactEvent(ec, part)
					id = ev.Artifact.ID
				} else {
					ev = a2a.NewArtifactUpdateEvent(ec, id, part)
				}
				ev.Artifact.Metadata = meta()
				ev.LastChunk = i == n
				if !yield(ev, nil) {
					return
				}
			}
			status(a2a.TaskStateCompleted, nil)
		case "ask", "askdoc":
			status(a2a.TaskStateInputRequired, agentMsg(peerQuestion))
		case "slow":
			if !status(a2a.TaskStateWorking, nil) {
				return
			}
			select {
			case <-ctx.Done():
			case <-e.cancelChan(ec.TaskID):
			}
		case "data":
			raw := a2a.NewRawPart([]byte("hi"))
			raw.Filename, raw.MediaType = "f.txt", "text/plain"
			uri := a2a.NewFileURLPart("https://example.com/f.txt", "text/plain")
			uri.Filename = "f.txt"
			if yield(artifact(a2a.NewDataPart(map[string]any{"k": "v"}), raw, uri), nil) {
				status(a2a.TaskStateCompleted, nil)
			}
		case "fail":
			status(a2a.TaskStateFailed, agentMsg(peerBoom))
		default:
			status(a2a.TaskStateFailed, agentMsg("unknown command: "+text))
		}
	}
}

// Cancel implements a2asrv.AgentExecutor: the task ends canceled and a
// running "slow" returns.
func (e *v2PeerExecutor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		ch := e.cancelChan(ec.TaskID)
		e.mu.Lock()
		select {
		case <-ch:
		default:
			close(ch)
		}
		e.mu.Unlock()
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

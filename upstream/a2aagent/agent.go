// Package a2aagent is the a2a kind of upstream: an existing A2A agent (0.3
// or 1.0, JSON-RPC) behind the module. It reads the agent's card for the
// interface to speak to, sends each run as a message send or stream in the
// agent's own version, whatever version the module's caller speaks, and
// turns the agent's tasks, messages and events into upstream events, held
// to the same rules as a caller's input. The module keeps the task record
// (owner, history, event log): the agent's task and context ids are kept
// beside it as the task's upstream reference.
package a2aagent

import (
	"context"
	"errors"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// Defaults of Config: the upstream package's.
const (
	DefaultTimeout       = upstream.DefaultTimeout
	DefaultMaxEventBytes = upstream.DefaultMaxEventBytes
	DefaultMaxBodyBytes  = upstream.DefaultMaxBodyBytes
)

// cancelWait bounds telling the agent of a cancel.
const cancelWait = 10 * time.Second

// Config configures an Agent.
type Config struct {
	// Cards is the agent's card fetcher: the interface runs go to.
	Cards *Cards
	// HTTPConfig: a nil Client is http.DefaultClient; Timeout bounds
	// polling too; MaxEventBytes bounds one frame of a stream and
	// MaxBodyBytes a JSON-RPC answer.
	upstream.HTTPConfig
	// Logger logs what the agent does wrong (nil: nothing).
	Logger *zap.Logger
}

// Agent is the upstream.Agent of an A2A agent.
type Agent struct {
	cfg    Config
	client *http.Client
	rules  *upstream.Rules
	codecs [protocol.V10 + 1]protocol.Codec
	log    *zap.Logger
}

// Interface guards: an A2A agent keeps tasks between turns and refuses
// with protocol errors.
var (
	_ upstream.Agent    = (*Agent)(nil)
	_ upstream.Canceler = (*Agent)(nil)
	_ upstream.Refuser  = (*Agent)(nil)
)

// New checks cfg and applies its defaults.
func New(cfg Config) (*Agent, error) {
	if cfg.Cards == nil {
		return nil, errors.New("upstream: a2a agent without a card fetcher")
	}
	if err := cfg.Fill(); err != nil {
		return nil, err
	}
	a := &Agent{cfg: cfg, client: cfg.Client, rules: cfg.Rules(), log: cfg.Logger}
	if a.client == nil {
		a.client = http.DefaultClient
	}
	if a.log == nil {
		a.log = zap.NewNop()
	}
	for _, v := range []protocol.Version{protocol.V03, protocol.V10} {
		a.codecs[v] = protocol.NewCodec(v, cfg.Limits)
	}
	return a, nil
}

// Refuses: an A2A agent answers a send it will not run with an error the
// caller should get (invalid params, a task it does not know). Only a
// streaming agent's refusal comes before its output: a streaming send
// waits for the first frame, which such an agent sends at once. An agent
// that does not stream answers only when the turn is done, so a streaming
// caller is not kept waiting for it: its refusal fails the task instead.
func (a *Agent) Refuses() bool {
	c := a.cfg.Cards.Current()
	return c != nil && c.Card.Streaming
}

// Run sends the turn to the agent: a streaming send when the agent's card
// says it streams, else a blocking send, polled with tasks/get until the
// task settles if the agent answers before that.
func (a *Agent) Run(ctx context.Context, req *upstream.RunRequest) (upstream.Stream, error) {
	if a.cfg.RequestContext != nil {
		ctx = a.cfg.RequestContext(ctx)
	}
	card, err := a.cfg.Cards.Get(ctx)
	if err != nil {
		return nil, err
	}
	ctx, cancel := upstream.WithRunTimeout(ctx, a.cfg.Timeout, card.Interface.URL)
	s := &runStream{a: a, ctx: ctx, iface: card.Interface, codec: a.codecs[card.Interface.Version],
		req: req, ref: parseRef(req.Upstream), streams: card.Card.Streaming}
	// A continued turn's task is known before the agent says a word: an
	// abort ends its send at once, and the agent is told of that task.
	s.named.Store(s.ref.Task != "")
	// The send outlives an abort of the run until the agent has named
	// its task (aborted): only then can it be told to cancel it.
	reqCtx, reqCancel := context.WithCancel(context.WithoutCancel(ctx))
	s.reqCtx, s.reqCancel = reqCtx, reqCancel
	stop := context.AfterFunc(ctx, s.aborted)
	s.release = func() {
		stop()
		cancel()
	}
	s.cancel = func() {
		s.release()
		reqCancel()
	}
	s.baseArtifacts = s.ref.Artifacts
	if err := s.start(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = ctxErr // the abort, not what it did to the send
		}
		s.finish()
		return nil, upstream.RunError(ctx, err)
	}
	return s, nil
}

// Cancel tells the agent that the task its reference names was canceled.
// An agent that says it cannot (the task ended meanwhile) is no failure.
func (a *Agent) Cancel(ctx context.Context, req *upstream.CancelRequest) error {
	r := parseRef(req.Upstream)
	if r.Task == "" {
		return nil
	}
	if a.cfg.RequestContext != nil {
		ctx = a.cfg.RequestContext(ctx)
	}
	card, err := a.cfg.Cards.Get(ctx)
	if err != nil {
		return err
	}
	c := a.codecs[card.Interface.Version]
	params := c.AppendTaskIDParams(nil, &protocol.TaskIDParams{Tenant: card.Interface.Tenant, ID: r.Task})
	_, err = a.call(ctx, card.Interface, c, protocol.MethodCancelTask, params, req.Headers)
	if rf, ok := errors.AsType[*upstream.Refusal](err); ok &&
		(rf.Code == protocol.CodeTaskNotCancelable || rf.Code == protocol.CodeTaskNotFound) {
		return nil
	}
	return err
}

// cancelLater tells the agent of an aborted run's task, in the
// background: the run is over whatever the agent says.
func (a *Agent) cancelLater(iface protocol.Interface, c protocol.Codec, taskID string, hdr http.Header) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), cancelWait)
		defer cancel()
		if a.cfg.RequestContext != nil {
			ctx = a.cfg.RequestContext(ctx)
		}
		params := c.AppendTaskIDParams(nil, &protocol.TaskIDParams{Tenant: iface.Tenant, ID: taskID})
		if _, err := a.call(ctx, iface, c, protocol.MethodCancelTask, params, hdr); err != nil {
			a.log.Debug("a2a: the agent was not told of an aborted run", zap.String("agent_task_id", taskID), zap.Error(err))
		}
	}()
}

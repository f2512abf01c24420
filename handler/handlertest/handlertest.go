// Package handlertest is the behaviour suite of the A2A service
// (handler.Service) that every binding runs through its own wire, as
// store/storetest is the suite every store passes. Each scenario builds a
// service (handler.New over store/memory and the suite's agent, with the
// scenario's options), asks the caller for a Client of it over the binding
// under test, and drives it with typed calls: a behaviour (a send's
// states, the owner checks, cancel, streams and subscriptions, context
// ids, message replies) is asserted once here and holds over JSON-RPC,
// HTTP+JSON and gRPC alike. What a binding adds of its own (its envelope,
// its status codes, its framing) its client checks as it reads the
// answer; its bytes are pinned by its own tests.
package handlertest

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/memory"
)

// Client is one binding's wire as the suite drives it: typed calls, typed
// answers, errors as *protocol.Error. owner is the caller's identity ("":
// anonymous), which the binding's test server hands the service as
// handler.Caller.Owner; how it travels (a header, gRPC metadata) is the
// client's business. A client fails its test itself when an answer
// breaks its binding's envelope (a status code that does not match the
// error, a response id that is not the request's).
type Client interface {
	// Send is SendMessage (message/send): a Task or a Message.
	Send(ctx context.Context, owner string, p *protocol.SendParams) (*protocol.Event, *protocol.Error)
	// Stream is SendStreamingMessage (message/stream). It returns once
	// the stream's first event is in; an error instead of it, however
	// the binding carries it (a plain answer, an error frame, a gRPC
	// status), is the call's error.
	Stream(ctx context.Context, owner string, p *protocol.SendParams) (Events, *protocol.Error)
	// GetTask is GetTask (tasks/get).
	GetTask(ctx context.Context, owner string, p *protocol.GetTaskParams) (*protocol.Task, *protocol.Error)
	// CancelTask is CancelTask (tasks/cancel).
	CancelTask(ctx context.Context, owner string, id string) (*protocol.Task, *protocol.Error)
	// ListTasks is ListTasks (1.0; a 0.3 client lists over 1.0).
	ListTasks(ctx context.Context, owner string, p *protocol.ListTasksParams) (*protocol.ListTasksResult, *protocol.Error)
	// Subscribe is SubscribeToTask (tasks/resubscribe), resuming after
	// lastEventID ("" for none), and returns as Stream does.
	Subscribe(ctx context.Context, owner string, id, lastEventID string) (Events, *protocol.Error)
}

// Events is an open stream as the suite reads it, ended by the context
// it was opened with.
type Events interface {
	// Next is the stream's next event: io.EOF once the server has ended
	// the stream cleanly, a *protocol.Error when it ended it with an
	// error frame, any other error when the stream broke.
	Next() (protocol.Event, error)
}

// Run runs every scenario: for each, it builds a service (handler.New over
// a fresh store/memory and the suite's agent, with the scenario's
// options) and asks newClient for a client of it over the binding under
// test. newClient serves the service on its own test server, closed with
// t; the suite closes the service's runner and store after it.
func Run(t *testing.T, newClient func(t *testing.T, svc *handler.Service) Client) {
	RunStore(t, func(*testing.T) store.Store { return memory.New(memory.Options{}) }, newClient)
}

// RunStore runs every scenario as Run does, each over a fresh store of
// newStore's: the suite of a store, its tasks, logs, streams and cancels
// as the service uses them (Direct for a client of no binding).
func RunStore(t *testing.T, newStore func(t *testing.T) store.Store, newClient func(t *testing.T, svc *handler.Service) Client) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			e := newEnv(t, newStore(t), sc.opts)
			e.c = newClient(t, e.svc)
			sc.fn(t, e)
		})
	}
}

// scenario is one behaviour of the service: opts adjust the service's
// options (nil: the suite's defaults), fn drives it.
type scenario struct {
	name string
	opts func(*handler.Options)
	fn   func(*testing.T, *env)
}

// scenarios are the suite, grouped as the files that hold them.
var scenarios = []scenario{
	{"SendBlocking", nil, testSendBlocking},
	{"SendNonBlocking", nil, testSendNonBlocking},
	{"SendMultiTurn", nil, testSendMultiTurn},
	{"SendRefusals", nil, testSendRefusals},
	{"SendAgentFails", nil, testSendAgentFails},
	{"SendArtifactsAndParts", nil, testSendArtifacts},
	{"SendBlockingEndsOnUnload", nil, testSendUnload},
	{"HistoryLength", nil, testHistoryLength},
	{"OwnerScope", nil, testOwnerScope},
	{"ListTasksOwnPaged", nil, testListTasks},
	{"ContextIDsPerOwner", nil, testContextIDs},
	{"CancelRunning", nil, testCancelRunning},
	{"CancelInputRequired", nil, testCancelInputRequired},
	{"CancelSettled", nil, testCancelSettled},
	{"CancelWhileStreaming", nil, testCancelWhileStreaming},
	{"StreamOrder", nil, testStreamOrder},
	{"StreamEndsWithTurn", nil, testStreamEndsWithTurn},
	{"StreamAuthRequiredStaysOpen", nil, testStreamAuthRequired},
	{"SubscribeRunning", nil, testSubscribeRunning},
	{"SubscribeInterrupted", nil, testSubscribeInterrupted},
	{"SubscribeRefusals", nil, testSubscribeRefusals},
	{"SubscribeLastEventIDPastEnd", nil, testSubscribePastEnd},
	{"StreamingOff", streamingOff, testStreamingOff},
	{"SendsRetried", nil, testSendsRetried},
	{"SendsConcurrent", nil, testSendsConcurrent},
	{"SendsReusedID", nil, testSendsReusedID},
	{"SendsRetriedTurn", nil, testSendsRetriedTurn},
	{"RepliesRetried", messageReplies, testRepliesRetried},
	{"DirectRetried", directAnswers, testDirectRetried},
	{"MessageReply", messageReplies, testMessageReply},
	{"DirectAnswer", directAnswers, testDirectAnswer},
}

// The owners of the scenarios.
const (
	alice = "alice"
	bob   = "bob"
)

// waitTimeout bounds every wait of a scenario, and the context of every
// call: a hang fails the scenario instead of stalling the run.
const waitTimeout = 10 * time.Second

// env is one scenario's service and what the scenario reads of it beside
// the wire.
type env struct {
	t      *testing.T
	c      Client
	svc    *handler.Service
	agent  *Agent
	runner *handler.Runner
	// store is the service's store, whose log a scenario may read: what
	// every stream of a task replays.
	store store.Store
	// key is the context key the agent's context ids are made under.
	key []byte
	// unload ends the service's config (Options.Unload).
	unload context.CancelFunc
}

func newEnv(t *testing.T, st store.Store, mod func(*handler.Options)) *env {
	logger := zaptest.NewLogger(t)
	runner := handler.NewRunner(logger)
	unload, unloaded := context.WithCancel(context.Background())
	e := &env{t: t, agent: NewAgent(), runner: runner, store: st, key: handler.NewContextKey(), unload: unloaded}
	o := handler.Options{
		Store:      st,
		Agent:      e.agent,
		Runner:     runner,
		Streaming:  true,
		ContextKey: e.key,
		Unload:     unload,
		Logger:     logger,
	}
	if mod != nil {
		mod(&o)
	}
	svc, err := handler.New(o)
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	// Registered before the client's, so run after them: the servers
	// are closed first, then open streams end with the config, then the
	// runs and the store.
	t.Cleanup(func() {
		unloaded()
		if err := runner.Close(); err != nil {
			t.Error(err)
		}
		st.Close()
	})
	return e
}

// ctx is a context for one call or stream, ended with the scenario.
func (e *env) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	e.t.Cleanup(cancel)
	return ctx
}

func streamingOff(o *handler.Options)   { o.Streaming = false }
func messageReplies(o *handler.Options) { o.Reply = handler.ReplyMessage }
func directAnswers(o *handler.Options)  { o.Reply = handler.ReplyAuto }

// Package handler is the A2A service over the neutral model: JSON-RPC
// method dispatch for both wire versions, the task state machine, multi-turn
// rules, history trimming, owner checks, event fan-out to SSE streams,
// cancel, and the Agent Card HTTP answer. It never imports Caddy: the Caddy
// module hands it the caller identity, the body already read under a limit,
// and a context that ends when the config is unloaded.
//
// Choices the specification leaves open, made here once for both versions:
//
//   - A PascalCase (1.0) method without A2A-Version is -32009, as in
//     a2a-python: an absent header means 0.3. The message names the header
//     to send, and the error is encoded as 1.0 because the caller is a 1.0
//     client that forgot it.
//   - A message to a task that is still submitted or working is -32004,
//     like one to a terminal task: only interrupted tasks (input-required,
//     auth-required) take a new turn, so two runs never write one task.
//   - Streams close after a terminal or input-required status; auth-required
//     keeps them open (credentials arrive out of band, A2A 1.0 §7.6.1). A
//     subscribe to a task that is already input-required gets the Task and
//     the stream closes at once.
//   - A cancel is recorded by the cancel request itself, then signalled to
//     the run, so its answer is always the canceled task.
//   - ListTasks for an anonymous caller is an empty list: anonymous callers
//     share the owner "" and must not see each other's tasks.
//   - Every stream event is also stored, so a resubscribe replays exactly
//     what a live stream carried; a Last-Event-ID that is not a position
//     before the current snapshot is ignored (the stream tails from the
//     snapshot) rather than replaying nothing forever.
//   - Extensions: A2A-Extensions and X-A2A-Extensions are both read for
//     every method, and the activated URIs (requested ∩ declared, in the
//     order requested) are echoed under the header name(s) the client used.
//     A required extension not activated refuses every method but the
//     extended card (discovery) with -32008; in 0.3, whose spec only asks
//     for "an appropriate error", it is the same code, the URIs named in the
//     message (0.3 errors carry no data: its clients disagree on the type).
//   - Limits (parts, text, inline file and metadata sizes, JSON depth) are
//     checked while decoding, before any store access: a refused request
//     creates and changes nothing. The error is -32602 (-32600 for depth)
//     naming the limit, with its name and value in the error metadata.
//   - Message replies (Options.Reply = ReplyMessage) are for stateless
//     agents. A send runs the agent within the request and answers one
//     agent Message (new messageId, the request's contextId or a new one,
//     no taskId); no task is created, so GetTask, ListTasks, CancelTask and
//     subscribe find nothing, and a message naming a taskId is -32001. The
//     parts are the main output (text chunks merged, data and file parts
//     in order), then the parts of separate artifacts, then the final
//     status message: an agent ending input-required, auth-required or
//     rejected answers just its words, since there is no task to continue.
//     An agent that said nothing answers one empty text part (a Message
//     needs one). returnImmediately / blocking:false are ignored: A2A says
//     they do nothing for Message replies. A streaming send opens at once,
//     carries heartbeats while the agent works, then exactly one frame (no
//     SSE id: there is no log to resume) and closes.
//   - Every SSE frame (heartbeats included) must be written within
//     Options.WriteTimeout (30s) of its start, or the stream ends: a client
//     that stops reading does not pin a stream. A config unload ends open
//     streams, cutting one blocked in a write at once; the runs go on.
//   - A message reply is bound to its request: the client leaving aborts
//     the agent call (nothing runs on with no task to find it by). A config
//     unload does not cut it: like a proxied request, it finishes on the
//     old server, bounded by the upstream timeout (and a streamed reply's
//     frames by WriteTimeout).
//   - A message reply whose agent fails (a failed status or {"error"},
//     a broken or oversized stream, non-2xx, timeout, refused connection)
//     is -32603 with an error id; the agent's words go to the log only.
//     A2A has no failed Message, and -32006 (invalid agent response) would
//     fit only some of these causes; the A2A SDKs answer a failed
//     message-only executor with -32603 too.
//   - Internal errors are -32603 "Internal error" with a 16-hex-digit
//     error id (1.0: ErrorInfo metadata errorId; 0.3: in the message) that
//     the log line with the underlying error also carries; no Go error,
//     agent or store text ever reaches a caller.
package handler

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// Caller is who makes a request, as the Caddy module resolved it.
type Caller struct {
	// Owner scopes every task access; "" is an anonymous caller.
	Owner string

	// extensions are the extension URIs the request activated; ServeRPC
	// sets them on its own copy from the request headers.
	extensions []string
}

// Options configure an Endpoint.
type Options struct {
	Store  store.Store
	Agent  upstream.Agent
	Runner *Runner
	// Versions lists the wire versions served; empty = both.
	Versions []protocol.Version
	// Streaming enables message/stream, SendStreamingMessage and subscribe.
	Streaming bool
	// InputModes lists the media types the agent accepts (the card's
	// defaultInputModes); empty accepts anything.
	InputModes []string
	// MaxHistory is how many messages a task keeps and re-sends to the
	// agent each turn, the oldest dropped first (0 = 100).
	MaxHistory int
	// MaxHistoryBytes bounds the same history in content bytes
	// (protocol's Size), the newest message always kept (0 = 8 MiB).
	MaxHistoryBytes int
	// MaxTaskOutput bounds what the agent's output held by one task
	// weighs in content bytes: artifacts and agent messages, over all its
	// turns (0 = 16 MiB). A run that would go over it ends the task
	// failed, saying which limit it hit; what came before is kept. A
	// message reply is bounded the same way.
	MaxTaskOutput int
	// MaxRunEvents bounds the events one run (one turn of a task) may
	// add: chunks, artifacts, status updates (0 = 10000). A run that
	// would go over it fails like one over MaxTaskOutput. A settled
	// turn's chunks are compacted by the store, so the bound is per turn.
	MaxRunEvents int
	// MaxArtifacts bounds the artifacts one task holds (0 = 256); an
	// agent that would add more fails the run like one over
	// MaxTaskOutput.
	MaxArtifacts int
	// MaxRunsPerOwner bounds the runs one owner has going at once, over
	// every endpoint sharing the Runner (0 = 32; negative: no bound). A
	// send over it is refused with -32080 before any task is created or
	// changed. The anonymous owner stands for every caller without an
	// identity and is not bounded.
	MaxRunsPerOwner int
	// ContextKey keys the context ids the agent is given (see
	// agentContextID): every endpoint of one store must use the same key,
	// so that an owner's context keeps its agent-side id. nil: a random
	// key of this endpoint's own.
	ContextKey []byte
	// Limits bound what one request may carry (parts per message, text
	// and inline file sizes, metadata size); zero fields take the
	// protocol defaults. A request over a limit is -32602 naming it.
	Limits protocol.Limits
	// MaxJSONDepth bounds the nesting of a request body (0 =
	// protocol.DefaultMaxDepth); a deeper body is -32600.
	MaxJSONDepth int
	// Extensions are the extensions the agent supports, as its card
	// declares them. A client activates them with the A2A-Extensions
	// (1.0) or X-A2A-Extensions (0.3) header; the activated URIs are
	// echoed under the same header and passed to the agent. A request
	// that does not activate a required one is -32008.
	Extensions []protocol.Extension
	// Reply is what a send answers with: a Task (ReplyTask, the default)
	// or one Message, with no task stored (ReplyMessage).
	Reply ReplyMode
	// Heartbeat is the SSE keep-alive comment interval (0 = 15s).
	Heartbeat time.Duration
	// WriteTimeout bounds the write of one SSE frame, heartbeats included
	// (0 = 30s): a client that stops reading loses its stream then,
	// instead of pinning it, and its connection, for good.
	WriteTimeout time.Duration
	// Unload ends when the owning config is unloaded: open streams and
	// blocking waits end cleanly while runs go on, and a stream blocked in
	// a write is cut at once. nil: never.
	Unload context.Context
	Logger *zap.Logger
}

// Endpoint serves the JSON-RPC side of one a2a mount.
type Endpoint struct {
	opts Options
	log  *zap.Logger
	// served[v] reports whether wire version v is served.
	served [protocol.V10 + 1]bool
	// codecs[v] is the codec of version v, enforcing Options.Limits.
	codecs [protocol.V10 + 1]protocol.Codec
	ext    extensions
	// unloaded is Options.Unload's Done channel (nil, never ready, if
	// there is none).
	unloaded <-chan struct{}
	// runLimits are the Options bounds every run of this endpoint keeps.
	runLimits runLimits
}

// Defaults applied by NewEndpoint.
const (
	DefaultMaxHistory      = 100
	DefaultMaxHistoryBytes = 8 << 20
	DefaultMaxTaskOutput   = 16 << 20
	DefaultMaxRunEvents    = 10000
	DefaultMaxArtifacts    = 256
	DefaultMaxRunsPerOwner = 32
	DefaultHeartbeat       = 15 * time.Second
	DefaultWriteTimeout    = 30 * time.Second
)

// NewEndpoint checks o and returns the endpoint.
func NewEndpoint(o Options) (*Endpoint, error) {
	if o.Store == nil {
		return nil, errors.New("handler: Options.Store is required")
	}
	if o.Agent == nil {
		return nil, errors.New("handler: Options.Agent is required")
	}
	if o.Runner == nil {
		return nil, errors.New("handler: Options.Runner is required")
	}
	for _, f := range []struct {
		v    *int
		def  int
		name string
	}{
		{&o.MaxHistory, DefaultMaxHistory, "MaxHistory"},
		{&o.MaxHistoryBytes, DefaultMaxHistoryBytes, "MaxHistoryBytes"},
		{&o.MaxTaskOutput, DefaultMaxTaskOutput, "MaxTaskOutput"},
		{&o.MaxRunEvents, DefaultMaxRunEvents, "MaxRunEvents"},
		{&o.MaxArtifacts, DefaultMaxArtifacts, "MaxArtifacts"},
	} {
		if *f.v < 0 {
			return nil, errors.New("handler: Options." + f.name + " must not be negative")
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if o.MaxRunsPerOwner == 0 {
		o.MaxRunsPerOwner = DefaultMaxRunsPerOwner
	}
	if o.ContextKey == nil {
		o.ContextKey = NewContextKey()
	}
	if o.Heartbeat < 0 {
		return nil, errors.New("handler: Options.Heartbeat must not be negative")
	}
	if o.Reply != ReplyTask && o.Reply != ReplyMessage {
		return nil, errors.New("handler: unknown Options.Reply")
	}
	if o.Heartbeat == 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	if o.WriteTimeout < 0 {
		return nil, errors.New("handler: Options.WriteTimeout must not be negative")
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if err := o.Limits.Validate(); err != nil {
		return nil, err
	}
	o.Limits = o.Limits.WithDefaults()
	if o.MaxJSONDepth < 0 {
		return nil, errors.New("handler: Options.MaxJSONDepth must not be negative")
	}
	if o.MaxJSONDepth == 0 {
		o.MaxJSONDepth = protocol.DefaultMaxDepth
	}
	ext, err := newExtensions(o.Extensions)
	if err != nil {
		return nil, err
	}
	e := &Endpoint{opts: o, log: o.Logger, ext: ext}
	e.runLimits = runLimits{
		history:      o.MaxHistory,
		historyBytes: o.MaxHistoryBytes,
		output:       o.MaxTaskOutput,
		events:       o.MaxRunEvents,
		artifacts:    o.MaxArtifacts,
	}
	if o.Unload != nil {
		e.unloaded = o.Unload.Done()
	}
	for _, v := range []protocol.Version{protocol.V03, protocol.V10} {
		e.codecs[v] = protocol.NewCodec(v, o.Limits)
	}
	if len(o.Versions) == 0 {
		o.Versions = []protocol.Version{protocol.V10, protocol.V03}
	}
	for _, v := range o.Versions {
		if v != protocol.V03 && v != protocol.V10 {
			return nil, errors.New("handler: unknown version in Options.Versions")
		}
		e.served[v] = true
	}
	e.opts.Versions = o.Versions
	return e, nil
}

// ServeRPC answers one JSON-RPC request whose body the caller has already
// read within its size limit. Protocol errors are JSON-RPC bodies on 200;
// errors of a streaming method are one SSE frame, because some clients
// ignore a plain JSON answer to a streaming call.
func (e *Endpoint) ServeRPC(w http.ResponseWriter, r *http.Request, body []byte, c Caller) {
	if st := e.serveRPC(w, r, body, c); st != nil {
		st.Serve()
	}
}

// StartRPC is ServeRPC for a caller that serves streams itself: it answers
// every request as ServeRPC does, except that a stream which has been set
// up is returned unserved, and the caller must call its Serve (at once,
// with w still valid). Why: an open stream parks its goroutine for as long
// as the client listens, on a stack sized by the deepest call the request
// made on its way there. Serving the stream from the caller's frame, after
// decoding and setup have returned, keeps that depth within Go's smallest
// stack that fits an HTTP/2 handler under Caddy: 8 KB per idle stream
// instead of 16 KB (BENCHMARKS.md measures both).
func (e *Endpoint) StartRPC(w http.ResponseWriter, r *http.Request, body []byte, c Caller) *Stream {
	return e.serveRPC(w, r, body, c)
}

// Stream is an SSE answer that has been set up and not yet served.
type Stream struct {
	e             *Endpoint
	ctx           context.Context
	s             *sse
	task          *protocol.Task
	snapID, after string
	first         []store.StoredEvent
}

// Serve sends the stream until it ends: the task settles, the client
// goes or the config is unloaded. Call it once.
func (st *Stream) Serve() {
	defer st.s.finish()
	st.s.cutOnUnload(st.e.opts.Unload)
	st.e.pump(st.ctx, st.s, st.task, st.snapID, st.after, st.first)
}

// Runner executes task runs in the background. It lives as long as the
// store it writes to (not a request or a config), so runs survive reloads.
type Runner struct {
	log       *zap.Logger
	ctx       context.Context
	cancel    context.CancelFunc
	closeWait time.Duration

	mu     sync.Mutex
	closed bool
	// wg counts runs; workers counts the goroutines that execute them.
	wg      sync.WaitGroup
	workers sync.WaitGroup
	// idle hands a run to a worker waiting for one (unbuffered: a send
	// succeeds only if one waits).
	idle chan *run
	// active counts each owner's reserved runs (reserve), under mu.
	active map[string]int
}

// NewRunner returns a runner whose runs log to logger (nil: no logging).
func NewRunner(logger *zap.Logger) *Runner { return newRunner(logger) }

// Close cancels every run still going and waits for them to end, up to a
// bound; a run canceled this way records the task as failed. Runs started
// after Close are refused.
func (r *Runner) Close() error { return r.close() }

// CardServer answers GET/HEAD for the Agent Card with the variant the
// A2A-Version header selects, a strong ETag per variant, Vary: A2A-Version,
// Cache-Control: public, max-age and 304 on If-None-Match. Rendered
// documents are cached per RPC URL.
type CardServer struct {
	s cardServerState
}

// NewCardServer returns a card server for card (Interfaces are filled per
// request from the RPC URL and the served versions).
func NewCardServer(card protocol.AgentCard, versions []protocol.Version, maxAge time.Duration) *CardServer {
	return newCardServer(card, versions, maxAge)
}

// URLFromRequest tells c that the RPC URL it is given is derived from
// each request (its Host, a trusted proxy's X-Forwarded-* headers), not
// configured: the card then varies with a header any client sets, so it is
// cached privately (Cache-Control: private) and no shared cache hands one
// client's card to another. Call it before serving.
func (c *CardServer) URLFromRequest() { c.urlFromRequest() }

// ServeCard writes the card whose interfaces point at rpcURL.
// Methods other than GET and HEAD get 405 with an Allow header.
func (c *CardServer) ServeCard(w http.ResponseWriter, r *http.Request, rpcURL string) {
	c.serveCard(w, r, rpcURL)
}

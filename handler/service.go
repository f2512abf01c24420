package handler

import (
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// Caller is who makes a request, as the binding resolved it.
type Caller struct {
	// Owner scopes every task access; "" is an anonymous caller.
	Owner string
	// Extensions are the extension URIs the request activated
	// (Service.Negotiate); they are passed on to the agent.
	Extensions []string
	// Headers are added to the agent's requests of the runs and cancels
	// this request starts (upstream.RunRequest.Headers).
	Headers http.Header
	// Endpoint is where the call came in (nil if nowhere the service
	// needs to name): a push config's signatures name it as their issuer
	// (PushOptions.Issuer), the extended card's URLs are its.
	Endpoint Endpoint
	// Info, if set, is filled with what the request turns out to be.
	Info *RequestInfo
	// Span is the request's trace span when it is traced (Caddy's
	// tracing handler): the runs it starts are traced under it and pass
	// the trace context on to the agent. Nil: not traced.
	Span trace.Span
}

// Endpoint is where a call came in, resolved by whoever serves the
// service, when the service asks.
type Endpoint interface {
	// RPCURL is the mount's public JSON-RPC URL as the caller reached it.
	RPCURL() (string, error)
}

// Service is the A2A service of one mount: every operation of the
// protocol over the neutral model, whatever binding carries it. The
// bindings call it in two steps: Admit (what is refused before the params
// are read), then the operation.
type Service struct {
	opts Options
	log  *zap.Logger
	// afterWrite is the runs' hook after each stored write (notifier),
	// made once: a method value taken per run would allocate.
	afterWrite func(string, *protocol.Task, string, []protocol.Event)
	// wire is what the bindings read: the codecs, the versions served,
	// the bounds of a request.
	wire Wire
	// ext is replaced whole when a gateway's agent card changes
	// (SetExtensions).
	ext atomic.Pointer[extensions]
	// unloaded is Options.Unload's Done channel (nil, never ready, if
	// there is none).
	unloaded <-chan struct{}
	// runLimits are the Options bounds every run of this service keeps.
	runLimits runLimits
	// key is the context key new runs derive under (Options.ContextKey,
	// or what Options.ContextKeyFunc gave last).
	key atomic.Pointer[[]byte]
	// sends claims the sends of new turns (Options.DedupeWindow), and
	// replies those whose answer may be a direct message (Options.Reply);
	// nil: they are not deduplicated.
	sends   store.Sends
	replies store.Replies
}

// New checks o, fills its defaults and returns the service.
func New(o Options) (*Service, error) {
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
	if o.ContextKey == nil && o.ContextKeyFunc == nil {
		o.ContextKey = NewContextKey()
	}
	if o.Heartbeat < 0 {
		return nil, errors.New("handler: Options.Heartbeat must not be negative")
	}
	if o.Reply != ReplyTask && o.Reply != ReplyMessage && o.Reply != ReplyAuto {
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
	if p := o.Push; p != nil {
		if p.Dispatcher == nil || p.Guard == nil || p.Client == nil {
			return nil, errors.New("handler: Options.Push needs a Dispatcher, a Guard and a Client")
		}
		if p.Timeout < 0 || p.MaxAttempts < 0 || p.MaxConfigs < 0 {
			return nil, errors.New("handler: Options.Push bounds must not be negative")
		}
		po := *p
		if po.Timeout == 0 {
			po.Timeout = DefaultPushTimeout
		}
		if po.MaxAttempts == 0 {
			po.MaxAttempts = DefaultPushMaxAttempts
		}
		if po.MaxConfigs == 0 {
			po.MaxConfigs = DefaultPushMaxConfigs
		}
		o.Push = &po
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
	e := &Service{opts: o, log: o.Logger}
	if o.Push != nil || o.Observer != nil {
		e.afterWrite = e.notify
	}
	if o.ContextKey != nil {
		e.key.Store(&o.ContextKey)
	}
	e.ext.Store(&ext)
	if o.DedupeWindow >= 0 {
		e.sends, _ = store.As[store.Sends](o.Store)
		if o.Reply != ReplyTask {
			e.replies, _ = store.As[store.Replies](o.Store)
		}
	}
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
		e.wire.codecs[v] = protocol.NewCodec(v, o.Limits)
	}
	if len(o.Versions) == 0 {
		o.Versions = []protocol.Version{protocol.V10, protocol.V03}
	}
	for _, v := range o.Versions {
		if v != protocol.V03 && v != protocol.V10 {
			return nil, errors.New("handler: unknown version in Options.Versions")
		}
		e.wire.served[v] = true
	}
	e.opts.Versions = o.Versions
	e.wire.Limits, e.wire.MaxJSONDepth, e.wire.WriteTimeout = o.Limits, o.MaxJSONDepth, o.WriteTimeout
	return e, nil
}

// Wire is what a binding needs of a service beside its operations: the
// codec of each version it serves, and the bounds a request is read and
// an answer written under. The service makes it once.
type Wire struct {
	// served[v] reports whether wire version v is served.
	served [protocol.V10 + 1]bool
	// codecs[v] is the codec of version v, enforcing Limits.
	codecs [protocol.V10 + 1]protocol.Codec
	// Limits are the request limits the codecs enforce, for a binding
	// that makes a codec of its own (0.3's HTTP+JSON and gRPC bodies).
	Limits protocol.Limits
	// MaxJSONDepth is the nesting bound of a request body.
	MaxJSONDepth int
	// WriteTimeout bounds the write of one answer or stream frame.
	WriteTimeout time.Duration
}

// Serves reports whether the service serves wire version v.
func (w *Wire) Serves(v protocol.Version) bool { return v <= protocol.V10 && w.served[v] }

// Codec is the codec of wire version v, enforcing the service's request
// limits: the one a binding decodes params and encodes results with.
func (w *Wire) Codec(v protocol.Version) protocol.Codec { return w.codecs[v] }

// Wire is what the service's bindings read.
func (s *Service) Wire() *Wire { return &s.wire }

// Admit is what the service refuses of a call to method m before its
// params are read: a client that did not activate a required extension
// (n, from Negotiate), a streaming call when streaming is off, and the
// push config methods without push (the extended card, whose refusal
// depends on the version, is ExtendedCard's). nil: go on and decode.
func (s *Service) Admit(m protocol.Method, n *Negotiation) *protocol.Error {
	if needsExtensions(m) {
		if perr := n.requiredError(); perr != nil {
			return perr
		}
	}
	switch m {
	case protocol.MethodStream, protocol.MethodSubscribe:
		return s.streamingError()
	case protocol.MethodPushSet, protocol.MethodPushGet, protocol.MethodPushList, protocol.MethodPushDelete:
		if !s.pushEnabled() {
			return protocol.ErrPushNotSupported()
		}
	}
	return nil
}

// streamingError refuses a streaming call to a service without streaming.
func (s *Service) streamingError() *protocol.Error {
	if s.opts.Streaming {
		return nil
	}
	return protocol.ErrUnsupportedOperation("Streaming is not supported by this agent")
}

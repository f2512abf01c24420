// Package caddya2a is the Caddy module http.handlers.a2a: it turns any HTTP
// agent into an A2A (Agent2Agent) peer. Caddy keeps TLS, auth, rate limits
// and routing; this module serves the Agent Card and the JSON-RPC endpoint
// of both A2A wire versions (0.3 and 1.0) and calls the agent behind it
// through an upstream guest module (the http kind speaks the agent
// contract of docs/contract.md).
//
// It is the repository's Caddy adapter, the only package that imports
// Caddy, and it configures like Caddy's own handlers: the Caddyfile parser
// (caddyfile.go) parses, naming the line of a syntax error, and runs
// Validate's checks on what it read so that a bad value names its block's
// line too; Provision fills defaults, resolves global placeholders, loads
// the guest modules (guests.go: the store and the upstream, and the pool
// of the stores they open), runs Validate's checks of every setting
// (check.go; the same checks and messages for JSON and Caddyfile
// configs), and only then builds the service and its bindings (the card:
// card.go; the limits: limits.go).
package caddya2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/binding/grpcbind"
	"github.com/caddy-a2a/caddy-a2a/binding/httpbind"
	"github.com/caddy-a2a/caddy-a2a/binding/jsonrpc"
	"github.com/caddy-a2a/caddy-a2a/binding/rest"
	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/inspector"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/push"
	"github.com/caddy-a2a/caddy-a2a/store"
)

func init() {
	caddy.RegisterModule(Handler{})
	httpcaddyfile.RegisterHandlerDirective("a2a", parseCaddyfile)
	// Before reverse_proxy so an a2a mount and a catch-all proxy or
	// file_server can share a site; after the auth directives so that
	// {http.auth.user.id} is known when the owner is resolved.
	httpcaddyfile.RegisterDirectiveOrder("a2a", httpcaddyfile.Before, "reverse_proxy")
}

// Defaults of the optional settings the handler applies itself.
const (
	DefaultCardPath       = protocol.WellKnownCardPath
	DefaultRPCPath        = "/a2a"
	DefaultOwner          = "{http.auth.user.id}"
	DefaultMaxRequestBody = 4 << 20
	DefaultCardMaxAge     = 5 * time.Minute
	DefaultCardVersion    = "1.0.0"
	// DefaultHeartbeat is the handler package's, which applies it.
	DefaultHeartbeat = handler.DefaultHeartbeat
)

// Caps on sizes, for JSON and Caddyfile configs alike: beyond them a
// number is a typo.
const (
	// maxLimitSize caps every limit, a size or a count (1 GiB), and
	// keeps each an int on any platform.
	maxLimitSize = 1 << 30
	// maxRequestBody caps max_request_body (1 TiB): a machine's memory,
	// not one request's.
	maxRequestBody = 1 << 40
)

// The values of Handler.Reply.
const (
	ReplyTask    = "task"
	ReplyMessage = "message"
	ReplyAuto    = "auto"
)

// defaultModes are the card's default input/output modes when none are
// configured: what the agent contract carries without a file part.
var defaultModes = []string{"text/plain", "application/json"}

// specVersions maps the spec_version values to wire versions.
var specVersions = map[string]protocol.Version{
	"0.3": protocol.V03,
	"1.0": protocol.V10,
}

// Handler is the a2a HTTP handler. It answers the Agent Card on card_path
// and JSON-RPC on rpc_path and passes every other request to the next
// handler, so several mounts (and other handlers) can share one site.
type Handler struct {
	// UpstreamRaw is the agent this endpoint fronts: a guest module of the
	// namespace a2a.upstreams, named by its "kind"; without one it is
	// "http" (the agent contract, with the settings of HTTPUpstream).
	// Required.
	UpstreamRaw json.RawMessage `json:"upstream,omitempty" caddy:"namespace=a2a.upstreams inline_key=kind"`

	// SpecVersion lists the A2A wire versions this mount serves: "0.3",
	// "1.0" or both (the default).
	SpecVersion []string `json:"spec_version,omitempty"`

	// CardPath is the exact request path answered with the Agent Card.
	// Default: /.well-known/agent-card.json.
	CardPath string `json:"card_path,omitempty"`

	// RPCPath is the request path of the JSON-RPC endpoint (POST only),
	// answered with a trailing slash too (/a2a and /a2a/), and nothing
	// else under it. "/" is allowed and means the site root. Default: /a2a.
	RPCPath string `json:"rpc_path,omitempty"`

	// RESTPath is the base path of the HTTP+JSON binding: A2A 1.0's routes
	// are <rest_path>/message:send, <rest_path>/tasks/{id} and the rest of
	// A2A 1.0 §11, 0.3's the same under <rest_path>/v1, each version's when
	// it is served, listed in the card. "/" puts them at the site root. Unset (the default): no HTTP+JSON
	// binding, so that an auth matcher written for rpc_path never leaves
	// a binding it does not cover open.
	RESTPath string `json:"rest_path,omitempty"`

	// GRPC serves the gRPC binding of A2A 1.0 (lf.a2a.v1.A2AService) on
	// the site's own HTTP/2: TLS h2, or h2c where the server allows it
	// (servers { protocols h1 h2 h2c }). The card lists it as host:port.
	// Default: off.
	GRPC bool `json:"grpc,omitempty"`

	// URL is the public JSON-RPC URL written into the card. Default:
	// derived from each card request: the scheme (https when the
	// connection is TLS, or X-Forwarded-Proto from a trusted proxy), the
	// host (Host, or X-Forwarded-Host from a trusted proxy), any path
	// prefix a handle_path or strip_prefix removed, and RPCPath.
	// Global placeholders such as {env.PUBLIC_URL} are resolved once at
	// provision.
	URL string `json:"url,omitempty"`

	// The card's fields: name, description, version, provider,
	// documentation_url, icon_url, input_modes, output_modes, skills.
	CardFields

	// Owner is whose task it is: evaluated per request with Caddy's
	// placeholders (the placeholder is config, its value Caddy's; nothing
	// a caller sends is expanded). Another owner's task is reported as not
	// found. "" after replacement is the anonymous owner. Default:
	// {http.auth.user.id}.
	Owner string `json:"owner,omitempty"`

	// StoreRaw keeps the tasks: a guest module of the namespace
	// a2a.stores, named by its "type"; without one it is "memory" (with
	// the settings of MemoryStore). Default: memory with its defaults.
	// The store and the runs writing to it survive config reloads as long
	// as the store settings and the sharing scope (the store's share, or
	// else the upstream and RPCPath) stay the same. Two mounts of one
	// config share a store only if they name the same share.
	StoreRaw json.RawMessage `json:"store,omitempty" caddy:"namespace=a2a.stores inline_key=type"`

	// MaxRequestBody bounds a JSON-RPC request body in bytes, at most
	// 1TiB; larger bodies get 413. Default: 4MiB.
	MaxRequestBody int64 `json:"max_request_body,omitempty"`

	// Limits bound what one request may carry (parts, text, inline file
	// and metadata sizes, JSON nesting) and the history a task keeps.
	Limits *Limits `json:"limits,omitempty"`

	// Extensions are the A2A extensions the agent supports (card field),
	// negotiated per request through the A2A-Extensions header.
	Extensions []Extension `json:"extensions,omitempty"`

	// Reply is what a send answers with: "task" (the default) creates or
	// continues a task that the store keeps; "message" runs the agent
	// within the request and answers one agent Message, storing nothing.
	// Message replies suit stateless agents: there is no task to get,
	// cancel, subscribe to or continue, and an agent failure is a
	// JSON-RPC error (-32603 with an error id). "auto" lets the agent
	// choose each turn: an answer it marks as a direct message (the
	// contract's A2A-Reply: message, an A2A agent's Message) is one
	// Message, anything else a task; a send that starts a task then waits
	// for the agent's first event before answering.
	Reply string `json:"reply,omitempty"`

	// Streaming enables message/stream, SendStreamingMessage and task
	// resubscription, and advertises them in the card. Default: on.
	Streaming *bool `json:"streaming,omitempty"`

	// Heartbeat is the interval of SSE keep-alive comments on open
	// streams. Default: 15s.
	Heartbeat caddy.Duration `json:"heartbeat,omitempty"`

	// CardMaxAge is the card's Cache-Control max-age. Default: 5m.
	CardMaxAge caddy.Duration `json:"card_max_age,omitempty"`

	// CORS lets web pages of the origins it lists call the JSON-RPC
	// endpoint from a browser. Without it a browser's cross-origin call
	// is refused with 403 (cross-site request forgery protection);
	// callers that are not browsers are never affected. The public card
	// answers every origin either way.
	CORS *CORS `json:"cors,omitempty"`

	// Push turns push notifications on (Push).
	Push *Push `json:"push,omitempty"`

	// SecuritySchemes are the ways a caller may authenticate, by name
	// (the card's securitySchemes). They describe what Caddy's own
	// directives in front of the RPC route enforce; the module enforces
	// nothing of them.
	SecuritySchemes map[string]*SecurityScheme `json:"security_schemes,omitempty"`
	// Security lists the card's alternative requirements, each naming
	// declared schemes that must all be met.
	Security []SecurityRequirement `json:"security,omitempty"`
	// ExtendedCard is the card authenticated callers get (an owner not
	// ""): the public card with these fields in place and these skills
	// added. Without it the card declares no extended card.
	ExtendedCard *ExtendedCard `json:"extended_card,omitempty"`
	// SignCard signs every rendering of the card (SignCard).
	SignCard *SignCard `json:"sign_card,omitempty"`
	// Inspector serves the built-in inspector page (Inspector). Absent:
	// no page.
	Inspector *Inspector `json:"inspector,omitempty"`

	publicURL string
	upstream  UpstreamModule
	store     StoreModule
	// backend is the store's backend, taken from the pool in Provision
	// under backendKey and given back in Cleanup.
	backend    *handler.Backend
	backendKey string
	claim      *mountClaim
	paths      *pathClaim
	logger     *zap.Logger
	server     string // the HTTP server's name, for the logs
	unload     context.Context
	// anonymous warns, once per config load (each Provision makes a new
	// one), that RPC is served to callers without an identity.
	anonymous *sync.Once

	// Derived from the checked settings by Validate.
	versions []protocol.Version
	card     *protocol.AgentCard
	browser  *browserPolicy
	rpc      *jsonrpc.Binding
	rest     *rest.Binding
	grpc     *grpcbind.Binding
	// restBase is RESTPath without a trailing slash ("" for the root).
	restBase string
	cards    *httpbind.CardServer
	// inspector is the page of Inspector; nil without one.
	inspector *inspector.Inspector
	// jwks is the key set of every key the mount signs with, served at
	// jwksPath; nil when it signs nothing.
	jwks     []byte
	jwksPath string
	// metrics is the mount's observer over the config's collectors (nil
	// when Caddy gives no registry).
	metrics  *mountMetrics
	requests *requestMetrics
	// storeOps is the backend's store, counting its operations (nil
	// without a registry): the service's store, so runs count too.
	storeOps store.Store
	// pushOps counts push deliveries (nil without push or metrics).
	pushOps *pushMetrics
	// extCard is the extended card of a static card (checked with it);
	// extCards renders the one served (a gateway's follows its agent's).
	extCard  *protocol.AgentCard
	extCards *httpbind.CardServer
	// stopCard ends a gateway's following of its agent's card.
	stopCard func()
}

// Provider is the organisation behind the agent.
type Provider struct {
	// Organization is the provider's name. Required.
	Organization string `json:"organization,omitempty"`
	// URL is the provider's absolute http(s) URL. Required.
	URL string `json:"url,omitempty"`
}

// Skill is one capability listed in the Agent Card.
type Skill struct {
	// ID is unique within the card. Required.
	ID string `json:"id,omitempty"`
	// Name is human readable. Required.
	Name string `json:"name,omitempty"`
	// Description says what the skill does. Required.
	Description string `json:"description,omitempty"`
	// Tags are keywords; at least one is required.
	Tags []string `json:"tags,omitempty"`
	// Examples are sample prompts.
	Examples []string `json:"examples,omitempty"`
	// InputModes override the card's input modes for this skill.
	InputModes []string `json:"input_modes,omitempty"`
	// OutputModes override the card's output modes for this skill.
	OutputModes []string `json:"output_modes,omitempty"`
}

// Limits bound what one JSON-RPC request may carry, beyond the body size
// (max_request_body). A request over a limit is refused with -32602
// (-32600 for the nesting depth) naming the limit, before anything is
// stored or sent to the agent. Unset fields take the defaults of the
// handler and protocol packages, which apply them; each is at most 1GiB
// (or 1073741824 for a count).
type Limits struct {
	// MaxParts bounds the parts of one message. Default: 64.
	MaxParts int `json:"max_parts,omitempty"`
	// MaxTextSize bounds one text part, in bytes. Default: 1MiB.
	MaxTextSize int `json:"max_text_size,omitempty"`
	// MaxFileSize bounds the decoded bytes of one inline file part,
	// computed from its base64 length before anything is decoded. File
	// parts given by URL are passed to the agent as they are and never
	// fetched. Note that the body limit applies first: base64 makes a file
	// a third larger on the wire. Default: 4MiB.
	MaxFileSize int `json:"max_file_size,omitempty"`
	// MaxMetadataSize bounds each metadata object (of the request, the
	// message and each part) as sent, in bytes. Default: 64KiB.
	MaxMetadataSize int `json:"max_metadata_size,omitempty"`
	// MaxJSONDepth bounds how deeply the request body nests arrays and
	// objects (at least 8). Default: 32.
	MaxJSONDepth int `json:"max_json_depth,omitempty"`
	// MaxHistory is how many messages a task keeps and re-sends to the
	// agent each turn (the oldest are dropped). Default: 100.
	MaxHistory int `json:"max_history,omitempty"`
	// MaxHistorySize bounds the same history in bytes of content; the
	// newest message is always kept. Default: 8MiB.
	MaxHistorySize int `json:"max_history_size,omitempty"`
	// MaxTaskOutput bounds the agent's output one task holds (artifacts
	// and agent messages, all turns), in bytes of content; a message reply
	// too. An agent that goes over it ends the task failed, with a status
	// message naming the limit. Default: 16MiB.
	MaxTaskOutput int `json:"max_task_output,omitempty"`
	// MaxRunEvents bounds the events (chunks, artifacts, status updates)
	// the agent may produce in one turn; over it, the task fails as for
	// MaxTaskOutput. Default: 10000.
	MaxRunEvents int `json:"max_run_events,omitempty"`
	// MaxArtifacts bounds the artifacts one task holds; over it, the task
	// fails as for MaxTaskOutput. Default: 256.
	MaxArtifacts int `json:"max_artifacts,omitempty"`
	// MaxTasksPerOwner bounds the tasks the store keeps for one caller;
	// one more evicts the caller's oldest finished, then waiting task, and
	// when all are running the send is refused with -32080. Anonymous
	// callers are not counted per caller. Default: 1000.
	MaxTasksPerOwner int `json:"max_tasks_per_owner,omitempty"`
	// MaxRunsPerOwner bounds the tasks one caller has running at once; a
	// send over it is refused with -32080. Anonymous callers are not
	// counted per caller. Default: 32.
	MaxRunsPerOwner int `json:"max_runs_per_owner,omitempty"`
	// DedupeWindow is how long a send's messageId is remembered for its
	// caller (exactly-once sends): a retry of the send within it, on any
	// replica sharing the store, is answered from the first send's task
	// and does not call the agent; another message under the id is
	// -32602. A duration, or "off" to run every send. Default: as long as
	// the first send's task is kept (the store's ttl and idle_ttl).
	DedupeWindow string `json:"dedupe_window,omitempty"`
	// dedupe is DedupeWindow as the service takes it (check).
	dedupe time.Duration
}

// minJSONDepth is the smallest max_json_depth that leaves room for a
// SendMessage with a part and its metadata.
const minJSONDepth = 8

// Extension is an A2A extension the agent supports. It is declared in the
// Agent Card; a client activates it with the A2A-Extensions (1.0) or
// X-A2A-Extensions (0.3) request header, the activated URIs are echoed in
// the answer under the same header and passed to the agent as
// "extensions". What an extension means is the agent's business: the
// module only negotiates it.
type Extension struct {
	// URI identifies the extension. Required; no commas or white space
	// (the headers are comma-separated lists).
	URI string `json:"uri,omitempty"`
	// Description says how the agent uses it (card field).
	Description string `json:"description,omitempty"`
	// Required refuses every request that does not activate it with
	// -32008 (the card itself stays public).
	Required bool `json:"required,omitempty"`
	// Params is the extension's configuration as a JSON object (card
	// field).
	Params json.RawMessage `json:"params,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.a2a",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision fills the defaults, resolves the global placeholders of url,
// claims the mount's paths in its route list (paths.go), loads the
// upstream and then the store (whose sharing scope names the upstream)
// and claims the mount's sharing scope in this config. The
// guest modules check their own settings as Caddy loads them; the
// handler's are checked by Validate.
func (h *Handler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	if srv, ok := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server); ok && srv != nil {
		h.server = srv.Name()
	}
	h.anonymous = new(sync.Once)
	h.unload = unloaded(ctx)
	if err := h.fill(caddy.NewReplacer()); err != nil {
		return err
	}
	if err := h.Push.provision(); err != nil {
		return err
	}
	if err := h.SignCard.provision(); err != nil {
		return err
	}
	if err := h.provisionJWKS(); err != nil {
		return err
	}
	// Before the store's claim: two mounts on one path would also share
	// a scope, and the path is what to fix.
	var err error
	if h.paths, err = h.claimPaths(ctx); err != nil {
		return err
	}
	if len(h.UpstreamRaw) > 0 {
		// Without one, the checks below say what is missing.
		if err := h.loadGuests(ctx); err != nil {
			return err
		}
	}
	// The checks end the fill step, and only then is anything built
	// from the settings: a bad config fails before any request, and
	// `caddy validate` too, since Caddy provisions what it validates.
	if err := h.checkSettings(); err != nil {
		return err
	}
	if err := h.build(); err != nil {
		return err
	}
	h.logMounted()
	return nil
}

// loadGuests loads the upstream and the store modules and takes the
// store's backend from the pool.
func (h *Handler) loadGuests(ctx caddy.Context) error {
	mod, err := loadGuest(ctx, h, "UpstreamRaw", h.UpstreamRaw, "kind", "a2a.upstreams.http")
	if err != nil {
		return fmt.Errorf("upstream: %w", err)
	}
	up, ok := mod.(UpstreamModule)
	if !ok {
		return fmt.Errorf("upstream: module %T is not an a2a upstream (caddya2a.UpstreamModule)", mod)
	}
	h.upstream = up
	if reg := ctx.GetMetricsRegistry(); reg != nil {
		if h.metrics, err = newMountMetrics(reg, up.CaddyModule().ID.Name()); err != nil {
			return err
		}
		if h.requests, err = newRequestMetrics(reg, h.server); err != nil {
			return err
		}
	}
	if d, ok := up.(mediaTypes); ok {
		// The kind's defaults: the media types its agent can take, which
		// the card says and a send is held to (-32005 for others), and
		// those it answers in.
		if len(h.InputModes) == 0 {
			h.InputModes = slices.Clone(d.defaultInputModes())
		}
		if len(h.OutputModes) == 0 {
			h.OutputModes = slices.Clone(d.defaultOutputModes())
		}
	}

	env := StoreEnv{
		MaxTasksPerOwner: h.Limits.tasksPerOwner(),
		// A log holds the current turn (max_run_events) and a few
		// events for each earlier one, which the store compacts.
		MaxEventsPerTask: 2 * h.Limits.runEvents(),
	}
	mod, err = loadGuest(ctx, h, "StoreRaw", h.StoreRaw, "type", "a2a.stores.memory")
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	st, ok := mod.(StoreModule)
	if !ok {
		return fmt.Errorf("store: module %T is not an a2a store (caddya2a.StoreModule)", mod)
	}
	h.store = st
	if h.backend, h.backendKey, err = takeBackend(st, env, h.upstream.Target()+"|"+h.RPCPath); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if reg := ctx.GetMetricsRegistry(); reg != nil {
		if h.storeOps, err = newMeteredStore(reg, st.CaddyModule().ID.Name(), h.backend.Store()); err != nil {
			return err
		}
		if h.Push != nil {
			if h.pushOps, err = newPushMetrics(reg); err != nil {
				return err
			}
		}
	}
	// The runs log through the newest config's logger.
	h.backend.SetLogger(h.logger)
	h.backend.SetMount(h.describeMount(ctx))
	if h.claim, err = h.claimScope(ctx, h.backendKey, shareName(st)); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// fill applies the defaults the handler itself owns (the handler and
// protocol packages apply theirs to what is left unset) and resolves the
// global placeholders of url.
func (h *Handler) fill(globals *caddy.Replacer) error {
	h.fillDefaults()
	if h.URL != "" {
		u, err := resolveGlobal(globals, h.URL)
		if err != nil {
			return fmt.Errorf("url: %w", err)
		}
		h.publicURL = u
	}
	return nil
}

// checkSettings checks every setting of the handler, at the end of
// Provision's fill step: nothing is built from an unchecked config. The
// checks derive what the build reads (the wire versions, the card), so
// they run once.
func (h *Handler) checkSettings() error {
	if err := h.check(); err != nil {
		return err
	}
	if h.upstream == nil || h.store == nil {
		return errors.New("a2a: handler not provisioned")
	}
	if m, ok := h.upstream.(mediaTypes); ok {
		if err := m.checkInputModes(h.InputModes); err != nil {
			return fmt.Errorf("input_modes: %w", err)
		}
	}
	return nil
}

// Validate confirms the handler was provisioned, which means checked:
// Provision ran checkSettings before it built anything, so a bad config
// fails there, for `caddy validate` too. It writes nothing: running the
// checks again would rewrite what they derive while a gateway's card
// fetcher, started by the build, reads it.
func (h *Handler) Validate() error {
	if h.upstream == nil || h.store == nil || h.rpc == nil {
		return errors.New("a2a: handler not provisioned")
	}
	return nil
}

// logMounted says, once per mount and config load, what the mount serves:
// the first thing to read when a request does not land where expected.
// It is logged once the config is checked, so a config that fails says
// only why.
func (h *Handler) logMounted() {
	if h.logger == nil {
		return
	}
	versions := make([]string, len(h.versions))
	for i, v := range h.versions {
		versions[i] = v.String()
	}
	name := h.Name
	if name == "" {
		name = "(the agent card's)" // a gateway's, known once fetched
	}
	fields := []zap.Field{
		zap.String("name", name),
		zap.String("card_path", h.CardPath),
		zap.String("rpc_path", h.RPCPath),
		zap.String("rest_path", h.RESTPath),
		zap.Bool("grpc", h.GRPC),
		zap.Strings("versions", versions),
		zap.String("reply", h.Reply),
		zap.Bool("streaming", *h.Streaming),
		zap.String("upstream", string(h.upstream.CaddyModule().ID.Name())),
		zap.String("upstream_target", h.upstream.Target()),
		zap.String("store", string(h.store.CaddyModule().ID.Name())),
	}
	if share := shareName(h.store); share != "" {
		fields = append(fields, zap.String("share", share))
	}
	if h.server != "" {
		fields = append(fields, zap.String("server", h.server))
	}
	h.logger.Info("a2a: mounted", fields...)
}

// build makes the service, its JSON-RPC binding and the card server of
// the checked settings.
func (h *Handler) build() error {
	var err error
	if h.browser, err = newBrowserPolicy(h.CORS); err != nil {
		return err
	}
	agent, err := h.upstream.NewAgent(AgentOptions{
		Limits:       h.Limits.protocolLimits(),
		MaxJSONDepth: h.Limits.jsonDepth(),
	})
	if err != nil {
		return fmt.Errorf("upstream: %w", err)
	}
	b := h.backend
	opts := handler.Options{
		Agent:        agent,
		Versions:     h.versions,
		Streaming:    *h.Streaming,
		InputModes:   h.InputModes,
		Limits:       h.Limits.protocolLimits(),
		MaxJSONDepth: h.Limits.jsonDepth(),
		Extensions:   protocolExtensions(h.Extensions),
		Reply:        h.replyMode(),
		Heartbeat:    time.Duration(h.Heartbeat),
		Unload:       h.unload,
		Logger:       h.logger,
		ExtendedCard: h.extendedCardOptions(),
	}
	b.Fill(&opts)
	if h.metrics != nil {
		opts.Observer = h.metrics
	}
	if h.storeOps != nil {
		opts.Store = h.storeOps
	}
	h.Limits.apply(&opts)
	if opts.Push, err = h.Push.options(b, h.baseURL); err != nil {
		return err
	}
	svc, err := handler.New(opts)
	if err != nil {
		return err
	}
	if opts.Push != nil {
		// Notices other replicas hand over, and the runner's own
		// writes, go out with the newest settings.
		var observe func(push.Outcome)
		if h.pushOps != nil {
			observe = h.pushOps.observe
		}
		b.Attach(svc, observe)
	}
	h.rpc = jsonrpc.New(svc)
	h.rest = nil
	if h.RESTPath != "" {
		h.rest = rest.New(svc)
		h.restBase = strings.TrimSuffix(h.RESTPath, "/")
	}
	h.grpc = nil
	if h.GRPC {
		h.grpc = grpcbind.New(svc, int(min(h.MaxRequestBody, math.MaxInt32)))
	}
	h.cards = httpbind.NewCardServer(nil, h.versions, time.Duration(h.CardMaxAge))
	if h.publicURL == "" {
		h.cards.URLFromRequest()
	}
	h.extCards = nil
	if h.ExtendedCard != nil {
		h.extCards = httpbind.NewCardServer(nil, h.versions, 0)
	}
	h.signCards(h.cards, h.extCards)
	if h.card != nil {
		h.publishCard(*h.card, h.extCard)
		if h.SignCard != nil {
			// A card that cannot be signed fails the config, not a client.
			probe := httpbind.CardURLs{RPC: "https://a2a.invalid" + h.RPCPath}
			for _, c := range []*httpbind.CardServer{h.cards, h.extCards} {
				if c == nil {
					continue
				}
				if _, err := c.Document(probe, true); err != nil {
					return fmt.Errorf("sign_card: %w", err)
				}
			}
		}
	}
	if err := h.provisionInspector(); err != nil {
		return err
	}
	if cp, ok := h.upstream.(CardProvider); ok {
		h.stopCard = cp.SubscribeCard(func(agent *protocol.AgentCard) { h.agentCard(svc, agent) })
	}
	return nil
}

// agentCard serves a gateway's card made of its agent's new card, and
// declares the agent's extensions when the config declares none. A card
// that fails validation is logged and not served: the card served before
// stays.
func (h *Handler) agentCard(svc *handler.Service, agent *protocol.AgentCard) {
	card, err := h.mergeCard(agent)
	if err != nil {
		h.logger.Error("a2a: the agent's card, with this mount's settings, is not a valid card; it is not served",
			zap.String("rpc_path", h.RPCPath), zap.Error(err))
		return
	}
	if len(h.Extensions) == 0 {
		if err := svc.SetExtensions(card.Extensions); err != nil {
			h.logger.Error("a2a: the agent's card declares extensions no client could activate; it is not served",
				zap.String("rpc_path", h.RPCPath), zap.Error(err))
			return
		}
	}
	var ext *protocol.AgentCard
	if h.ExtendedCard != nil {
		if ext, err = h.extendedCard(card); err != nil {
			h.logger.Error("a2a: the agent's card, with this mount's extended_card, is not a valid card; it is not served",
				zap.String("rpc_path", h.RPCPath), zap.Error(err))
			return
		}
	}
	h.publishCard(*card, ext)
}

// publishCard serves card, and ext as the extended card, with what the
// module adds to every card of the mount: streaming as configured, and
// the push signature extension, the module's own (after a gateway's
// agent's extensions were taken for negotiation: it describes this
// mount's deliveries, not the agent's).
func (h *Handler) publishCard(card protocol.AgentCard, ext *protocol.AgentCard) {
	x, signed := h.Push.cardExtension()
	add := func(c *protocol.AgentCard) {
		c.Streaming = *h.Streaming
		if signed {
			c.Extensions = append(slices.Clip(c.Extensions), x)
		}
	}
	add(&card)
	h.cards.SetCard(card)
	if ext != nil {
		e := *ext
		add(&e)
		h.extCards.SetCard(e)
	}
}

// extendedCardOptions are the service's extended card settings: the
// document of the card for a caller's request, and the challenge of the
// 401 an anonymous one gets. nil without extended_card.
func (h *Handler) extendedCardOptions() *handler.ExtendedCardOptions {
	if h.ExtendedCard == nil {
		return nil
	}
	return &handler.ExtendedCardOptions{
		Challenge: h.challenge(),
		Render: func(u string, v protocol.Version) ([]byte, error) {
			return h.extCards.Document(httpbind.CardURLs{RPC: u, REST: h.restURL(u), GRPC: h.grpcAddr(u)}, v == protocol.V10)
		},
	}
}

// Cleanup releases the mount's claims on its sharing scope and its
// paths. The store and
// the upstream are guest modules, which Caddy cleans up itself: the last
// config using a store closes its runner (ending runs) and then the store.
// It is also called after a failed Provision, so it tolerates a partial
// setup.
func (h *Handler) Cleanup() error {
	if h.grpc != nil {
		h.grpc.Stop()
	}
	if h.stopCard != nil {
		h.stopCard()
		h.stopCard = nil
	}
	h.claim.release()
	h.claim = nil
	h.paths.release()
	h.paths = nil
	if h.backendKey != "" {
		// This config's hold on the backend; the last one closes it.
		key := h.backendKey
		h.backend, h.backendKey = nil, ""
		if _, err := backends.Delete(key); err != nil {
			return err
		}
	}
	return nil
}

// ServeHTTP answers the card and the JSON-RPC endpoint and passes anything
// else on.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if h.jwks != nil && r.URL.Path == h.jwksPath {
		h.serveJWKS(w, r)
		return nil
	}
	if r.URL.Path == h.CardPath {
		if gateCard(w, r) {
			return nil
		}
		return h.serveCard(w, r)
	}
	if h.isRPCPath(r.URL.Path) {
		if h.browser.gateRPC(w, r, h.logger) {
			return nil
		}
		req, start := h.begin(r, bindingJSONRPC)
		st, err := h.startRPC(w, r, req)
		h.answered(r, req, start)
		st.Serve()
		return err
	}
	if h.grpc != nil && isGRPC(r) {
		h.serveGRPC(w, r)
		return nil
	}
	if h.rest != nil {
		if rel, ok := h.restRoute(r.URL.Path); ok {
			req, start := h.begin(r, bindingREST)
			st, err := h.startREST(w, r, rel, req)
			h.answered(r, req, start)
			st.Serve()
			return err
		}
	}
	if h.inspector != nil && h.inspector.Owns(r.URL.Path) {
		h.inspector.ServeHTTP(w, r)
		return nil
	}
	return next.ServeHTTP(w, r)
}

// isRPCPath reports whether p is the JSON-RPC endpoint: rpc_path, or
// rpc_path with a trailing slash. A client whose base URL is the card's
// interface URL resolves "/" against it and posts to rpc_path + "/" (the
// official conformance kit does); answering there too is what such a
// client expects. A gate written path /a2a /a2a/* covers both forms.
func (h *Handler) isRPCPath(p string) bool {
	rp := h.RPCPath
	if p == rp {
		return true
	}
	if rp == "/" {
		return false
	}
	if strings.HasSuffix(rp, "/") {
		// rpc_path written with the slash: its form without one.
		return len(p) == len(rp)-1 && strings.HasPrefix(rp, p)
	}
	return len(p) == len(rp)+1 && p[len(rp)] == '/' && strings.HasPrefix(p, rp)
}

// unloaded returns a context that ends when this config is unloaded or
// its HTTP server begins to shut down, whichever is first. The config's
// context alone is not enough: Caddy stops the servers before it cancels
// that context, and on exit it waits for open requests first, so an open
// SSE stream or a blocking send would hold up `caddy stop` forever. The
// server's shutdown hook ends them at the start of the stop instead. Both
// ways are plain cancellations, so streams watch it without a goroutine.
func unloaded(ctx caddy.Context) context.Context {
	onShutdown := func(func()) {} // no server: the config's context alone
	if srv, ok := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server); ok && srv != nil {
		onShutdown = srv.RegisterOnShutdown
	}
	uctx, cancel := context.WithCancel(ctx)
	onShutdown(cancel)
	return uctx
}

// replyMode is Reply as the handler's option.
func (h *Handler) replyMode() handler.ReplyMode {
	switch h.Reply {
	case ReplyMessage:
		return handler.ReplyMessage
	case ReplyAuto:
		return handler.ReplyAuto
	}
	return handler.ReplyTask
}

// parseCaddyfile builds the handler from its Caddyfile block.
func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	m := new(Handler)
	err := m.UnmarshalCaddyfile(h.Dispenser)
	return m, err
}

// Interface guards.
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.Validator             = (*Handler)(nil)
	_ caddy.CleanerUpper          = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
	_ caddyfile.Unmarshaler       = (*Handler)(nil)
)

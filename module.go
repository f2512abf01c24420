// Package caddya2a is the Caddy module http.handlers.a2a: it turns any HTTP
// agent into an A2A (Agent2Agent) peer. Caddy keeps TLS, auth, rate limits
// and routing; this module serves the Agent Card and the JSON-RPC endpoint
// of both A2A wire versions (0.3 and 1.0) and calls the agent upstream over
// the agent contract of DESIGN.md.
package caddya2a

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/binding/httpbind"
	"github.com/caddy-a2a/caddy-a2a/binding/jsonrpc"
	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

func init() {
	caddy.RegisterModule(Handler{})
	httpcaddyfile.RegisterHandlerDirective("a2a", parseCaddyfile)
	// Before reverse_proxy so an a2a mount and a catch-all proxy or
	// file_server can share a site; after the auth directives so that
	// {http.auth.user.id} is known when the owner is resolved.
	httpcaddyfile.RegisterDirectiveOrder("a2a", httpcaddyfile.Before, "reverse_proxy")
}

// Defaults of the optional settings.
const (
	DefaultCardPath       = "/.well-known/agent-card.json"
	DefaultRPCPath        = "/a2a"
	DefaultOwner          = "{http.auth.user.id}"
	DefaultTimeout        = 5 * time.Minute
	DefaultMaxRequestBody = 4 << 20
	DefaultCardMaxAge     = 5 * time.Minute
	DefaultHeartbeat      = 15 * time.Second
	DefaultCardVersion    = "1.0.0"
)

// The values of Handler.Reply.
const (
	ReplyTask    = "task"
	ReplyMessage = "message"
)

// defaultModes are the card's default input/output modes when none are
// configured: what the agent contract carries without a file part.
var defaultModes = []string{"text/plain", "application/json"}

// Handler is the a2a HTTP handler. It answers the Agent Card on card_path
// and JSON-RPC on rpc_path and passes every other request to the next
// handler, so several mounts (and other handlers) can share one site.
type Handler struct {
	// Upstream is the agent this endpoint fronts. Required.
	Upstream *Upstream `json:"upstream,omitempty"`

	// SpecVersion lists the A2A wire versions this mount serves: "0.3",
	// "1.0" or both (the default).
	SpecVersion []string `json:"spec_version,omitempty"`

	// CardPath is the exact request path answered with the Agent Card.
	// Default: /.well-known/agent-card.json.
	CardPath string `json:"card_path,omitempty"`

	// RPCPath is the exact request path of the JSON-RPC endpoint (POST
	// only). "/" is allowed and means the site root. Default: /a2a.
	RPCPath string `json:"rpc_path,omitempty"`

	// URL is the public JSON-RPC URL written into the card. Default:
	// derived from each card request: the scheme (https when the
	// connection is TLS, or X-Forwarded-Proto from a trusted proxy), the
	// host (Host, or X-Forwarded-Host from a trusted proxy), any path
	// prefix a handle_path or strip_prefix removed, and RPCPath.
	// Global placeholders such as {env.PUBLIC_URL} are resolved once at
	// provision.
	URL string `json:"url,omitempty"`

	// Name of the agent (card field). Required.
	Name string `json:"name,omitempty"`
	// Description of the agent (card field). Required.
	Description string `json:"description,omitempty"`
	// Version of the agent (card field). Default: 1.0.0.
	Version string `json:"version,omitempty"`
	// Provider is the organisation behind the agent (card field).
	Provider *Provider `json:"provider,omitempty"`
	// DocumentationURL is an absolute http(s) URL (card field).
	DocumentationURL string `json:"documentation_url,omitempty"`
	// IconURL is an absolute http(s) URL (card field).
	IconURL string `json:"icon_url,omitempty"`
	// InputModes are the media types the agent accepts (the card's
	// defaultInputModes). When set, parts of other media types are
	// refused. Default: text/plain application/json, and nothing refused.
	InputModes []string `json:"input_modes,omitempty"`
	// OutputModes are the media types the agent produces (the card's
	// defaultOutputModes). Default: text/plain application/json.
	OutputModes []string `json:"output_modes,omitempty"`
	// Skills listed in the card; at least one is required.
	Skills []Skill `json:"skills,omitempty"`

	// Owner is whose task it is: evaluated per request with Caddy's
	// placeholders (the placeholder is config, its value Caddy's; nothing
	// a caller sends is expanded). Another owner's task is reported as not
	// found. "" after replacement is the anonymous owner. Default:
	// {http.auth.user.id}.
	Owner string `json:"owner,omitempty"`

	// Store keeps the tasks. Default: memory with its defaults. The store
	// and the runs writing to it survive config reloads as long as the
	// store settings and the sharing scope (Store.Share, or else the
	// upstream URL and RPCPath) stay the same. Two mounts of one config
	// share a store only if they name the same Store.Share.
	Store *Store `json:"store,omitempty"`

	// MaxRequestBody bounds a JSON-RPC request body in bytes; larger
	// bodies get 413. Default: 4MiB.
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
	// JSON-RPC error (-32603 with an error id).
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

	versions  []protocol.Version
	publicURL string
	rpc       *jsonrpc.Binding
	cards     *httpbind.CardServer
	poolKey   string
	claim     *mountClaim
	logger    *zap.Logger
	browser   *browserPolicy
	// anonymous warns, once per config load (each Provision makes a new
	// one), that RPC is served to callers without an identity.
	anonymous *sync.Once
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

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.a2a",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision checks the config, builds and validates the card, loads the
// upstream transport and attaches the store and runner from the pool that
// outlives config reloads.
func (h *Handler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	if err := h.applyDefaults(); err != nil {
		return err
	}
	globals := caddy.NewReplacer()
	if h.URL != "" {
		u, err := resolveGlobal(globals, h.URL)
		if err != nil {
			return fmt.Errorf("url: %w", err)
		}
		if err := checkPublicURL(u); err != nil {
			return fmt.Errorf("url: %w", err)
		}
		h.publicURL = u
	}
	card, err := h.buildCard()
	if err != nil {
		return err
	}
	if h.browser, err = newBrowserPolicy(h.CORS); err != nil {
		return err
	}
	h.anonymous = new(sync.Once)
	agent, err := h.Upstream.provision(ctx, globals, h.Limits)
	if err != nil {
		return fmt.Errorf("upstream: %w", err)
	}

	key := h.storeKey()
	if h.claim, err = h.claimScope(ctx, key); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	b, err := loadBackend(key, h.Store, h.Limits, h.logger)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	h.poolKey = key

	opts := handler.Options{
		Store:        b.store,
		Agent:        agent,
		Runner:       b.runner,
		ContextKey:   b.contextKey,
		Versions:     h.versions,
		Streaming:    *h.Streaming,
		InputModes:   h.InputModes,
		Limits:       h.Limits.protocolLimits(),
		MaxJSONDepth: h.Limits.jsonDepth(),
		Extensions:   protocolExtensions(h.Extensions),
		Reply:        h.replyMode(),
		Heartbeat:    time.Duration(h.Heartbeat),
		Unload:       unloaded(ctx),
		Logger:       h.logger,
	}
	h.Limits.apply(&opts)
	svc, err := handler.New(opts)
	if err != nil {
		return err
	}
	h.rpc = jsonrpc.New(svc)
	card.Streaming = *h.Streaming
	h.cards = httpbind.NewCardServer(*card, h.versions, time.Duration(h.CardMaxAge))
	if h.publicURL == "" {
		h.cards.URLFromRequest()
	}
	return nil
}

// Validate confirms Provision finished. Every setting is checked in
// Provision, where the defaults are known and the card can be built (so
// `caddy validate` already fails on a bad one); this only catches a
// handler that was never provisioned.
func (h *Handler) Validate() error {
	if h.rpc == nil || h.cards == nil {
		return errors.New("a2a: handler not provisioned")
	}
	return nil
}

// Cleanup releases this config's hold on the store and runner; the last
// config using them closes the runner (ending runs) and then the store.
// It also releases the mount's claim on its sharing scope. It is also
// called after a failed Provision, so it tolerates a partial setup.
func (h *Handler) Cleanup() error {
	h.claim.release()
	h.claim = nil
	if h.poolKey == "" {
		return nil
	}
	key := h.poolKey
	h.poolKey = ""
	_, err := backends.Delete(key)
	return err
}

// ServeHTTP answers the card and the JSON-RPC endpoint and passes anything
// else on.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	switch r.URL.Path {
	case h.CardPath:
		if gateCard(w, r) {
			return nil
		}
		return h.serveCard(w, r)
	case h.RPCPath:
		if h.browser.gateRPC(w, r, h.logger) {
			return nil
		}
		st, err := h.startRPC(w, r)
		st.Serve()
		return err
	}
	return next.ServeHTTP(w, r)
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

// replyMode is Reply (after applyDefaults) as the handler's option.
func (h *Handler) replyMode() handler.ReplyMode {
	if h.Reply == ReplyMessage {
		return handler.ReplyMessage
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

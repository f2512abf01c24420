package caddya2a

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
	"github.com/caddy-a2a/caddy-a2a/upstream/a2aagent"
)

func init() {
	caddy.RegisterModule(A2AUpstream{})
}

// CardProvider is an upstream module whose agent has a card of its own
// (the a2a kind): the mount's card is that card, with the mount's
// interfaces and the card fields its config sets, which are then all
// optional.
type CardProvider interface {
	// SubscribeCard calls fn with the agent's card now (if it is known)
	// and whenever it changes; the returned func stops it.
	SubscribeCard(fn func(*protocol.AgentCard)) (stop func())
}

// Bounds of card_refresh: more often than a second is a typo for
// minutes, and a card older than a day is not being refreshed.
const (
	minCardRefresh = time.Second
	maxCardRefresh = 24 * time.Hour
)

// cardPool shares an agent's card fetcher across config loads, so that a
// reload serves the card already fetched rather than a 503 until the
// agent answers again.
var cardPool = caddy.NewUsagePool()

// A2AUpstream is the upstream module a2a.upstreams.a2a: an existing A2A
// agent (0.3 or 1.0, JSON-RPC) whose card is at url + card_path. The
// module keeps each task's record (owner, history, events) and speaks the
// agent's own version to it, whatever its caller speaks. It has the http
// kind's settings (url, timeout, header_up, max_response_header,
// transport) and three of its own.
type A2AUpstream struct {
	HTTPUpstream

	// CardPath is the path of the agent's card under url. Default:
	// /.well-known/agent-card.json.
	CardPath string `json:"card_path,omitempty"`
	// CardRefresh is how often the card is fetched again (a conditional
	// GET with its ETag). From 1s to 24h. Default: 5m.
	CardRefresh caddy.Duration `json:"card_refresh,omitempty"`
	// AllowOrigins are origins (scheme://host[:port]) other than url's
	// that the agent's card may put its JSON-RPC interface on. Runs carry
	// callers' messages and header_up's credentials to that interface, so
	// a card that names any other origin is refused (logged, the card
	// before kept). Default: url's origin only.
	AllowOrigins []string `json:"allow_origins,omitempty"`

	cards   *a2aagent.Cards
	poolKey string
	logger  *zap.Logger
}

// CaddyModule returns the Caddy module information.
func (A2AUpstream) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "a2a.upstreams.a2a",
		New: func() caddy.Module { return new(A2AUpstream) },
	}
}

// Provision sets up the http kind's part (URL, headers, transport) and
// takes the agent's card fetcher from the pool, starting it if it is new.
func (u *A2AUpstream) Provision(ctx caddy.Context) error {
	u.logger = ctx.Logger()
	if err := u.HTTPUpstream.Provision(ctx); err != nil {
		return err
	}
	if u.transport == nil || u.checkOwn() != nil {
		return nil // Validate says why
	}
	path := u.CardPath
	if path == "" {
		path = a2aagent.DefaultCardPath
	}
	refresh := time.Duration(u.CardRefresh)
	u.poolKey = strings.Join([]string{u.target, path, refresh.String(), headerKey(u.headers), string(u.tc.raw),
		strings.Join(u.AllowOrigins, " ")}, "|")
	val, _, err := cardPool.LoadOrNew(u.poolKey, func() (caddy.Destructor, error) {
		c, err := a2aagent.NewCards(a2aagent.CardsConfig{
			BaseURL:        u.target,
			Path:           path,
			Refresh:        refresh,
			Client:         &http.Client{Transport: u.transport, CheckRedirect: noRedirects},
			Headers:        u.headers,
			AllowOrigins:   u.AllowOrigins,
			RequestContext: transportContext(caddy.NewReplacer()),
			Logger:         u.logger,
		})
		if err != nil {
			return nil, err
		}
		c.Start()
		return c, nil
	})
	if err != nil {
		u.poolKey = ""
		return fmt.Errorf("upstream: %w", err)
	}
	u.cards = val.(*a2aagent.Cards)
	return nil
}

// headerKey is a stable rendering of h for the pool key.
func headerKey(h http.Header) string {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, k := range names {
		b.WriteString(k + "=" + strings.Join(h[k], ",") + ";")
	}
	return b.String()
}

// Validate checks the http kind's settings and the a2a kind's own.
func (u *A2AUpstream) Validate() error {
	if err := u.HTTPUpstream.Validate(); err != nil {
		return err
	}
	if err := u.checkOwn(); err != nil {
		return err
	}
	if u.cards == nil {
		return errors.New("a2a upstream not provisioned")
	}
	return nil
}

// checkOwn checks the settings the http kind does not have.
func (u *A2AUpstream) checkOwn() error {
	if u.CardPath != "" {
		if err := checkPath(u.CardPath); err != nil {
			return fmt.Errorf("card_path: %w", err)
		}
	}
	if r := time.Duration(u.CardRefresh); r != 0 && (r < minCardRefresh || r > maxCardRefresh) {
		return fmt.Errorf("card_refresh: want a duration from 1s to 24h, got %s", r)
	}
	for _, o := range u.AllowOrigins {
		if _, err := a2aagent.ParseOrigin(o); err != nil {
			return fmt.Errorf("allow_origin: %w", err)
		}
	}
	return nil
}

// Cleanup lets go of the card fetcher; the last config to use it stops it.
func (u *A2AUpstream) Cleanup() error {
	if u.poolKey != "" {
		_, err := cardPool.Delete(u.poolKey)
		u.poolKey = ""
		return err
	}
	return nil
}

// NewAgent returns the A2A agent over the transport.
func (u *A2AUpstream) NewAgent(opts AgentOptions) (upstream.Agent, error) {
	return a2aagent.New(a2aagent.Config{Cards: u.cards, HTTPConfig: u.httpConfig(opts), Logger: u.logger})
}

// SubscribeCard follows the agent's card.
func (u *A2AUpstream) SubscribeCard(fn func(*protocol.AgentCard)) func() {
	return u.cards.Subscribe(func(c *a2aagent.Card) { fn(c.Card) })
}

// a2aUpstreamKeys are the subdirectives of `upstream a2a`.
var a2aUpstreamKeys = append(slices.Clone(upstreamKeys), "card_path", "card_refresh", "allow_origin")

// UnmarshalCaddyfile parses `upstream a2a <url> { … }`:
//
//	upstream a2a <url> {
//		card_path           <path>
//		card_refresh        <duration>
//		allow_origin        <origin...>
//		timeout             <duration>
//		header_up           <name> <value>
//		max_response_header <size>
//		transport           http { <reverse_proxy http transport options> }
//	}
func (u *A2AUpstream) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return u.unmarshal(d, a2aUpstreamKeys, func(key string) (bool, error) {
		var err error
		switch key {
		case "card_path":
			u.CardPath, err = oneArg(d)
		case "card_refresh":
			u.CardRefresh, err = durationArg(d)
		case "allow_origin":
			u.AllowOrigins, err = argsNoBlock(d, 1, -1)
		default:
			return false, nil
		}
		return true, err
	}, u.checkOwn)
}

// Interface guards.
var (
	_ UpstreamModule        = (*A2AUpstream)(nil)
	_ CardProvider          = (*A2AUpstream)(nil)
	_ caddy.Provisioner     = (*A2AUpstream)(nil)
	_ caddy.Validator       = (*A2AUpstream)(nil)
	_ caddy.CleanerUpper    = (*A2AUpstream)(nil)
	_ caddyfile.Unmarshaler = (*A2AUpstream)(nil)
)

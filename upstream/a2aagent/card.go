package a2aagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// Defaults of CardsConfig.
const (
	DefaultCardPath    = protocol.WellKnownCardPath
	DefaultCardRefresh = 5 * time.Minute
	// DefaultMaxCardBytes bounds the agent's card document.
	DefaultMaxCardBytes = 1 << 20
)

// cardRetryStart and cardRetryMax pace the fetches while the agent has
// given no card yet (down at start): 1s, 2s, … 30s.
const (
	cardRetryStart = time.Second
	cardRetryMax   = 30 * time.Second
	// cardFetchTimeout bounds one card fetch.
	cardFetchTimeout = 10 * time.Second
)

// CardsConfig configures the card fetcher of one agent.
type CardsConfig struct {
	// BaseURL is the agent's base URL; the card is at BaseURL + Path.
	BaseURL string
	// Path is the card's path (default DefaultCardPath).
	Path string
	// Refresh is how often the card is fetched again, with its ETag
	// (default DefaultCardRefresh).
	Refresh time.Duration
	// Client fetches; nil: http.DefaultClient.
	Client *http.Client
	// Headers are added to every fetch (the upstream's header_up).
	Headers http.Header
	// AllowOrigins are the origins (scheme://host[:port]) other than
	// BaseURL's that the card's interface may be on. A card whose
	// interface is on any other origin is refused.
	AllowOrigins []string
	// RequestContext derives each fetch's context (see Config).
	RequestContext func(context.Context) context.Context
	// Logger logs fetch failures and changes (nil: none).
	Logger *zap.Logger
}

// Card is an agent card as fetched, with the interface the module speaks
// to: the agent's best JSON-RPC interface, 1.0 before 0.3.
type Card struct {
	Card      *protocol.AgentCard
	Interface protocol.Interface
	// ETag is the card document's entity tag ("" if it sent none).
	ETag string
}

// ErrNoCard: the agent has not given a usable card yet.
var ErrNoCard = errors.New("upstream: the agent's card has not been fetched yet")

// Cards fetches an agent's card and keeps it fresh in the background.
// Several configs (reloads) share one through a usage pool: the card they
// serve survives a reload.
type Cards struct {
	cfg CardsConfig
	url string
	log *zap.Logger
	// origins are those the card's interface may be on: BaseURL's and
	// AllowOrigins, as originOf writes them.
	origins map[string]bool
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once

	mu      sync.Mutex
	current *Card
	lastErr error
	subs    map[int]func(*Card)
	nextSub int
	// fetching serialises fetches (the loop's and Get's on demand).
	fetching sync.Mutex
}

// NewCards checks cfg and returns the fetcher; Start begins fetching.
func NewCards(cfg CardsConfig) (*Cards, error) {
	if cfg.Path == "" {
		cfg.Path = DefaultCardPath
	}
	if !strings.HasPrefix(cfg.Path, "/") {
		return nil, fmt.Errorf("upstream: card path %q must start with /", cfg.Path)
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = DefaultCardRefresh
	}
	if cfg.Client == nil {
		cfg.Client = http.DefaultClient
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("upstream: base url %q is not an absolute http(s) URL", cfg.BaseURL)
	}
	origins := map[string]bool{originOf(u): true}
	for _, o := range cfg.AllowOrigins {
		norm, err := ParseOrigin(o)
		if err != nil {
			return nil, fmt.Errorf("upstream: allow_origin: %w", err)
		}
		origins[norm] = true
	}
	return &Cards{
		cfg:     cfg,
		url:     strings.TrimSuffix(cfg.BaseURL, "/") + cfg.Path,
		log:     cfg.Logger,
		origins: origins,
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		subs:    map[int]func(*Card){},
	}, nil
}

// URL is where the card is fetched.
func (c *Cards) URL() string { return c.url }

// Start fetches the card now and then every Refresh (more often while
// there is none), until Close.
func (c *Cards) Start() {
	go c.loop()
}

// Close stops the background fetches. Safe to call more than once; the
// usage pool calls it (Destruct) when the last config lets go.
func (c *Cards) Close() error {
	c.once.Do(func() { close(c.stop) })
	return nil
}

// Destruct is Close, for caddy.UsagePool.
func (c *Cards) Destruct() error { return c.Close() }

func (c *Cards) loop() {
	defer close(c.done)
	retry := cardRetryStart
	for {
		wait := c.cfg.Refresh
		if _, err := c.fetch(); err != nil && c.Current() == nil {
			wait = retry
			retry = min(2*retry, cardRetryMax)
		} else {
			retry = cardRetryStart
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-c.stop:
			t.Stop()
			return
		}
	}
}

// Current is the card as last fetched (nil before the first success).
func (c *Cards) Current() *Card {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.current
}

// Get returns the current card, fetching it first if there is none yet
// (a run that comes before the background fetch succeeded).
func (c *Cards) Get(ctx context.Context) (*Card, error) {
	if cur := c.Current(); cur != nil {
		return cur, nil
	}
	return c.fetch()
}

// Subscribe calls fn with the current card (if any) and with each new
// one; the returned func stops it.
func (c *Cards) Subscribe(fn func(*Card)) (cancel func()) {
	c.mu.Lock()
	id := c.nextSub
	c.nextSub++
	c.subs[id] = fn
	cur := c.current
	c.mu.Unlock()
	if cur != nil {
		fn(cur)
	}
	return func() {
		c.mu.Lock()
		delete(c.subs, id)
		c.mu.Unlock()
	}
}

// fetch gets the card (conditionally, when one is held) and, when it is
// new and valid, makes it current and tells the subscribers. A card that
// fails validation is logged and the one held before stays.
func (c *Cards) fetch() (*Card, error) {
	c.fetching.Lock()
	defer c.fetching.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), cardFetchTimeout)
	defer cancel()
	if c.cfg.RequestContext != nil {
		ctx = c.cfg.RequestContext(ctx)
	}
	cur := c.Current()
	card, err := c.get(ctx, cur)
	if err != nil {
		c.mu.Lock()
		first := c.lastErr == nil || c.lastErr.Error() != err.Error()
		c.lastErr = err
		c.mu.Unlock()
		switch oe, foreign := errors.AsType[*originError](err); {
		case !first:
		case foreign:
			c.log.Warn("a2a: the agent's card puts its interface on another origin; the card is not used",
				zap.String("card_url", c.url), zap.String("origin", oe.origin), zap.String("interface", oe.url))
		default:
			c.log.Warn("a2a: the agent's card could not be fetched", zap.String("card_url", c.url), zap.Error(err))
		}
		return cur, err
	}
	if card == cur {
		return cur, nil
	}
	c.mu.Lock()
	c.current, c.lastErr = card, nil
	subs := make([]func(*Card), 0, len(c.subs))
	for _, fn := range c.subs {
		subs = append(subs, fn)
	}
	c.mu.Unlock()
	c.log.Info("a2a: agent card fetched", zap.String("card_url", c.url), zap.String("name", card.Card.Name),
		zap.String("interface", card.Interface.URL), zap.String("version", card.Interface.Version.String()))
	for _, fn := range subs {
		fn(card)
	}
	return card, nil
}

// get fetches the card document; cur is returned as it is on a 304.
func (c *Cards) get(ctx context.Context, cur *Card) (*Card, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range c.cfg.Headers {
		req.Header[k] = append([]string(nil), vs...)
	}
	req.Header.Set("Accept", "application/json")
	// The 1.0 card: an agent that serves both shapes gives its
	// supportedInterfaces, which name both versions.
	req.Header.Set("A2A-Version", "1.0")
	if cur != nil && cur.ETag != "" {
		req.Header.Set("If-None-Match", cur.ETag)
	}
	resp, err := c.cfg.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified && cur != nil {
		return cur, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("upstream: card answered %d %s; %s", resp.StatusCode, http.StatusText(resp.StatusCode), notAnAgent)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, DefaultMaxCardBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > DefaultMaxCardBytes {
		return nil, fmt.Errorf("upstream: the card is over %d bytes", DefaultMaxCardBytes)
	}
	ac, err := protocol.ParseCard(body)
	if err != nil {
		if !looksLikeCard(body) {
			return nil, fmt.Errorf("upstream: the agent's card is not valid: %w; %s", err, notAnAgent)
		}
		return nil, fmt.Errorf("upstream: the agent's card is not valid: %w", err)
	}
	iface, err := pickInterface(ac, c.url, c.origins)
	if err != nil {
		return nil, err
	}
	return &Card{Card: ac, Interface: iface, ETag: resp.Header.Get("Etag")}, nil
}

// notAnAgent ends the error of a card fetch whose answer shows no A2A
// agent at all. The usual cause is a service written to the module's own
// agent contract, which serves no card, configured as `upstream a2a`.
const notAnAgent = "is this an A2A agent? For a service written to the agent contract, use `upstream http`"

// looksLikeCard reports whether body is a JSON object with any member
// every card has: one that has none is no card with a bad field, but
// something else answering at the card's URL.
func looksLikeCard(body []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	for _, k := range []string{"name", "skills", "supportedInterfaces", "url", "protocolVersion", "capabilities"} {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// pickInterface chooses the interface the module speaks to: JSON-RPC,
// 1.0 before 0.3, in the card's order otherwise. Its URL may be relative
// to the card's, and must be on one of origins: the card is refused
// otherwise, not another interface picked, since a card that points
// elsewhere is not the agent's word to trust.
func pickInterface(card *protocol.AgentCard, cardURL string, origins map[string]bool) (protocol.Interface, error) {
	for _, want := range []protocol.Version{protocol.V10, protocol.V03} {
		for _, in := range card.Interfaces {
			if in.Binding != "JSONRPC" || in.Version != want {
				continue
			}
			base, _ := url.Parse(cardURL)
			u, err := base.Parse(in.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return protocol.Interface{}, fmt.Errorf("upstream: the card's JSON-RPC interface URL %q is not an http(s) URL", in.URL)
			}
			if !origins[originOf(u)] {
				return protocol.Interface{}, &originError{url: u.String(), origin: u.Scheme + "://" + u.Host}
			}
			in.URL = u.String()
			return in, nil
		}
	}
	var have []string
	for _, in := range card.Interfaces {
		have = append(have, in.Binding+" "+in.Version.String())
	}
	return protocol.Interface{}, fmt.Errorf("upstream: the agent offers no JSON-RPC interface of A2A 0.3 or 1.0 (it offers %s)", strings.Join(have, ", "))
}

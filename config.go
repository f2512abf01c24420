package caddya2a

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// specVersions maps the spec_version values to wire versions.
var specVersions = map[string]protocol.Version{
	"0.3": protocol.V03,
	"1.0": protocol.V10,
}

// parseSpecVersion accepts the Major.Minor form A2A-Version uses.
func parseSpecVersion(s string) (protocol.Version, error) {
	v, ok := specVersions[s]
	if !ok {
		return 0, fmt.Errorf("unsupported spec_version %q (want 0.3 or 1.0)", s)
	}
	return v, nil
}

// applyDefaults fills unset settings and refuses inconsistent ones. It is
// shared by JSON and Caddyfile configs, so every check the Caddyfile parser
// makes with a line number is repeated here for JSON.
func (h *Handler) applyDefaults() error {
	if h.Upstream == nil || h.Upstream.URL == "" {
		return errors.New("upstream is required")
	}
	if len(h.SpecVersion) == 0 {
		h.SpecVersion = []string{"0.3", "1.0"}
	}
	h.versions = h.versions[:0]
	for _, s := range h.SpecVersion {
		v, err := parseSpecVersion(s)
		if err != nil {
			return err
		}
		if slices.Contains(h.versions, v) {
			return fmt.Errorf("spec_version %s listed twice", s)
		}
		h.versions = append(h.versions, v)
	}
	if h.CardPath == "" {
		h.CardPath = DefaultCardPath
	}
	if h.RPCPath == "" {
		h.RPCPath = DefaultRPCPath
	}
	for name, p := range map[string]string{"card_path": h.CardPath, "rpc_path": h.RPCPath} {
		if err := checkPath(p); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if h.CardPath == h.RPCPath {
		return fmt.Errorf("card_path and rpc_path are both %s", h.CardPath)
	}
	if h.Version == "" {
		h.Version = DefaultCardVersion
	}
	if h.Owner == "" {
		h.Owner = DefaultOwner
	}
	if h.Store == nil {
		h.Store = new(Store)
	}
	if err := h.Store.applyDefaults(); err != nil {
		return err
	}
	if err := defaulted(&h.MaxRequestBody, DefaultMaxRequestBody, "max_request_body must be positive"); err != nil {
		return err
	}
	if err := h.Limits.check(); err != nil {
		return err
	}
	if err := checkExtensions(h.Extensions); err != nil {
		return err
	}
	if err := h.CORS.check(); err != nil {
		return err
	}
	switch h.Reply {
	case "":
		h.Reply = ReplyTask
	case ReplyTask, ReplyMessage:
	default:
		return fmt.Errorf("reply: want %q or %q, got %q", ReplyTask, ReplyMessage, h.Reply)
	}
	if h.Streaming == nil {
		on := true
		h.Streaming = &on
	}
	if err := defaulted(&h.Heartbeat, caddy.Duration(DefaultHeartbeat), "heartbeat must be positive"); err != nil {
		return err
	}
	if err := defaulted(&h.CardMaxAge, caddy.Duration(DefaultCardMaxAge), "card_max_age must not be negative"); err != nil {
		return err
	}
	return h.Upstream.applyDefaults()
}

// checkPath accepts an absolute, clean request path.
func checkPath(p string) error {
	if !strings.HasPrefix(p, "/") {
		return fmt.Errorf("%q must start with /", p)
	}
	if strings.ContainsAny(p, "?#*{} \t") {
		return fmt.Errorf("%q must be a plain path (no query, fragment, wildcard or placeholder)", p)
	}
	return nil
}

// buildCard turns the card settings into the neutral card and validates
// it, so a bad card fails `caddy validate` rather than a client. The
// interfaces are left out: the card server adds them per request from the
// RPC URL.
func (h *Handler) buildCard() (*protocol.AgentCard, error) {
	card := &protocol.AgentCard{
		Name:               h.Name,
		Description:        h.Description,
		Version:            h.Version,
		DocumentationURL:   h.DocumentationURL,
		IconURL:            h.IconURL,
		DefaultInputModes:  orDefault(h.InputModes, defaultModes),
		DefaultOutputModes: orDefault(h.OutputModes, defaultModes),
		Extensions:         protocolExtensions(h.Extensions),
	}
	if h.Provider != nil {
		card.Provider = &protocol.Provider{Organization: h.Provider.Organization, URL: h.Provider.URL}
	}
	for _, s := range h.Skills {
		card.Skills = append(card.Skills, protocol.Skill{
			ID:          s.ID,
			Name:        s.Name,
			Description: s.Description,
			Tags:        slices.Clone(s.Tags),
			Examples:    slices.Clone(s.Examples),
			InputModes:  slices.Clone(s.InputModes),
			OutputModes: slices.Clone(s.OutputModes),
		})
	}
	// Validate with a placeholder interface: the real URL is only known per
	// request, and the card rules require one.
	probe := *card
	for _, v := range h.versions {
		probe.Interfaces = append(probe.Interfaces, protocol.Interface{
			URL: "https://a2a.invalid" + h.RPCPath, Binding: "JSONRPC", Version: v,
		})
	}
	if err := protocol.ValidateCard(&probe); err != nil {
		return nil, fmt.Errorf("agent card: %w", err)
	}
	return card, nil
}

func orDefault(v, def []string) []string {
	if len(v) == 0 {
		return slices.Clone(def)
	}
	return slices.Clone(v)
}

// durationString renders d the way a Caddyfile would write it, for store
// keys and messages.
func durationString(d caddy.Duration) string { return time.Duration(d).String() }

// defaulted applies the rule every count, size and duration setting of the
// handler follows: unset (zero) takes the default, a negative value is
// refused with msg.
func defaulted[T ~int | ~int64](v *T, def T, msg string) error {
	if *v == 0 {
		*v = def
	}
	if *v < 0 {
		return errors.New(msg)
	}
	return nil
}

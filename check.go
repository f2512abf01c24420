package caddya2a

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/caddyserver/caddy/v2"
)

// The checks of the handler's own settings: one function (check) for a
// JSON and a Caddyfile config alike, run by Validate and, through
// checkParsed, by the Caddyfile parser so that its message names the line.

// checkParsed runs check, the one check of the handler's settings, on a
// copy of h with the defaults applied, as Provision leaves it: the
// Caddyfile parser calls it to name the a2a block's line in the same
// message Validate gives a JSON config. A url with a placeholder is left
// to Validate, which checks its value once resolved where Caddy runs.
func (h *Handler) checkParsed() error {
	c := *h
	if h.CORS != nil {
		cors := *h.CORS
		c.CORS = &cors
	}
	if h.Inspector != nil {
		in := *h.Inspector
		c.Inspector = &in
	}
	c.versions = nil
	c.fillDefaults()
	c.publicURL = c.URL
	if strings.Contains(c.URL, "{") {
		// Set, so that what needs a url (sign_card) has one; its value is
		// Validate's to check.
		c.publicURL = "https://url.invalid" + c.RPCPath
	}
	return c.check()
}

// fillDefaults applies the defaults of fill.
func (h *Handler) fillDefaults() {
	if len(h.SpecVersion) == 0 {
		h.SpecVersion = []string{"0.3", "1.0"}
	}
	if h.CardPath == "" {
		h.CardPath = DefaultCardPath
	}
	if h.RPCPath == "" {
		h.RPCPath = DefaultRPCPath
	}
	if h.Owner == "" {
		h.Owner = DefaultOwner
	}
	if h.MaxRequestBody == 0 {
		h.MaxRequestBody = DefaultMaxRequestBody
	}
	if h.Reply == "" {
		h.Reply = ReplyTask
	}
	if h.Streaming == nil {
		h.Streaming = new(true)
	}
	if h.CardMaxAge == 0 {
		h.CardMaxAge = caddy.Duration(DefaultCardMaxAge)
	}
	h.CORS.fill()
	h.Inspector.fill(h.RPCPath)
}

// check holds the handler's settings (defaults filled) to their rules;
// the guest modules check their own. It derives the wire versions and the
// card on the way.
func (h *Handler) check() error {
	if h.upstream == nil && len(h.UpstreamRaw) == 0 {
		return errors.New("upstream is required")
	}
	h.versions = h.versions[:0]
	for _, s := range h.SpecVersion {
		v, ok := specVersions[s]
		if !ok {
			return fmt.Errorf("unsupported spec_version %q (want 0.3 or 1.0)", s)
		}
		if slices.Contains(h.versions, v) {
			return fmt.Errorf("spec_version %s listed twice", s)
		}
		h.versions = append(h.versions, v)
	}
	for _, p := range []struct{ name, path string }{{"card_path", h.CardPath}, {"rpc_path", h.RPCPath}} {
		if err := checkPath(p.path); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
	}
	if h.CardPath == h.RPCPath {
		return fmt.Errorf("card_path and rpc_path are both %s", h.CardPath)
	}
	if err := h.checkRESTPath(); err != nil {
		return err
	}
	if err := h.checkInspector(); err != nil {
		return err
	}

	if h.URL != "" {
		if err := checkPublicURL(h.publicURL); err != nil {
			return fmt.Errorf("url: %w", err)
		}
	}
	switch {
	case h.MaxRequestBody < 0:
		return errors.New("max_request_body must be positive")
	case h.MaxRequestBody > maxRequestBody:
		return errors.New("max_request_body must be at most 1TiB")
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
	if err := h.Push.check(); err != nil {
		return err
	}
	if err := h.checkSecurity(); err != nil {
		return err
	}
	if err := h.SignCard.check(h.URL != ""); err != nil {
		return err
	}
	if h.Reply != ReplyTask && h.Reply != ReplyMessage && h.Reply != ReplyAuto {
		return fmt.Errorf("reply: want %q, %q or %q, got %q", ReplyTask, ReplyMessage, ReplyAuto, h.Reply)
	}
	if h.Heartbeat < 0 {
		return errors.New("heartbeat must be positive")
	}
	if h.CardMaxAge < 0 {
		return errors.New("card_max_age must not be negative")
	}
	fromAgent := h.cardFromAgent()
	if err := h.checkCardSettings(fromAgent); err != nil {
		return err
	}
	h.card = nil
	if fromAgent && !h.cardComplete() {
		// The agent's card, merged with what is set, is validated as it
		// comes; until then there is no card to serve.
		return nil
	}
	card, err := h.buildCard()
	if err != nil {
		return err
	}
	h.card, h.extCard = card, nil
	if h.ExtendedCard != nil {
		if h.extCard, err = h.extendedCard(card); err != nil {
			return err
		}
	}
	return nil
}

// cardFromAgent reports whether the upstream brings a card of its own
// (CardProvider): the card settings are then overrides, all optional.
func (h *Handler) cardFromAgent() bool {
	if h.upstream != nil {
		_, ok := h.upstream.(CardProvider)
		return ok
	}
	var probe struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(h.UpstreamRaw, &probe) != nil || probe.Kind == "" {
		return false
	}
	info, err := caddy.GetModule("a2a.upstreams." + probe.Kind)
	if err != nil {
		return false
	}
	_, ok := info.New().(CardProvider)
	return ok
}

// cardComplete reports whether the card settings alone make a card: a
// gateway serves it until its agent's card is known.
func (h *Handler) cardComplete() bool {
	return strings.TrimSpace(h.Name) != "" && strings.TrimSpace(h.Description) != "" && len(h.Skills) > 0
}

// checkExtensions refuses what no client could activate, repeated URIs
// and params that are not an object.
func checkExtensions(list []Extension) error {
	seen := map[string]bool{}
	for i, x := range list {
		switch {
		case x.URI == "":
			return fmt.Errorf("extensions[%d]: uri is required", i)
		case strings.ContainsAny(x.URI, ", \t\r\n"):
			return fmt.Errorf("extension %q: the uri must not contain commas or white space", x.URI)
		case seen[x.URI]:
			return fmt.Errorf("extension %q declared twice", x.URI)
		}
		seen[x.URI] = true
		if len(x.Params) > 0 && !isJSONObject(x.Params) {
			return fmt.Errorf("extension %q: params must be a JSON object", x.URI)
		}
	}
	return nil
}

func isJSONObject(b []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m != nil
}

// checkPath accepts an absolute, clean request path.
// checkRESTPath checks rest_path: a plain path, without a trailing slash
// (the routes add theirs) unless it is the root. Each version served gets
// its routes (1.0's under it, 0.3's under its /v1).
func (h *Handler) checkRESTPath() error {
	if h.RESTPath == "" {
		return nil
	}
	if err := checkPath(h.RESTPath); err != nil {
		return fmt.Errorf("rest_path: %w", err)
	}
	if h.RESTPath != "/" && strings.HasSuffix(h.RESTPath, "/") {
		return fmt.Errorf("rest_path: %q must not end with / (the routes are %smessage:send, …)", h.RESTPath, h.RESTPath)
	}
	return nil
}

func checkPath(p string) error {
	if !strings.HasPrefix(p, "/") {
		return fmt.Errorf("%q must start with /", p)
	}
	if strings.ContainsAny(p, "?#*{} \t") {
		return fmt.Errorf("%q must be a plain path (no query, fragment, wildcard or placeholder)", p)
	}
	return nil
}

// checkAbsoluteURL accepts an absolute http(s) URL with a host and no
// credentials (a card must not leak them, and an upstream must get its
// secrets from header_up where they are not logged with the URL).
func checkAbsoluteURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		// Without a scheme, url.Parse takes "localhost:9000" for the scheme
		// localhost and refuses "127.0.0.1:9000" or ":9000" in its own
		// words: the same mistake gets the same message, with the fix.
		if hasHTTPScheme(s) {
			return nil, fmt.Errorf("invalid URL %q: %w", s, errors.Unwrap(err))
		}
		return nil, notAbsoluteURL(s)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("URL %q has no host", s)
	}
	if u.User != nil {
		return nil, fmt.Errorf("URL %q must not carry credentials", s)
	}
	return u, nil
}

// hasHTTPScheme reports whether s starts with http:// or https://, in
// any case.
func hasHTTPScheme(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// notAbsoluteURL is the error for s without an http(s) scheme, suggesting
// http://s when that is a URL with a host (a host:port or a bare name).
func notAbsoluteURL(s string) error {
	msg := fmt.Sprintf("URL %q must be absolute http:// or https://", s)
	if !strings.Contains(s, "://") && s != "" {
		host := s
		if strings.HasPrefix(s, ":") {
			host = "localhost" + s
		}
		if u, err := url.Parse("http://" + host); err == nil && u.Hostname() != "" {
			msg += fmt.Sprintf(" (e.g. %q)", u.String())
		}
	}
	return errors.New(msg)
}

// checkPublicURL accepts the card's RPC URL: clients POST to it verbatim.
func checkPublicURL(s string) error {
	u, err := checkAbsoluteURL(s)
	if err != nil {
		return err
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("URL %q must not have a query or fragment", s)
	}
	return nil
}

// checkCardSettings holds the card's settings to the card's rules, in
// the words of the config (protocol.ValidateCard, which buildCard runs,
// names the card's wire fields): one message for a JSON and a Caddyfile
// config, with the setting to add or fix.
func (h *Handler) checkCardSettings(fromAgent bool) error {
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	switch {
	case blank(h.Name) && (!fromAgent || h.Name != ""):
		return errors.New("name is required (the agent card's name)")
	case blank(h.Description) && (!fromAgent || h.Description != ""):
		return errors.New("description is required (the agent card's description)")
	case h.Version != "" && blank(h.Version):
		return errors.New("version must not be blank (the agent card's version; default 1.0.0)")
	}
	if p := h.Provider; p != nil {
		if blank(p.Organization) {
			return errors.New("provider: organization is required")
		}
		if p.URL == "" {
			return errors.New("provider: url is required")
		}
		if _, err := checkAbsoluteURL(p.URL); err != nil {
			return fmt.Errorf("provider: %w", err)
		}
	}
	for _, u := range []struct{ name, v string }{{"documentation_url", h.DocumentationURL}, {"icon_url", h.IconURL}} {
		if u.v == "" {
			continue
		}
		if _, err := checkAbsoluteURL(u.v); err != nil {
			return fmt.Errorf("%s: %w", u.name, err)
		}
	}
	if len(h.Skills) == 0 && !fromAgent {
		return errors.New("at least one skill is required (the agent card's skills, each with an id, a name, a description and tags)")
	}
	seen := make(map[string]bool, len(h.Skills))
	for i, s := range h.Skills {
		switch {
		case blank(s.ID):
			return fmt.Errorf("skills[%d]: id is required", i)
		case seen[s.ID]:
			return fmt.Errorf("skill %q declared twice", s.ID)
		case blank(s.Name):
			return fmt.Errorf("skill %q: name is required", s.ID)
		case blank(s.Description):
			return fmt.Errorf("skill %q: description is required", s.ID)
		case len(s.Tags) == 0:
			return fmt.Errorf("skill %q: at least one tag is required (tags)", s.ID)
		case slices.ContainsFunc(s.Tags, blank):
			return fmt.Errorf("skill %q: a tag is blank", s.ID)
		}
		seen[s.ID] = true
	}
	return nil
}

// resolveGlobal expands the placeholders known without a request (env,
// file, system, time); an unknown one is an error because it would
// otherwise be sent literally.
func resolveGlobal(repl *caddy.Replacer, s string) (string, error) {
	out, err := repl.ReplaceOrErr(s, false, true)
	if err != nil {
		return "", fmt.Errorf("%w (only global placeholders such as {env.NAME} are resolved here)", err)
	}
	return out, nil
}

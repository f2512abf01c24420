package caddya2a

import (
	"cmp"
	"slices"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// The Agent Card built from the handler's checked settings.

// buildCard turns the card settings into the neutral card and validates
// it, so a bad card fails `caddy validate` rather than a client. The
// interfaces are left out: the card server adds them per request from the
// RPC URL.
func (h *Handler) buildCard() (*protocol.AgentCard, error) {
	card := &protocol.AgentCard{
		Name:               h.Name,
		Description:        h.Description,
		Version:            cmp.Or(h.Version, DefaultCardVersion),
		DocumentationURL:   h.DocumentationURL,
		IconURL:            h.IconURL,
		DefaultInputModes:  orDefault(h.InputModes, defaultModes),
		DefaultOutputModes: orDefault(h.OutputModes, defaultModes),
		Extensions:         protocolExtensions(h.Extensions),
		PushNotifications:  h.Push != nil,
		ExtendedCard:       h.ExtendedCard != nil,
	}
	if h.Provider != nil {
		card.Provider = &protocol.Provider{Organization: h.Provider.Organization, URL: h.Provider.URL}
	}
	card.Skills = h.cardSkills()
	card.SecuritySchemes, card.Security = h.cardSecurity()
	// What checkCardSettings leaves (the media types, the security
	// schemes' URLs) is named in the card's own words, "card: <field>".
	if err := h.validateCard(card); err != nil {
		return nil, err
	}
	return card, nil
}

// validateCard validates card with a placeholder interface per version:
// the real URLs are only known per request, and the card rules require
// one.
func (h *Handler) validateCard(card *protocol.AgentCard) error {
	probe := *card
	for _, v := range h.versions {
		probe.Interfaces = append(probe.Interfaces, protocol.Interface{
			URL: "https://a2a.invalid" + h.RPCPath, Binding: "JSONRPC", Version: v,
		})
	}
	return protocol.ValidateCard(&probe)
}

func orDefault(v, def []string) []string {
	if len(v) == 0 {
		return slices.Clone(def)
	}
	return slices.Clone(v)
}

// mergeCard is a gateway's card: the agent's, with every card field the
// config sets in its place (skills and extensions as whole lists). The
// interfaces are the mount's (the card server adds them), and so are the
// capabilities: streaming as configured (the module streams whether the
// agent does or not), no push notifications. A signed card keeps none of
// the agent's URLs: the mount's key vouches only for the URLs of its
// config, not for what the agent's card says at its next refresh.
func (h *Handler) mergeCard(agent *protocol.AgentCard) (*protocol.AgentCard, error) {
	card := *agent
	card.Interfaces = nil
	if h.SignCard != nil {
		card.DocumentationURL, card.IconURL, card.Provider = "", "", nil
	}
	card.PushNotifications = h.Push != nil
	card.ExtendedCard = h.ExtendedCard != nil
	card.Streaming = *h.Streaming
	h.CardFields.overlay(&card)
	if len(h.Skills) > 0 {
		card.Skills = h.cardSkills()
	}
	if len(h.Extensions) > 0 {
		card.Extensions = protocolExtensions(h.Extensions)
	}
	// How callers authenticate is this mount's (Caddy's), never the
	// agent's: the agent's schemes are what the module would need.
	card.SecuritySchemes, card.Security = h.cardSecurity()
	if err := h.validateCard(&card); err != nil {
		return nil, err
	}
	return &card, nil
}

// CardFields are the card fields a config sets, in the a2a block and in
// extended_card alike (where each one set replaces the public card's, and
// a skill with a public skill's id replaces it).
type CardFields struct {
	// Name of the agent (card field). Required in the a2a block.
	Name string `json:"name,omitempty"`
	// Description of the agent (card field). Required in the a2a block.
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
	// Skills listed in the card; the a2a block needs at least one.
	Skills []Skill `json:"skills,omitempty"`
}

// overlay puts each field f sets, skills aside, in place of card's.
func (f *CardFields) overlay(card *protocol.AgentCard) {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&card.Name, f.Name)
	set(&card.Description, f.Description)
	set(&card.Version, f.Version)
	set(&card.DocumentationURL, f.DocumentationURL)
	set(&card.IconURL, f.IconURL)
	if f.Provider != nil {
		card.Provider = &protocol.Provider{Organization: f.Provider.Organization, URL: f.Provider.URL}
	}
	if len(f.InputModes) > 0 {
		card.DefaultInputModes = slices.Clone(f.InputModes)
	}
	if len(f.OutputModes) > 0 {
		card.DefaultOutputModes = slices.Clone(f.OutputModes)
	}
}

// cardSkills are the configured skills as the card's.
func (h *Handler) cardSkills() []protocol.Skill { return skillsOf(h.Skills) }

// skillsOf is list as the card's skills.
func skillsOf(list []Skill) []protocol.Skill {
	var out []protocol.Skill
	for _, s := range list {
		out = append(out, protocol.Skill{
			ID:          s.ID,
			Name:        s.Name,
			Description: s.Description,
			Tags:        slices.Clone(s.Tags),
			Examples:    slices.Clone(s.Examples),
			InputModes:  slices.Clone(s.InputModes),
			OutputModes: slices.Clone(s.OutputModes),
		})
	}
	return out
}

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
// agent does or not), no push notifications.
func (h *Handler) mergeCard(agent *protocol.AgentCard) (*protocol.AgentCard, error) {
	card := *agent
	card.Interfaces = nil
	card.PushNotifications = h.Push != nil
	card.ExtendedCard = h.ExtendedCard != nil
	card.Streaming = *h.Streaming
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&card.Name, h.Name)
	set(&card.Description, h.Description)
	set(&card.Version, h.Version)
	set(&card.DocumentationURL, h.DocumentationURL)
	set(&card.IconURL, h.IconURL)
	if h.Provider != nil {
		card.Provider = &protocol.Provider{Organization: h.Provider.Organization, URL: h.Provider.URL}
	}
	if len(h.InputModes) > 0 {
		card.DefaultInputModes = slices.Clone(h.InputModes)
	}
	if len(h.OutputModes) > 0 {
		card.DefaultOutputModes = slices.Clone(h.OutputModes)
	}
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

package caddya2a

import (
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
	// What checkCardSettings leaves (the media types) is named in the
	// card's own words, "card: <field>".
	if err := protocol.ValidateCard(&probe); err != nil {
		return nil, err
	}
	return card, nil
}

func orDefault(v, def []string) []string {
	if len(v) == 0 {
		return slices.Clone(def)
	}
	return slices.Clone(v)
}

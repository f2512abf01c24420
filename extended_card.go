package caddya2a

import (
	"fmt"
	"slices"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// ExtendedCard is what authenticated callers get beyond the public card
// (A2A's extended card): card fields in place of the public ones, and
// skills added to them (or in place of a public skill of the same id).
// With it the card declares capabilities.extendedAgentCard (0.3
// supportsAuthenticatedExtendedCard).
type ExtendedCard struct {
	CardFields
}

// extendedCardKeys are the card subdirectives an extended_card block
// takes: the a2a block's own, parsed by the same code.
var extendedCardKeys = []string{"name", "description", "version", "provider", "documentation_url", "icon_url",
	"input_modes", "output_modes", "skill"}

// unmarshalExtendedCard parses `extended_card { … }`: the card
// subdirectives of the a2a block, each once but skill.
func (h *Handler) unmarshalExtendedCard(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	var o Handler
	if err := subdirectives(d, "extended_card", []string{"skill"}, func(key string) error {
		if !slices.Contains(extendedCardKeys, key) {
			return unknownSubdirective(d, "extended_card", key, extendedCardKeys)
		}
		return o.unmarshalKey(d, key)
	}); err != nil {
		return err
	}
	h.ExtendedCard = &ExtendedCard{CardFields: o.CardFields}
	return nil
}

// extendedCard is the public card with the extended_card settings in
// place, validated like the public one.
func (h *Handler) extendedCard(public *protocol.AgentCard) (*protocol.AgentCard, error) {
	x := h.ExtendedCard
	card := *public
	x.CardFields.overlay(&card)
	card.Skills = slices.Clone(public.Skills)
	for _, s := range skillsOf(x.Skills) {
		if i := slices.IndexFunc(card.Skills, func(p protocol.Skill) bool { return p.ID == s.ID }); i >= 0 {
			card.Skills[i] = s
		} else {
			card.Skills = append(card.Skills, s)
		}
	}
	if err := h.validateCard(&card); err != nil {
		return nil, fmt.Errorf("extended_card: %w", err)
	}
	return &card, nil
}

package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
)

// WellKnownCardPath is where both protocol versions publish the card.
const WellKnownCardPath = "/.well-known/agent-card.json"

// cardJSON holds the members of both card versions (and of the hybrid
// document, which has both): the 1.0 supportedInterfaces, the 0.3 url,
// preferredTransport, additionalInterfaces and protocolVersion, and the
// two spellings of the extended card flag. Cards are read once per
// refresh, so encoding/json does here what the hot path does by hand.
type cardJSON struct {
	Name             string `json:"name"`
	Description      string `json:"description"`
	Version          string `json:"version"`
	DocumentationURL string `json:"documentationUrl"`
	IconURL          string `json:"iconUrl"`
	Provider         *struct {
		Organization string `json:"organization"`
		URL          string `json:"url"`
	} `json:"provider"`
	SupportedInterfaces []struct {
		URL             string `json:"url"`
		ProtocolBinding string `json:"protocolBinding"`
		ProtocolVersion string `json:"protocolVersion"`
		Tenant          string `json:"tenant"`
	} `json:"supportedInterfaces"`
	URL                  string `json:"url"`
	PreferredTransport   string `json:"preferredTransport"`
	ProtocolVersion      string `json:"protocolVersion"`
	AdditionalInterfaces []struct {
		URL       string `json:"url"`
		Transport string `json:"transport"`
	} `json:"additionalInterfaces"`
	Capabilities struct {
		Streaming         bool `json:"streaming"`
		PushNotifications bool `json:"pushNotifications"`
		ExtendedAgentCard bool `json:"extendedAgentCard"`
		Extensions        []struct {
			URI         string          `json:"uri"`
			Description string          `json:"description"`
			Required    bool            `json:"required"`
			Params      json.RawMessage `json:"params"`
		} `json:"extensions"`
	} `json:"capabilities"`
	SupportsAuthenticatedExtendedCard bool     `json:"supportsAuthenticatedExtendedCard"`
	DefaultInputModes                 []string `json:"defaultInputModes"`
	DefaultOutputModes                []string `json:"defaultOutputModes"`
	Skills                            []struct {
		ID          string   `json:"id"`
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Tags        []string `json:"tags"`
		Examples    []string `json:"examples"`
		InputModes  []string `json:"inputModes"`
		OutputModes []string `json:"outputModes"`
	} `json:"skills"`
}

// ParseCard reads an agent's card of either version into the neutral
// model. A card with supportedInterfaces (1.0, or the hybrid document) is
// read by them, each with its protocolVersion, binding and tenant;
// entries of a version this module does not speak are skipped. Otherwise
// it is a 0.3 card: url with preferredTransport (JSONRPC by default)
// first, then the additionalInterfaces not already listed, all of the
// card's protocolVersion (0.3 by default; a2a-go's 0.3 rendering of a 1.0
// card states 1.0 there, and its reader takes it at its word, as this one
// does). An empty binding reads as JSONRPC.
//
// The card must be one this module can serve from and call: the checks of
// ValidateCard (name, description, version, skills with tags, URLs, media
// types, extensions), at least one interface, an http(s) URL for every
// JSONRPC and HTTP+JSON interface, a URL for any other, a known binding,
// and a tenant within the identifier bound. Otherwise the error is a
// *Error -32006 whose violations name every field that is wrong, in the
// card's own member names.
func ParseCard(b []byte) (*AgentCard, error) {
	depth, ok := jsonwire.Valid(b)
	switch {
	case !ok:
		return nil, cardError(FieldViolation{Field: "card", Description: "must be valid JSON"})
	case jsonwire.KindOf(jsonwire.TrimSpace(b)) != jsonwire.Object:
		return nil, cardError(FieldViolation{Field: "card", Description: "must be an object"})
	case depth > DefaultMaxDepth:
		return nil, cardError(FieldViolation{Field: "card", Description: "nests " + strconv.Itoa(depth) +
			" levels deep, over the " + LimitMaxJSONDepth + " limit of " + strconv.Itoa(DefaultMaxDepth)})
	}
	var raw cardJSON
	if err := json.Unmarshal(b, &raw); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, cardError(FieldViolation{Field: te.Field, Description: "must not be a " + te.Value})
		}
		return nil, cardError(FieldViolation{Field: "card", Description: "must be valid JSON"})
	}
	c, vs := cardFromJSON(&raw)
	vs = append(vs, cardViolations(c, false)...)
	if len(vs) > 0 {
		return nil, cardError(vs...)
	}
	return c, nil
}

// cardError is the -32006 for a card that is not usable.
func cardError(vs ...FieldViolation) error {
	e := ErrInvalidAgentResponse()
	e.Message = "Invalid agent card: " + vs[0].Field + ": " + vs[0].Description
	e.Violations = vs
	return e
}

// cardFromJSON maps the document onto the model and checks the
// interfaces, which ValidateCard knows by their neutral name only.
func cardFromJSON(raw *cardJSON) (*AgentCard, []FieldViolation) {
	c := &AgentCard{
		Name: raw.Name, Description: raw.Description, Version: raw.Version,
		DocumentationURL: raw.DocumentationURL, IconURL: raw.IconURL,
		Streaming:          raw.Capabilities.Streaming,
		PushNotifications:  raw.Capabilities.PushNotifications,
		ExtendedCard:       raw.Capabilities.ExtendedAgentCard || raw.SupportsAuthenticatedExtendedCard,
		DefaultInputModes:  raw.DefaultInputModes,
		DefaultOutputModes: raw.DefaultOutputModes,
	}
	if p := raw.Provider; p != nil {
		c.Provider = &Provider{Organization: p.Organization, URL: p.URL}
	}
	for _, x := range raw.Capabilities.Extensions {
		c.Extensions = append(c.Extensions, Extension{URI: x.URI, Description: x.Description, Required: x.Required, Params: x.Params})
	}
	for _, s := range raw.Skills {
		c.Skills = append(c.Skills, Skill{ID: s.ID, Name: s.Name, Description: s.Description, Tags: s.Tags,
			Examples: s.Examples, InputModes: s.InputModes, OutputModes: s.OutputModes})
	}

	var vs []FieldViolation
	add := func(field, bindingMember string, in Interface) {
		if in.Binding == "" {
			in.Binding = bindingJSONRPC
		}
		if v := checkInterface(field, bindingMember, in); v != nil {
			vs = append(vs, *v)
			return
		}
		for _, have := range c.Interfaces {
			if have.URL == in.URL && have.Binding == in.Binding && have.Version == in.Version && have.Tenant == in.Tenant {
				return
			}
		}
		c.Interfaces = append(c.Interfaces, in)
	}
	if len(raw.SupportedInterfaces) > 0 {
		for i, si := range raw.SupportedInterfaces {
			f := fmt.Sprintf("supportedInterfaces[%d]", i)
			if si.ProtocolVersion == "" {
				vs = append(vs, FieldViolation{Field: f + ".protocolVersion", Description: "is required"})
				continue
			}
			v, ok := ParseVersionHeader(si.ProtocolVersion)
			if !ok {
				continue // a version this module does not speak
			}
			add(f, "protocolBinding", Interface{URL: si.URL, Binding: si.ProtocolBinding, Version: v, Tenant: si.Tenant})
		}
		if len(c.Interfaces) == 0 && len(vs) == 0 {
			vs = append(vs, FieldViolation{Field: "supportedInterfaces", Description: "has no interface of version 0.3 or 1.0"})
		}
		return c, vs
	}
	v, ok := ParseVersionHeader(raw.ProtocolVersion)
	if !ok {
		vs = append(vs, FieldViolation{Field: "protocolVersion", Description: fmt.Sprintf("%q is not 0.3 or 1.0", raw.ProtocolVersion)})
		return c, vs
	}
	if raw.URL == "" {
		vs = append(vs, FieldViolation{Field: "url", Description: "is required (or supportedInterfaces)"})
		return c, vs
	}
	add("", "preferredTransport", Interface{URL: raw.URL, Binding: raw.PreferredTransport, Version: v})
	for i, ai := range raw.AdditionalInterfaces {
		add(fmt.Sprintf("additionalInterfaces[%d]", i), "transport", Interface{URL: ai.URL, Binding: ai.Transport, Version: v})
	}
	return c, vs
}

// checkInterface checks one interface of an agent's card, at field ("" for
// a 0.3 card's own url and preferredTransport), its binding in the member
// bindingMember. A client calls the URL of
// an HTTP binding, so it must be what ValidateCard asks of a URL; a gRPC
// or custom binding's address has its own form, so it must only be there.
func checkInterface(field, bindingMember string, in Interface) *FieldViolation {
	urlField, bindingField := join(field, "url"), join(field, bindingMember)
	switch {
	case !knownBinding(in.Binding):
		return &FieldViolation{Field: bindingField, Description: fmt.Sprintf("%q is not JSONRPC, GRPC, HTTP+JSON or an absolute URI", in.Binding)}
	case in.Binding == bindingJSONRPC || in.Binding == "HTTP+JSON":
		if err := checkHTTPURL(in.URL); err != nil {
			return &FieldViolation{Field: urlField, Description: err.Error()}
		}
	case in.URL == "":
		return &FieldViolation{Field: urlField, Description: "is required"}
	}
	if len(in.Tenant) > maxIdentifierBytes {
		return &FieldViolation{Field: join(field, "tenant"), Description: overBytes(len(in.Tenant), limitMaxIdentifierBytes, maxIdentifierBytes)}
	}
	return nil
}

package protocol

import "encoding/json"

// AgentCard is the neutral Agent Card. Render turns it into the 0.3, 1.0 or
// hybrid JSON document.
type AgentCard struct {
	Name             string
	Description      string
	Version          string
	Provider         *Provider
	DocumentationURL string
	IconURL          string
	// Interfaces lists the served interfaces, preferred first. Each version
	// served on the JSON-RPC URL is one entry.
	Interfaces        []Interface
	Streaming         bool
	PushNotifications bool
	// ExtendedCard advertises an authenticated extended card.
	ExtendedCard       bool
	Extensions         []Extension
	DefaultInputModes  []string
	DefaultOutputModes []string
	Skills             []Skill
	// SecuritySchemes are the ways a caller may authenticate, rendered in
	// this order (a JSON object keyed by name).
	SecuritySchemes []SecurityScheme
	// Security lists the alternative requirements (any one of them
	// satisfies the server); each names schemes that must all be met.
	Security []SecurityRequirement
}

// Provider is the organisation behind the agent.
type Provider struct {
	Organization string
	URL          string
}

// Interface is one (URL, binding, version) the agent serves.
type Interface struct {
	URL string
	// Binding is "JSONRPC", "GRPC" or "HTTP+JSON".
	Binding string
	Version Version
	// Tenant is the 1.0 tenant a client names in every request to this
	// interface; empty for none (and always in 0.3, which has no tenants).
	Tenant string
}

// Extension is an A2A extension the agent supports.
type Extension struct {
	URI         string
	Description string
	Required    bool
	Params      json.RawMessage
}

// Skill is one capability listed in the card.
type Skill struct {
	ID          string
	Name        string
	Description string
	Tags        []string
	Examples    []string
	InputModes  []string
	OutputModes []string
}

// CardVariant selects the card document rendered.
type CardVariant int

// The card variants: pure 0.3, pure 1.0, and the hybrid (1.0 fields plus the
// 0.3 url/preferredTransport/protocolVersion/additionalInterfaces) served
// when the client sends no A2A-Version header.
const (
	CardHybrid CardVariant = iota
	CardV03
	CardV10
)

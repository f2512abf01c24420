package caddya2a

import (
	"fmt"
	"slices"
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// How a caller authenticates, as the card tells clients: the schemes and
// the requirements. Caddy's own directives (basic_auth, forward_auth, TLS
// client auth) enforce them; the card only describes what they enforce.

// SecurityScheme is one way a caller may authenticate, listed in the
// card's securitySchemes under its name.
type SecurityScheme struct {
	// Type is basic, bearer, apikey, oauth2, openid or mtls.
	Type string `json:"type"`
	// Description says what to send, for people (card field).
	Description string `json:"description,omitempty"`
	// BearerFormat hints at a bearer token's format, such as JWT.
	BearerFormat string `json:"bearer_format,omitempty"`
	// In (header, query or cookie) and Name place an API key.
	In   string `json:"in,omitempty"`
	Name string `json:"name,omitempty"`
	// URL is an OpenID Connect scheme's discovery document.
	URL string `json:"url,omitempty"`
	// MetadataURL is an OAuth 2 scheme's RFC 8414 metadata document.
	MetadataURL string `json:"metadata_url,omitempty"`
	// An OAuth 2 scheme has exactly one flow (A2A 1.0 makes the flows a
	// oneof); device_code exists in 1.0 only.
	AuthorizationCode *OAuthFlow `json:"authorization_code,omitempty"`
	ClientCredentials *OAuthFlow `json:"client_credentials,omitempty"`
	DeviceCode        *OAuthFlow `json:"device_code,omitempty"`
	// Scopes are an OAuth 2 scheme's scopes, each with what it grants.
	Scopes map[string]string `json:"scopes,omitempty"`
}

// OAuthFlow holds the endpoints of one OAuth 2 flow.
type OAuthFlow struct {
	AuthorizationURL       string `json:"authorization_url,omitempty"`
	TokenURL               string `json:"token_url,omitempty"`
	RefreshURL             string `json:"refresh_url,omitempty"`
	DeviceAuthorizationURL string `json:"device_authorization_url,omitempty"`
	// PKCERequired is A2A 1.0's pkceRequired (authorization code only).
	PKCERequired bool `json:"pkce_required,omitempty"`
}

// SecurityRequirement is one alternative of the card's security: the
// schemes it names (with the scopes each must carry) must all be met.
type SecurityRequirement map[string][]string

// The scheme types of the Caddyfile and the JSON config.
const (
	schemeBasic  = "basic"
	schemeBearer = "bearer"
	schemeAPIKey = "apikey"
	schemeOAuth2 = "oauth2"
	schemeOpenID = "openid"
	schemeMTLS   = "mtls"
)

var schemeTypes = []string{schemeBasic, schemeBearer, schemeAPIKey, schemeOAuth2, schemeOpenID, schemeMTLS}

// checkSecurity checks what the card's own rules (protocol.ValidateCard,
// run on the card built of these) cannot say in the config's words: a
// known type with the members it takes, one flow for OAuth 2 and no
// device code on a mount serving 0.3, requirements naming declared
// schemes.
func (h *Handler) checkSecurity() error {
	for _, name := range sortedKeys(h.SecuritySchemes) {
		s := h.SecuritySchemes[name]
		where := fmt.Sprintf("security_scheme %s", name)
		if s == nil {
			return fmt.Errorf("%s: empty", where)
		}
		if !slices.Contains(schemeTypes, s.Type) {
			return fmt.Errorf("%s: unknown type %q (want %s)", where, s.Type, strings.Join(schemeTypes, ", "))
		}
		flows := 0
		for _, f := range []*OAuthFlow{s.AuthorizationCode, s.ClientCredentials, s.DeviceCode} {
			if f != nil {
				flows++
			}
		}
		if s.Type != schemeOAuth2 && (flows > 0 || len(s.Scopes) > 0 || s.MetadataURL != "") {
			return fmt.Errorf("%s: flows, scopes and metadata_url are for oauth2 schemes", where)
		}
		if s.Type == schemeOAuth2 && flows != 1 {
			return fmt.Errorf("%s: an oauth2 scheme has exactly one of authorization_code, client_credentials, device_code (got %d)", where, flows)
		}
		if s.DeviceCode != nil && slices.Contains(h.versions, protocol.V03) {
			return fmt.Errorf("%s: device_code has no A2A 0.3 form; serve spec_version 1.0 only, or use another flow", where)
		}
		if (s.In != "" || s.Name != "") != (s.Type == schemeAPIKey) || (s.Type == schemeAPIKey && (s.In == "" || s.Name == "")) {
			return fmt.Errorf("%s: in and name are for apikey schemes, which need both", where)
		}
		if (s.URL != "") != (s.Type == schemeOpenID) {
			return fmt.Errorf("%s: url is the discovery document of openid schemes, which need it", where)
		}
		if s.BearerFormat != "" && s.Type != schemeBearer {
			return fmt.Errorf("%s: bearer_format is for bearer schemes", where)
		}
	}
	for i, req := range h.Security {
		if len(req) == 0 {
			return fmt.Errorf("security[%d]: names no scheme", i)
		}
		for _, name := range sortedKeys(req) {
			s := h.SecuritySchemes[name]
			if s == nil {
				return fmt.Errorf("security: %q is not declared by a security_scheme", name)
			}
			if len(req[name]) > 0 && s.Type != schemeOAuth2 && s.Type != schemeOpenID {
				return fmt.Errorf("security: %s is a %s scheme; scopes are for oauth2 and openid schemes only", name, s.Type)
			}
			for _, scope := range req[name] {
				if _, ok := s.Scopes[scope]; s.Type == schemeOAuth2 && !ok {
					return fmt.Errorf("security: scope %q is not declared by security_scheme %s", scope, name)
				}
			}
		}
	}
	return nil
}

// cardSecurity is the card's form of the schemes (sorted by name: one
// card, one byte sequence) and of the requirements (in their order, the
// schemes of each sorted).
func (h *Handler) cardSecurity() ([]protocol.SecurityScheme, []protocol.SecurityRequirement) {
	var schemes []protocol.SecurityScheme
	for _, name := range sortedKeys(h.SecuritySchemes) {
		s := h.SecuritySchemes[name]
		ps := protocol.SecurityScheme{Name: name, Description: s.Description}
		switch s.Type {
		case schemeBasic:
			ps.Kind, ps.HTTPScheme = protocol.SchemeHTTP, "Basic"
		case schemeBearer:
			ps.Kind, ps.HTTPScheme, ps.BearerFormat = protocol.SchemeHTTP, "Bearer", s.BearerFormat
		case schemeAPIKey:
			ps.Kind, ps.Location, ps.ParamName = protocol.SchemeAPIKey, s.In, s.Name
		case schemeOpenID:
			ps.Kind, ps.OpenIDConnectURL = protocol.SchemeOpenIDConnect, s.URL
		case schemeMTLS:
			ps.Kind = protocol.SchemeMutualTLS
		case schemeOAuth2:
			ps.Kind, ps.OAuth2MetadataURL = protocol.SchemeOAuth2, s.MetadataURL
			var f *OAuthFlow
			fl := &protocol.OAuthFlow{}
			switch {
			case s.AuthorizationCode != nil:
				f, fl.Kind = s.AuthorizationCode, protocol.FlowAuthorizationCode
			case s.ClientCredentials != nil:
				f, fl.Kind = s.ClientCredentials, protocol.FlowClientCredentials
			default:
				f, fl.Kind = s.DeviceCode, protocol.FlowDeviceCode
			}
			fl.AuthorizationURL, fl.TokenURL, fl.RefreshURL = f.AuthorizationURL, f.TokenURL, f.RefreshURL
			fl.DeviceAuthorizationURL, fl.PKCERequired = f.DeviceAuthorizationURL, f.PKCERequired
			for _, sc := range sortedKeys(s.Scopes) {
				fl.Scopes = append(fl.Scopes, protocol.Scope{Name: sc, Description: s.Scopes[sc]})
			}
			ps.Flow = fl
		}
		schemes = append(schemes, ps)
	}
	var reqs []protocol.SecurityRequirement
	for _, req := range h.Security {
		var pr protocol.SecurityRequirement
		for _, name := range sortedKeys(req) {
			pr = append(pr, protocol.RequiredScheme{Scheme: name, Scopes: slices.Clone(req[name])})
		}
		reqs = append(reqs, pr)
	}
	return schemes, reqs
}

// challenge is the WWW-Authenticate of a 401 for an anonymous caller of
// the extended card: the first scheme of the first requirement (or, with
// no requirement, the first declared) that HTTP can name; "" when none
// can (mutual TLS only), and the answer is a 401 without a challenge.
func (h *Handler) challenge() string {
	var order []string
	for _, req := range h.Security {
		order = append(order, sortedKeys(req)...)
	}
	order = append(order, sortedKeys(h.SecuritySchemes)...)
	for _, name := range order {
		switch h.SecuritySchemes[name].Type {
		case schemeBasic:
			return `Basic realm="a2a", charset="UTF-8"`
		case schemeBearer, schemeOAuth2, schemeOpenID:
			return `Bearer realm="a2a"`
		case schemeAPIKey:
			return `APIKey realm="a2a"`
		}
	}
	return ""
}

// unmarshalSecurityScheme parses
//
//	security_scheme <name> basic|mtls
//	security_scheme <name> bearer [<bearer-format>]
//	security_scheme <name> apikey header|query|cookie <param-name>
//	security_scheme <name> openid <discovery-url>
//	security_scheme <name> oauth2 {
//		authorization_code { authorization_url <u>; token_url <u>; refresh_url <u>; pkce_required }
//		client_credentials { token_url <u>; refresh_url <u> }
//		device_code { device_authorization_url <u>; token_url <u>; refresh_url <u> }
//		scope <scope> [<description>]
//		metadata_url <url>
//	}
//
// each with an optional block holding `description <text>` (oauth2's
// block holds it beside the rest).
func (h *Handler) unmarshalSecurityScheme(d *caddyfile.Dispenser) error {
	args := d.RemainingArgs()
	if len(args) < 2 {
		return d.Errf("security_scheme takes a name and a type (%s)", strings.Join(schemeTypes, ", "))
	}
	name, s := args[0], &SecurityScheme{Type: args[1]}
	if _, dup := h.SecuritySchemes[name]; dup {
		return d.Errf("security_scheme %q declared twice", name)
	}
	rest := args[2:]
	want := 0
	switch s.Type {
	case schemeBasic, schemeMTLS, schemeOAuth2:
	case schemeBearer:
		if len(rest) == 1 {
			s.BearerFormat, want = rest[0], 1
		}
	case schemeAPIKey:
		if want = 2; len(rest) == 2 {
			s.In, s.Name = rest[0], rest[1]
		}
	case schemeOpenID:
		if want = 1; len(rest) == 1 {
			s.URL = rest[0]
		}
	default:
		return d.Errf("security_scheme %s: unknown type %q (want %s)", name, s.Type, strings.Join(schemeTypes, ", "))
	}
	if len(rest) != want {
		return d.Errf("security_scheme %s %s: wrong number of arguments", name, s.Type)
	}
	keys := []string{"description"}
	if s.Type == schemeOAuth2 {
		keys = append(keys, "authorization_code", "client_credentials", "device_code", "scope", "metadata_url")
	}
	if err := subdirectives(d, "security_scheme", []string{"scope"}, func(key string) error {
		var err error
		switch {
		case !slices.Contains(keys, key):
			return unknownSubdirective(d, "security_scheme "+s.Type, key, keys)
		case key == "description":
			s.Description, err = oneArg(d)
		case key == "metadata_url":
			s.MetadataURL, err = oneArg(d)
		case key == "scope":
			var a []string
			if a, err = argsNoBlock(d, 1, 2); err == nil {
				if _, dup := s.Scopes[a[0]]; dup {
					return d.Errf("scope %q declared twice", a[0])
				}
				if s.Scopes == nil {
					s.Scopes = map[string]string{}
				}
				s.Scopes[a[0]] = strings.Join(a[1:], "")
			}
		default:
			var f *OAuthFlow
			if f, err = unmarshalFlow(d, key); err == nil {
				switch key {
				case "authorization_code":
					s.AuthorizationCode = f
				case "client_credentials":
					s.ClientCredentials = f
				default:
					s.DeviceCode = f
				}
			}
		}
		return err
	}); err != nil {
		return err
	}
	if h.SecuritySchemes == nil {
		h.SecuritySchemes = map[string]*SecurityScheme{}
	}
	h.SecuritySchemes[name] = s
	return nil
}

// unmarshalFlow parses one OAuth 2 flow's block: the endpoints that flow
// has.
func unmarshalFlow(d *caddyfile.Dispenser, kind string) (*OAuthFlow, error) {
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	keys := map[string][]string{
		"authorization_code": {"authorization_url", "token_url", "refresh_url", "pkce_required"},
		"client_credentials": {"token_url", "refresh_url"},
		"device_code":        {"device_authorization_url", "token_url", "refresh_url"},
	}[kind]
	f := &OAuthFlow{}
	err := subdirectives(d, kind, nil, func(key string) error {
		var err error
		switch {
		case !slices.Contains(keys, key):
			return unknownSubdirective(d, kind, key, keys)
		case key == "pkce_required":
			_, err = argsNoBlock(d, 0, 0)
			f.PKCERequired = true
		case key == "authorization_url":
			f.AuthorizationURL, err = oneArg(d)
		case key == "token_url":
			f.TokenURL, err = oneArg(d)
		case key == "refresh_url":
			f.RefreshURL, err = oneArg(d)
		default:
			f.DeviceAuthorizationURL, err = oneArg(d)
		}
		return err
	})
	return f, err
}

// unmarshalSecurity parses `security <scheme> [<scope>...]` (one
// alternative of one scheme) and the block form, all of whose lines make
// one alternative together:
//
//	security {
//		<scheme> [<scope>...]
//		…
//	}
func (h *Handler) unmarshalSecurity(d *caddyfile.Dispenser) error {
	req := SecurityRequirement{}
	add := func(args []string) error {
		if _, dup := req[args[0]]; dup {
			return d.Errf("security: scheme %q named twice in one requirement", args[0])
		}
		req[args[0]] = append([]string{}, args[1:]...)
		return nil
	}
	if args := d.RemainingArgs(); len(args) > 0 {
		if d.NextBlock(d.Nesting()) {
			return d.Err("security takes a scheme or a block, not both")
		}
		if err := add(args); err != nil {
			return err
		}
	} else {
		for nesting := d.Nesting(); d.NextBlock(nesting); {
			if err := add(append([]string{d.Val()}, d.RemainingArgs()...)); err != nil {
				return err
			}
		}
		if len(req) == 0 {
			return d.Err("security: name a scheme, or schemes in a block")
		}
	}
	h.Security = append(h.Security, req)
	return nil
}

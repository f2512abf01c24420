package protocol

import (
	"strconv"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
)

// SchemeKind is the kind of a security scheme: the member of 1.0's
// SecurityScheme oneof, 0.3's "type".
type SchemeKind int

// The security scheme kinds of both versions.
const (
	SchemeHTTP SchemeKind = iota + 1
	SchemeAPIKey
	SchemeOAuth2
	SchemeOpenIDConnect
	SchemeMutualTLS
)

// SecurityScheme is one way a caller may authenticate, as the card
// declares it (OpenAPI 3.0's Security Scheme Object, which both versions
// follow in their own shapes).
type SecurityScheme struct {
	// Name is the key that requirements refer to.
	Name        string
	Kind        SchemeKind
	Description string
	// HTTPScheme is the RFC 9110 auth-scheme of an HTTP scheme ("Basic",
	// "Bearer"); BearerFormat hints at a bearer token's format ("JWT").
	HTTPScheme   string
	BearerFormat string
	// Location ("header", "query", "cookie") and ParamName place an API
	// key.
	Location  string
	ParamName string
	// OpenIDConnectURL is the discovery document of an OpenID Connect
	// scheme.
	OpenIDConnectURL string
	// OAuth2MetadataURL is an OAuth 2 scheme's RFC 8414 metadata; Flow is
	// its one flow (1.0 makes flows a oneof).
	OAuth2MetadataURL string
	Flow              *OAuthFlow
}

// FlowKind is the OAuth 2 flow of a scheme.
type FlowKind int

// The OAuth 2 flows: 1.0's non-deprecated ones (0.3 has no device code).
const (
	FlowAuthorizationCode FlowKind = iota + 1
	FlowClientCredentials
	FlowDeviceCode
)

// OAuthFlow is an OAuth 2 flow with the scopes it grants.
type OAuthFlow struct {
	Kind                   FlowKind
	AuthorizationURL       string
	TokenURL               string
	RefreshURL             string
	DeviceAuthorizationURL string
	// PKCERequired is 1.0's pkceRequired of the authorization code flow.
	PKCERequired bool
	Scopes       []Scope
}

// Scope is one OAuth 2 scope and what it grants.
type Scope struct {
	Name        string
	Description string
}

// SecurityRequirement is one alternative of the card's security: every
// scheme it names must be met.
type SecurityRequirement []RequiredScheme

// RequiredScheme names a declared scheme and the scopes it must carry.
type RequiredScheme struct {
	Scheme string
	Scopes []string
}

// appendSecurity writes the card's securitySchemes and its requirements:
// 1.0's securityRequirements in strict ProtoJSON ({"schemes":{name:
// {"list":[…]}}}, the proto's map<string,StringList>, which is what
// protojson readers — the gRPC binding's own, a2a-python's, a2a-js's —
// parse), 0.3's security ([{name:[…]}]), the hybrid both, and each
// scheme in the shape of each version written (the hybrid's entries
// carry 0.3's flat members and 1.0's wrapper together).
func appendSecurity(dst []byte, c *AgentCard, with10, with03 bool) []byte {
	if len(c.SecuritySchemes) > 0 {
		dst = append(dst, `,"securitySchemes":{`...)
		for i := range c.SecuritySchemes {
			if i > 0 {
				dst = append(dst, ',')
			}
			s := &c.SecuritySchemes[i]
			dst = jsonwire.AppendString(dst, s.Name)
			dst = append(dst, ':', '{')
			if with03 {
				dst = appendScheme03(dst, s)
				if with10 {
					dst = append(dst, ',')
				}
			}
			if with10 {
				dst = appendScheme10(dst, s)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, '}')
	}
	if len(c.Security) == 0 {
		return dst
	}
	if with10 {
		dst = append(dst, `,"securityRequirements":[`...)
		for i, req := range c.Security {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"schemes":{`...)
			for j, rs := range req {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = jsonwire.AppendString(dst, rs.Scheme)
				// ProtoJSON leaves an empty list out: {} is the
				// canonical form of no scopes.
				if len(rs.Scopes) == 0 {
					dst = append(dst, `:{}`...)
					continue
				}
				dst = append(dst, `:{"list":`...)
				dst = jsonwire.AppendStringArray(dst, rs.Scopes)
				dst = append(dst, '}')
			}
			dst = append(dst, `}}`...)
		}
		dst = append(dst, ']')
	}
	if with03 {
		dst = append(dst, `,"security":[`...)
		for i, req := range c.Security {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '{')
			for j, rs := range req {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = jsonwire.AppendString(dst, rs.Scheme)
				dst = append(dst, ':')
				dst = jsonwire.AppendStringArray(dst, rs.Scopes)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return dst
}

// appendScheme03 writes the members of 0.3's scheme object (OpenAPI's,
// discriminated by type), without the braces.
func appendScheme03(dst []byte, s *SecurityScheme) []byte {
	switch s.Kind {
	case SchemeHTTP:
		dst = append(dst, `"type":"http"`...)
	case SchemeAPIKey:
		dst = append(dst, `"type":"apiKey"`...)
	case SchemeOAuth2:
		dst = append(dst, `"type":"oauth2"`...)
	case SchemeOpenIDConnect:
		dst = append(dst, `"type":"openIdConnect"`...)
	default:
		dst = append(dst, `"type":"mutualTLS"`...)
	}
	return appendSchemeMembers(dst, s, false)
}

// appendSchemeMembers writes the scheme's members, each after a comma:
// the same in both versions but for the API key's place (0.3's OpenAPI
// "in", 1.0's "location") and the flows' shape (appendFlow).
func appendSchemeMembers(dst []byte, s *SecurityScheme, v10 bool) []byte {
	dst = appendOptString(dst, `,"description":`, s.Description)
	switch s.Kind {
	case SchemeHTTP:
		dst = append(dst, `,"scheme":`...)
		dst = jsonwire.AppendString(dst, s.HTTPScheme)
		dst = appendOptString(dst, `,"bearerFormat":`, s.BearerFormat)
	case SchemeAPIKey:
		if v10 {
			dst = append(dst, `,"location":`...)
		} else {
			dst = append(dst, `,"in":`...)
		}
		dst = jsonwire.AppendString(dst, s.Location)
		dst = append(dst, `,"name":`...)
		dst = jsonwire.AppendString(dst, s.ParamName)
	case SchemeOAuth2:
		dst = append(dst, `,"flows":{`...)
		if s.Flow != nil {
			dst = appendFlow(dst, s.Flow, v10)
		}
		dst = append(dst, '}')
		dst = appendOptString(dst, `,"oauth2MetadataUrl":`, s.OAuth2MetadataURL)
	case SchemeOpenIDConnect:
		dst = append(dst, `,"openIdConnectUrl":`...)
		dst = jsonwire.AppendString(dst, s.OpenIDConnectURL)
	}
	return dst
}

// appendScheme10 writes 1.0's oneof member of the scheme (one wrapper
// key), without the enclosing braces.
func appendScheme10(dst []byte, s *SecurityScheme) []byte {
	switch s.Kind {
	case SchemeHTTP:
		dst = append(dst, `"httpAuthSecurityScheme":{`...)
	case SchemeAPIKey:
		dst = append(dst, `"apiKeySecurityScheme":{`...)
	case SchemeOAuth2:
		dst = append(dst, `"oauth2SecurityScheme":{`...)
	case SchemeOpenIDConnect:
		dst = append(dst, `"openIdConnectSecurityScheme":{`...)
	default:
		dst = append(dst, `"mtlsSecurityScheme":{`...)
	}
	// Every member but the first starts with a comma; the description,
	// optional, may be that first one.
	n := len(dst)
	dst = appendSchemeMembers(dst, s, true)
	if len(dst) > n {
		dst = append(dst[:n], dst[n+1:]...) // the first member's comma
	}
	return append(dst, '}')
}

// appendFlow writes the flow's member of a flows object; 1.0 adds
// pkceRequired (0.3 has no such member).
func appendFlow(dst []byte, f *OAuthFlow, v10 bool) []byte {
	switch f.Kind {
	case FlowAuthorizationCode:
		dst = append(dst, `"authorizationCode":{"authorizationUrl":`...)
		dst = jsonwire.AppendString(dst, f.AuthorizationURL)
		dst = append(dst, `,"tokenUrl":`...)
	case FlowClientCredentials:
		dst = append(dst, `"clientCredentials":{"tokenUrl":`...)
	default:
		dst = append(dst, `"deviceCode":{"deviceAuthorizationUrl":`...)
		dst = jsonwire.AppendString(dst, f.DeviceAuthorizationURL)
		dst = append(dst, `,"tokenUrl":`...)
	}
	dst = jsonwire.AppendString(dst, f.TokenURL)
	dst = appendOptString(dst, `,"refreshUrl":`, f.RefreshURL)
	dst = append(dst, `,"scopes":{`...)
	for i, sc := range f.Scopes {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonwire.AppendString(dst, sc.Name)
		dst = append(dst, ':')
		dst = jsonwire.AppendString(dst, sc.Description)
	}
	dst = append(dst, '}')
	if v10 && f.PKCERequired {
		dst = append(dst, `,"pkceRequired":true`...)
	}
	return append(dst, '}')
}

// securityViolations checks the card's schemes and requirements: unique
// names; what each kind needs (an HTTP auth-scheme, an API key's
// location and name, an OpenID Connect URL, an OAuth 2 flow with its
// URLs and no scope twice); requirements naming declared schemes only,
// with scopes only where scopes mean something (OAuth 2 and OpenID
// Connect, as OpenAPI 3.0 says) and, for OAuth 2, scopes its flow
// declares. Fields are the 1.0 card's.
func securityViolations(c *AgentCard, bad func(field, format string, args ...any)) {
	schemes := make(map[string]*SecurityScheme, len(c.SecuritySchemes))
	for i := range c.SecuritySchemes {
		s := &c.SecuritySchemes[i]
		f := "securitySchemes." + s.Name
		if s.Name == "" {
			bad("securitySchemes", "a scheme needs a name")
			continue
		}
		if schemes[s.Name] != nil {
			bad(f, "is declared twice")
			continue
		}
		schemes[s.Name] = s
		url := func(field, v string) {
			if err := checkHTTPURL(v); err != nil {
				bad(f+"."+field, "%v", err)
			}
		}
		switch s.Kind {
		case SchemeHTTP:
			if !isToken(s.HTTPScheme) {
				bad(f+".scheme", "%q is not an HTTP auth-scheme", s.HTTPScheme)
			}
		case SchemeAPIKey:
			if s.Location != "header" && s.Location != "query" && s.Location != "cookie" {
				bad(f+".location", "%q is not header, query or cookie", s.Location)
			}
			if !isToken(s.ParamName) {
				bad(f+".name", "%q is not a header, query or cookie name", s.ParamName)
			}
		case SchemeOpenIDConnect:
			url("openIdConnectUrl", s.OpenIDConnectURL)
		case SchemeOAuth2:
			if s.OAuth2MetadataURL != "" {
				url("oauth2MetadataUrl", s.OAuth2MetadataURL)
			}
			fl := s.Flow
			if fl == nil {
				bad(f+".flows", "one flow is required (authorization code, client credentials or device code)")
				continue
			}
			if fl.Kind == FlowAuthorizationCode {
				url("flows.authorizationUrl", fl.AuthorizationURL)
			}
			if fl.Kind == FlowDeviceCode {
				url("flows.deviceAuthorizationUrl", fl.DeviceAuthorizationURL)
			}
			url("flows.tokenUrl", fl.TokenURL)
			if fl.RefreshURL != "" {
				url("flows.refreshUrl", fl.RefreshURL)
			}
			seen := map[string]bool{}
			for _, sc := range fl.Scopes {
				if sc.Name == "" || seen[sc.Name] {
					bad(f+".flows.scopes", "%q is empty or declared twice", sc.Name)
				}
				seen[sc.Name] = true
			}
		case SchemeMutualTLS:
		default:
			bad(f, "has no kind")
		}
	}
	for i, req := range c.Security {
		f := "securityRequirements[" + strconv.Itoa(i) + "]"
		if len(req) == 0 {
			bad(f, "names no scheme")
		}
		named := map[string]bool{}
		for _, rs := range req {
			s := schemes[rs.Scheme]
			switch {
			case s == nil:
				bad(f, "scheme %q is not declared", rs.Scheme)
				continue
			case named[rs.Scheme]:
				bad(f, "names scheme %q twice", rs.Scheme)
			}
			named[rs.Scheme] = true
			if len(rs.Scopes) > 0 && s.Kind != SchemeOAuth2 && s.Kind != SchemeOpenIDConnect {
				bad(f+".schemes."+rs.Scheme, "scopes are for oauth2 and openid schemes only")
				continue
			}
			for _, sc := range rs.Scopes {
				if sc == "" {
					bad(f+".schemes."+rs.Scheme, "a scope is empty")
				} else if s.Kind == SchemeOAuth2 && s.Flow != nil && !hasScope(s.Flow.Scopes, sc) {
					bad(f+".schemes."+rs.Scheme, "scope %q is not declared by the scheme", sc)
				}
			}
		}
	}
}

func hasScope(list []Scope, name string) bool {
	for _, s := range list {
		if s.Name == name {
			return true
		}
	}
	return false
}

// isToken reports whether s is an RFC 9110 token: what an auth-scheme, a
// header name and (conservatively) a query or cookie name is.
func isToken(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return !isTokenChar(r) }) < 0
}

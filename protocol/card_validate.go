package protocol

import (
	"errors"
	"fmt"
	"mime"
	"net/url"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
)

// ValidateCard checks what a card must hold before it is served: name,
// description and version; at least one skill, each with an id (unique),
// name, description and at least one non-empty tag; absolute http(s) URLs
// without user info for the provider, documentation, icon and every
// interface; a known version and binding on every interface; media types
// in every mode list; a URI on every extension and object params; the
// security schemes and requirements (securityViolations). It
// returns every problem found, joined. Interfaces may be empty (the
// handler fills them per request from the RPC URL), and so may the default
// modes, which the caller defaults.
func ValidateCard(c *AgentCard) error {
	if c == nil {
		return errors.New("card: missing")
	}
	var errs []error
	for _, v := range cardViolations(c, true) {
		errs = append(errs, errors.New("card: "+v.Field+": "+v.Description))
	}
	return errors.Join(errs...)
}

// cardViolations lists what ValidateCard reports, one violation per
// problem, named by the card's JSON field. withInterfaces leaves the
// interfaces out when false: a card read from an agent names them by its
// own version's members, and ParseCard checks them there.
func cardViolations(c *AgentCard, withInterfaces bool) []FieldViolation {
	var vs []FieldViolation
	bad := func(field, format string, args ...any) {
		vs = append(vs, FieldViolation{Field: field, Description: fmt.Sprintf(format, args...)})
	}
	required := func(field, v string) {
		if strings.TrimSpace(v) == "" {
			bad(field, "is required")
		}
	}
	checkURL := func(field, v string) {
		if err := checkHTTPURL(v); err != nil {
			bad(field, "%v", err)
		}
	}
	checkModes := func(field string, modes []string) {
		for i, m := range modes {
			if !isMediaType(m) {
				bad(fmt.Sprintf("%s[%d]", field, i), "%q is not a media type", m)
			}
		}
	}

	required("name", c.Name)
	required("description", c.Description)
	required("version", c.Version)
	if p := c.Provider; p != nil {
		required("provider.organization", p.Organization)
		checkURL("provider.url", p.URL)
	}
	if c.DocumentationURL != "" {
		checkURL("documentationUrl", c.DocumentationURL)
	}
	if c.IconURL != "" {
		checkURL("iconUrl", c.IconURL)
	}
	ifs := c.Interfaces
	if !withInterfaces {
		ifs = nil
	}
	for i, in := range ifs {
		f := fmt.Sprintf("interfaces[%d]", i)
		checkURL(f+".url", in.URL)
		if in.Version != V03 && in.Version != V10 {
			bad(f+".version", "must be 0.3 or 1.0")
		}
		if !knownBinding(in.Binding) {
			bad(f+".binding", "%q is not JSONRPC, GRPC, HTTP+JSON or an absolute URI", in.Binding)
		}
	}
	for i, x := range c.Extensions {
		f := fmt.Sprintf("extensions[%d]", i)
		required(f+".uri", x.URI)
		if len(x.Params) > 0 && !jsonwire.IsObject(x.Params) {
			bad(f+".params", "must be a JSON object")
		}
	}
	checkModes("defaultInputModes", c.DefaultInputModes)
	checkModes("defaultOutputModes", c.DefaultOutputModes)
	if len(c.Skills) == 0 {
		bad("skills", "at least one skill is required")
	}
	seen := make(map[string]bool, len(c.Skills))
	for i, s := range c.Skills {
		f := fmt.Sprintf("skills[%d]", i)
		required(f+".id", s.ID)
		if s.ID != "" && seen[s.ID] {
			bad(f+".id", "%q is used by another skill", s.ID)
		}
		seen[s.ID] = true
		required(f+".name", s.Name)
		required(f+".description", s.Description)
		if len(s.Tags) == 0 {
			bad(f+".tags", "at least one tag is required")
		}
		for j, t := range s.Tags {
			required(fmt.Sprintf("%s.tags[%d]", f, j), t)
		}
		checkModes(f+".inputModes", s.InputModes)
		checkModes(f+".outputModes", s.OutputModes)
	}
	securityViolations(c, bad)
	return vs
}

// checkHTTPURL accepts an absolute http or https URL with a host and no
// user info (credentials in a published card would leak).
func checkHTTPURL(s string) error {
	if s == "" {
		return errors.New("is required")
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q is not a URL", s)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q must be an absolute http or https URL", s)
	}
	if u.Host == "" {
		return fmt.Errorf("%q has no host", s)
	}
	if u.User != nil {
		return fmt.Errorf("%q must not hold user info", s)
	}
	return nil
}

// knownBinding accepts the core bindings ("" reads as JSONRPC) and, for
// custom bindings, an absolute URI as 1.0.1 recommends.
func knownBinding(b string) bool {
	switch b {
	case "", bindingJSONRPC, "GRPC", "HTTP+JSON":
		return true
	}
	u, err := url.Parse(b)
	return err == nil && u.Scheme != "" && u.Opaque+u.Host+u.Path != ""
}

// isMediaType accepts type/subtype with optional parameters ("text/plain",
// "image/*", "application/json; charset=utf-8").
func isMediaType(s string) bool {
	mt, _, err := mime.ParseMediaType(s)
	if err != nil {
		return false
	}
	typ, sub, ok := strings.Cut(mt, "/")
	return ok && typ != "" && sub != ""
}

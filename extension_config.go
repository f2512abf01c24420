package caddya2a

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// Extension is an A2A extension the agent supports. It is declared in the
// Agent Card; a client activates it with the A2A-Extensions (1.0) or
// X-A2A-Extensions (0.3) request header, the activated URIs are echoed in
// the answer under the same header and passed to the agent as
// "extensions". What an extension means is the agent's business: the
// module only negotiates it.
type Extension struct {
	// URI identifies the extension. Required; no commas or white space
	// (the headers are comma-separated lists).
	URI string `json:"uri,omitempty"`
	// Description says how the agent uses it (card field).
	Description string `json:"description,omitempty"`
	// Required refuses every request that does not activate it with
	// -32008 (the card itself stays public).
	Required bool `json:"required,omitempty"`
	// Params is the extension's configuration as a JSON object (card
	// field).
	Params json.RawMessage `json:"params,omitempty"`
}

// checkExtensions refuses what no client could activate and repeated URIs.
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

// protocolExtensions is the neutral form, for the card and the endpoint.
func protocolExtensions(list []Extension) []protocol.Extension {
	if len(list) == 0 {
		return nil
	}
	out := make([]protocol.Extension, len(list))
	for i, x := range list {
		out[i] = protocol.Extension{URI: x.URI, Description: x.Description, Required: x.Required, Params: x.Params}
	}
	return out
}

func isJSONObject(b []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m != nil
}

// unmarshalExtension parses `extension <uri> [{ required; description
// <text>; params <json object> }]`.
func (h *Handler) unmarshalExtension(d *caddyfile.Dispenser) error {
	if !d.NextArg() {
		return d.ArgErr()
	}
	x := Extension{URI: d.Val()}
	if d.NextArg() {
		return d.ArgErr()
	}
	if err := checkExtensions(append(append([]Extension(nil), h.Extensions...), x)); err != nil {
		return d.Err(err.Error())
	}
	seen := map[string]int{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		key := d.Val()
		if line, dup := seen[key]; dup {
			return d.Errf("duplicate extension subdirective %q (first at line %d)", key, line)
		}
		seen[key] = d.Line()
		switch key {
		case "required":
			if _, err := argsNoBlock(d, 0, 0); err != nil {
				return err
			}
			x.Required = true
		case "description":
			v, err := oneArg(d)
			if err != nil {
				return err
			}
			x.Description = v
		case "params":
			v, err := oneArg(d)
			if err != nil {
				return err
			}
			if !isJSONObject([]byte(v)) {
				return d.Errf("params: want a JSON object (quote it with backticks), got %q", v)
			}
			x.Params = json.RawMessage(v)
		default:
			return d.Errf("unknown extension subdirective %q", key)
		}
	}
	h.Extensions = append(h.Extensions, x)
	return nil
}

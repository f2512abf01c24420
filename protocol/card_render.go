package protocol

import "github.com/caddy-a2a/caddy-a2a/internal/jsonwire"

// protocolVersionV03 is the card-level protocolVersion a 0.3 card states.
const protocolVersionV03 = "0.3.0"

// bindingJSONRPC is the JSON-RPC protocol binding, the default of an
// Interface with no Binding.
const bindingJSONRPC = "JSONRPC"

// RenderCard renders c as the JSON document of variant v:
//
//   - CardV10: the 1.0 ProtoJSON card. supportedInterfaces lists every
//     interface (0.3 ones included, each with its protocolVersion);
//     capabilities are {streaming, pushNotifications, extensions?,
//     extendedAgentCard}.
//   - CardV03: the 0.3 card: protocolVersion "0.3.0", url and
//     preferredTransport from the first 0.3 interface, additionalInterfaces
//     listing every 0.3 interface (the preferred one too, as 0.3 asks for
//     completeness) when there is more than one, capabilities {streaming,
//     pushNotifications, stateTransitionHistory:false, extensions?} and
//     supportsAuthenticatedExtendedCard. With no 0.3 interface it falls back
//     to all interfaces, so the required url is never empty when there is
//     any interface at all.
//   - CardHybrid: the 1.0 document plus the 0.3 members protocolVersion,
//     url, preferredTransport, additionalInterfaces and
//     supportsAuthenticatedExtendedCard, derived from the 0.3 interfaces
//     only; a card with no 0.3 interface renders exactly as CardV10.
//
// Member order is fixed, so the same card always gives the same bytes and
// an ETag computed over them is stable. Empty optional members are left
// out; required ones (modes, skills, tags) are always written.
func RenderCard(c *AgentCard, v CardVariant) []byte {
	return appendCard(make([]byte, 0, 1024), c, v)
}

// appendCard is RenderCard appending to dst.
func appendCard(dst []byte, c *AgentCard, v CardVariant) []byte {
	var v03ifs []Interface
	for _, in := range c.Interfaces {
		if in.Version == V03 {
			v03ifs = append(v03ifs, in)
		}
	}
	if v == CardV03 && len(v03ifs) == 0 {
		v03ifs = c.Interfaces
	}
	with10 := v != CardV03
	with03 := v == CardV03 || (v == CardHybrid && len(v03ifs) > 0)

	dst = append(dst, `{"name":`...)
	dst = jsonwire.AppendString(dst, c.Name)
	dst = append(dst, `,"description":`...)
	dst = jsonwire.AppendString(dst, c.Description)
	if with10 {
		dst = append(dst, `,"supportedInterfaces":[`...)
		for i, in := range c.Interfaces {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"url":`...)
			dst = jsonwire.AppendString(dst, in.URL)
			dst = append(dst, `,"protocolBinding":`...)
			dst = jsonwire.AppendString(dst, bindingOf(in))
			dst = append(dst, `,"protocolVersion":`...)
			dst = jsonwire.AppendString(dst, in.Version.String())
			dst = appendOptString(dst, `,"tenant":`, in.Tenant)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if with03 {
		dst = append(dst, `,"protocolVersion":"`+protocolVersionV03+`","url":`...)
		var pref Interface
		if len(v03ifs) > 0 {
			pref = v03ifs[0]
		}
		dst = jsonwire.AppendString(dst, pref.URL)
		dst = append(dst, `,"preferredTransport":`...)
		dst = jsonwire.AppendString(dst, bindingOf(pref))
		if len(v03ifs) > 1 {
			dst = append(dst, `,"additionalInterfaces":[`...)
			for i, in := range v03ifs {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, `{"url":`...)
				dst = jsonwire.AppendString(dst, in.URL)
				dst = append(dst, `,"transport":`...)
				dst = jsonwire.AppendString(dst, bindingOf(in))
				dst = append(dst, '}')
			}
			dst = append(dst, ']')
		}
	}
	if p := c.Provider; p != nil {
		dst = append(dst, `,"provider":{"organization":`...)
		dst = jsonwire.AppendString(dst, p.Organization)
		dst = append(dst, `,"url":`...)
		dst = jsonwire.AppendString(dst, p.URL)
		dst = append(dst, '}')
	}
	dst = append(dst, `,"version":`...)
	dst = jsonwire.AppendString(dst, c.Version)
	dst = appendOptString(dst, `,"documentationUrl":`, c.DocumentationURL)

	dst = append(dst, `,"capabilities":{"streaming":`...)
	dst = appendBool(dst, c.Streaming)
	dst = append(dst, `,"pushNotifications":`...)
	dst = appendBool(dst, c.PushNotifications)
	if !with10 {
		// 0.3 only; this server keeps no state transition history.
		dst = append(dst, `,"stateTransitionHistory":false`...)
	}
	if len(c.Extensions) > 0 {
		dst = append(dst, `,"extensions":[`...)
		for i := range c.Extensions {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendExtension(dst, &c.Extensions[i])
		}
		dst = append(dst, ']')
	}
	if with10 {
		dst = append(dst, `,"extendedAgentCard":`...)
		dst = appendBool(dst, c.ExtendedCard)
	}
	dst = append(dst, '}')
	dst = appendSecurity(dst, c, with10, with03)

	dst = append(dst, `,"defaultInputModes":`...)
	dst = jsonwire.AppendStringArray(dst, c.DefaultInputModes)
	dst = append(dst, `,"defaultOutputModes":`...)
	dst = jsonwire.AppendStringArray(dst, c.DefaultOutputModes)
	dst = append(dst, `,"skills":[`...)
	for i := range c.Skills {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendSkill(dst, &c.Skills[i])
	}
	dst = append(dst, ']')
	if with03 {
		dst = append(dst, `,"supportsAuthenticatedExtendedCard":`...)
		dst = appendBool(dst, c.ExtendedCard)
	}
	dst = appendOptString(dst, `,"iconUrl":`, c.IconURL)
	return append(dst, '}')
}

func bindingOf(in Interface) string {
	if in.Binding == "" {
		return bindingJSONRPC
	}
	return in.Binding
}

func appendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

func appendExtension(dst []byte, x *Extension) []byte {
	dst = append(dst, `{"uri":`...)
	dst = jsonwire.AppendString(dst, x.URI)
	dst = appendOptString(dst, `,"description":`, x.Description)
	if x.Required {
		dst = append(dst, `,"required":true`...)
	}
	dst = appendOptRaw(dst, `,"params":`, x.Params)
	return append(dst, '}')
}

func appendSkill(dst []byte, s *Skill) []byte {
	dst = append(dst, `{"id":`...)
	dst = jsonwire.AppendString(dst, s.ID)
	dst = append(dst, `,"name":`...)
	dst = jsonwire.AppendString(dst, s.Name)
	dst = append(dst, `,"description":`...)
	dst = jsonwire.AppendString(dst, s.Description)
	dst = append(dst, `,"tags":`...)
	dst = jsonwire.AppendStringArray(dst, s.Tags)
	dst = appendOptStrings(dst, `,"examples":`, s.Examples)
	dst = appendOptStrings(dst, `,"inputModes":`, s.InputModes)
	dst = appendOptStrings(dst, `,"outputModes":`, s.OutputModes)
	return append(dst, '}')
}

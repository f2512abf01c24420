package cli

import (
	"bytes"
	"encoding/json"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
)

// bareScopes is a card document as a2a-go v2's card parser can read it.
// A2A 1.0's securityRequirements are ProtoJSON of the proto's
// map<string,StringList>: each scheme's scopes an object,
// {"list":[…]}, or {} for none. a2a-go reads them as a bare array
// (a2a-go#430) and refuses the whole card, so the card this module
// itself renders for a gated mount could not be used by its own
// commands. Each such object, on the card and on each skill, becomes
// its list; anything else is left as it is, for a2a-go to read or
// refuse, so a malformed requirement is still reported. The document
// the user sees and the one protocol.ParseCard checks stay the bytes
// the server sent: only a2a-go is given this one.
func bareScopes(raw []byte) []byte {
	if !bytes.Contains(raw, []byte(`"securityRequirements"`)) {
		return raw
	}
	var doc map[string]json.RawMessage
	if json.Unmarshal(raw, &doc) != nil {
		return raw
	}
	changed := false
	if r, ok := bareRequirements(doc["securityRequirements"]); ok {
		doc["securityRequirements"], changed = r, true
	}
	var skills []map[string]json.RawMessage
	if s, ok := doc["skills"]; ok && json.Unmarshal(s, &skills) == nil {
		skillsChanged := false
		for _, sk := range skills {
			if r, ok := bareRequirements(sk["securityRequirements"]); ok {
				sk["securityRequirements"], skillsChanged = r, true
			}
		}
		if skillsChanged {
			doc["skills"], _ = json.Marshal(skills)
			changed = true
		}
	}
	if !changed {
		return raw
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return raw
	}
	return out
}

// bareRequirements rewrites one securityRequirements list, reporting
// whether anything in it was the ProtoJSON object form.
func bareRequirements(raw json.RawMessage) (json.RawMessage, bool) {
	var reqs []map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &reqs) != nil {
		return raw, false
	}
	changed := false
	for _, req := range reqs {
		var schemes map[string]json.RawMessage
		if json.Unmarshal(req["schemes"], &schemes) != nil {
			continue
		}
		reqChanged := false
		for name, scopes := range schemes {
			var list struct {
				List []string `json:"list"`
			}
			if !jsonwire.IsObject(scopes) || json.Unmarshal(scopes, &list) != nil {
				continue
			}
			if list.List == nil {
				list.List = []string{}
			}
			schemes[name], _ = json.Marshal(list.List)
			reqChanged = true
		}
		if reqChanged {
			req["schemes"], _ = json.Marshal(schemes)
			changed = true
		}
	}
	if !changed {
		return raw, false
	}
	out, err := json.Marshal(reqs)
	if err != nil {
		return raw, false
	}
	return out, true
}

package caddya2a

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/dustin/go-humanize"
)

// The Caddyfile parser turns tokens into the JSON config and names the
// line of what it cannot read (an unknown or repeated subdirective, a
// wrong number of arguments, a number, size or duration it cannot read,
// a 0 that the JSON config would take for "unset"). Whether a value is
// allowed is the check Validate runs for a JSON config: each block's
// parser runs that same check on what it read (defaults applied) and
// wraps its message with the block's line, so both kinds of config get
// one message, the Caddyfile's with its file and line.

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	a2a [<matcher>] {
//		upstream [<kind>] <url> { <the kind's settings> }
//		spec_version      0.3 1.0
//		card_path         /.well-known/agent-card.json
//		rpc_path          /a2a
//		rest_path         <path>      (off unless set)
//		grpc              on|off      (default off)
//		url               <public rpc url>
//		name              <text>
//		description       <text>
//		version           <text>
//		provider          <organization> <url>
//		documentation_url <url>
//		icon_url          <url>
//		input_modes       <media types...>
//		output_modes      <media types...>
//		skill <id> {
//			name         <text>
//			description  <text>
//			tags         <tag...>
//			examples     <text...>
//			input_modes  <media types...>
//			output_modes <media types...>
//		}
//		owner             {http.auth.user.id}
//		store <type> { <the store's settings> }
//		max_request_body  4MiB
//		limits {
//			max_parts         64
//			max_text_size     1MiB
//			max_file_size     4MiB
//			max_metadata_size 64KiB
//			max_json_depth    32
//			max_history       100
//			max_history_size  8MiB
//			max_task_output   16MiB
//			max_run_events    10000
//			max_artifacts     256
//			max_tasks_per_owner 1000
//			max_runs_per_owner  32
//			dedupe_window       <duration>|off
//		}
//		extension <uri> {
//			required
//			description <text>
//			params      <json object>
//		}
//		reply             task|message
//		streaming         on|off
//		heartbeat         <duration>
//		card_max_age      <duration>
//		cors {
//			origins     <origin...>|*
//			credentials on|off
//			max_age     <duration>
//		}
//		push { … }                     (see unmarshalPush)
//		security_scheme <name> <type> … (see unmarshalSecurityScheme)
//		security <scheme> [<scope>...]  (or a block: see unmarshalSecurity)
//		extended_card { … }             (see unmarshalExtendedCard)
//		sign_card <key-file> { kid <id>; jku <url> }
//	}
//
// The upstream is a module of the namespace a2a.upstreams (`upstream
// <url>` is `upstream http <url>`, see HTTPUpstream), the store one of
// a2a.stores (see MemoryStore); each parses its own block. Every
// subdirective but skill, extension, security_scheme and security (one
// per id, uri or name; one per alternative) may appear
// once; an unknown or repeated one is an error naming its line (with the
// known subdirective it is one typo away from, if any). A value the
// settings' checks refuse is an error naming the line of its block.
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	// Where the block's errors are reported.
	block := *d
	if d.NextArg() {
		return d.Errf("a2a takes no arguments, only a block (got %q)", d.Val())
	}
	if err := subdirectives(d, "", []string{"skill", "extension", "security_scheme", "security"}, func(key string) error {
		return h.unmarshalKey(d, key)
	}); err != nil {
		return err
	}
	// Validate's check, run here too so that the message names the line.
	if err := h.checkParsed(); err != nil {
		return block.WrapErr(err)
	}
	return nil
}

// The subdirectives of each block, in the order of their cases below: the
// ones a typo is compared with.
var (
	a2aKeys = []string{"upstream", "spec_version", "card_path", "rpc_path", "rest_path", "grpc", "url", "name", "description", "version",
		"provider", "documentation_url", "icon_url", "input_modes", "output_modes", "skill", "owner", "store",
		"limits", "extension", "cors", "push", "security_scheme", "security", "extended_card", "sign_card", "max_request_body", "streaming", "reply", "heartbeat", "card_max_age", "inspector"}
	skillKeys     = []string{"name", "description", "tags", "examples", "input_modes", "output_modes"}
	extensionKeys = []string{"required", "description", "params"}
	corsKeys      = []string{"origins", "credentials", "max_age"}
	storeKeys     = []string{"max_tasks", "max_bytes", "ttl", "idle_ttl", "share"}
	upstreamKeys  = []string{"timeout", "header_up", "max_response_header", "transport"}
)

// unmarshalKey parses one subdirective of the a2a block.
func (h *Handler) unmarshalKey(d *caddyfile.Dispenser, key string) error {
	var err error
	switch key {
	case "upstream":
		h.UpstreamRaw, err = unmarshalGuest(d, "a2a.upstreams", "kind", "http", isUpstream)
	case "spec_version":
		var args []string
		args, err = argsNoBlock(d, 1, 2)
		h.SpecVersion = append(h.SpecVersion, args...)
	case "card_path":
		h.CardPath, err = oneArg(d)
	case "rpc_path":
		h.RPCPath, err = oneArg(d)
	case "rest_path":
		h.RESTPath, err = oneArg(d)
	case "grpc":
		h.GRPC, err = onOffArg(d)
	case "url":
		h.URL, err = oneArg(d)
	case "name":
		h.Name, err = oneArg(d)
	case "description":
		h.Description, err = oneArg(d)
	case "version":
		h.Version, err = oneArg(d)
	case "provider":
		var args []string
		if args, err = argsNoBlock(d, 2, 2); err == nil {
			h.Provider = &Provider{Organization: args[0], URL: args[1]}
		}
	case "documentation_url":
		h.DocumentationURL, err = oneArg(d)
	case "icon_url":
		h.IconURL, err = oneArg(d)
	case "input_modes":
		h.InputModes, err = argsNoBlock(d, 1, -1)
	case "output_modes":
		h.OutputModes, err = argsNoBlock(d, 1, -1)
	case "skill":
		return h.unmarshalSkill(d)
	case "owner":
		h.Owner, err = oneArg(d)
	case "store":
		h.StoreRaw, err = unmarshalGuest(d, "a2a.stores", "type", "", isStore)
	case "limits":
		return h.unmarshalLimits(d)
	case "extension":
		return h.unmarshalExtension(d)
	case "cors":
		return h.unmarshalCORS(d)
	case "inspector":
		var args []string
		if args, err = argsNoBlock(d, 0, 1); err == nil {
			h.Inspector = &Inspector{}
			if len(args) == 1 {
				h.Inspector.Path = args[0]
			}
		}
	case "security_scheme":
		return h.unmarshalSecurityScheme(d)
	case "security":
		return h.unmarshalSecurity(d)
	case "extended_card":
		return h.unmarshalExtendedCard(d)
	case "sign_card":
		return h.unmarshalSignCard(d)
	case "push":
		return h.unmarshalPush(d)
	case "max_request_body":
		h.MaxRequestBody, err = sizeArg(d, "e.g. 4MiB")
	case "streaming":
		var on bool
		if on, err = onOffArg(d); err == nil {
			h.Streaming = &on
		}
	case "reply":
		h.Reply, err = oneArg(d)
	case "heartbeat":
		h.Heartbeat, err = durationArg(d)
	case "card_max_age":
		h.CardMaxAge, err = durationArg(d)
	default:
		return unknownSubdirective(d, "", key, a2aKeys)
	}
	return err
}

func isUpstream(m caddyfile.Unmarshaler) bool { _, ok := m.(UpstreamModule); return ok }
func isStore(m caddyfile.Unmarshaler) bool    { _, ok := m.(StoreModule); return ok }

// unmarshalGuest parses `<directive> <name> <args…> { … }` with the
// Caddyfile unmarshaler of the guest module <namespace>.<name>, into its
// JSON with the name under inlineKey. With a default name def, a first
// argument that names no module of the namespace is the default's own
// first argument: `<directive> <args…> { … }`. isFamily tells a module
// of the family the handler loads from the namespace.
func unmarshalGuest(d *caddyfile.Dispenser, namespace, inlineKey, def string,
	isFamily func(caddyfile.Unmarshaler) bool) (json.RawMessage, error) {
	directive := d.Val()
	if !d.NextArg() {
		return nil, d.ArgErr()
	}
	name := d.Val()
	if _, err := caddy.GetModule(namespace + "." + name); err != nil {
		// A URL or a placeholder is the default's argument, however the
		// line goes on; another word is a misspelt or missing module.
		if def == "" || (moreArgs(d) && !strings.ContainsAny(name, ":/{")) {
			return nil, d.Errf("%s: unknown %s %q (available: %s)", directive, inlineKey, name, moduleNames(namespace))
		}
		// The default module reads its first argument after the
		// directive, as it would after its own name.
		name = def
		d.Prev()
	}
	unm, err := caddyfile.UnmarshalModule(d, namespace+"."+name)
	if err != nil {
		return nil, err
	}
	if !isFamily(unm) {
		return nil, d.Errf("%s: module %s.%s (%T) is not an a2a %s module", directive, namespace, name, unm, directive)
	}
	return caddyconfig.JSONModuleObject(unm, inlineKey, name, nil), nil
}

// moreArgs reports whether another argument follows on the line, leaving
// the cursor where it was.
func moreArgs(d *caddyfile.Dispenser) bool {
	if !d.NextArg() {
		return false
	}
	d.Prev()
	return true
}

// moduleNames lists the names of the modules registered in namespace.
func moduleNames(namespace string) string {
	var names []string
	for _, m := range caddy.GetModules(namespace) {
		names = append(names, m.ID.Name())
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// unmarshalSkill parses `skill <id> { … }`.
func (h *Handler) unmarshalSkill(d *caddyfile.Dispenser) error {
	if !d.NextArg() {
		return d.ArgErr()
	}
	s := Skill{ID: d.Val()}
	if d.NextArg() {
		return d.ArgErr()
	}
	if err := subdirectives(d, "skill", nil, func(key string) error {
		var err error
		switch key {
		case "name":
			s.Name, err = oneArg(d)
		case "description":
			s.Description, err = oneArg(d)
		case "tags":
			s.Tags, err = argsNoBlock(d, 1, -1)
		case "examples":
			s.Examples, err = argsNoBlock(d, 1, -1)
		case "input_modes":
			s.InputModes, err = argsNoBlock(d, 1, -1)
		case "output_modes":
			s.OutputModes, err = argsNoBlock(d, 1, -1)
		default:
			return unknownSubdirective(d, "skill", key, skillKeys)
		}
		return err
	}); err != nil {
		return err
	}
	h.Skills = append(h.Skills, s)
	return nil
}

// unmarshalLimits parses `limits { … }`; every key may appear once.
func (h *Handler) unmarshalLimits(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	l := &Limits{}
	// Counts are positive integers, sizes humanized byte sizes.
	counts := map[string]*int{
		"max_parts": &l.MaxParts, "max_json_depth": &l.MaxJSONDepth, "max_history": &l.MaxHistory,
		"max_run_events": &l.MaxRunEvents, "max_artifacts": &l.MaxArtifacts,
		"max_tasks_per_owner": &l.MaxTasksPerOwner, "max_runs_per_owner": &l.MaxRunsPerOwner,
	}
	sizes := map[string]*int{
		"max_text_size": &l.MaxTextSize, "max_file_size": &l.MaxFileSize, "max_metadata_size": &l.MaxMetadataSize,
		"max_history_size": &l.MaxHistorySize, "max_task_output": &l.MaxTaskOutput,
	}
	if err := subdirectives(d, "limits", nil, func(key string) error {
		var err error
		if key == "dedupe_window" {
			if l.DedupeWindow, err = oneArg(d); err != nil {
				return err
			}
			if _, err = parseDedupeWindow(l.DedupeWindow); err != nil {
				return d.Err(err.Error())
			}
			return nil
		}
		if p, ok := counts[key]; ok {
			*p, err = countArg(d)
		} else if p, ok := sizes[key]; ok {
			var n int64
			n, err = sizeArgMax(d, "e.g. 512KiB, at most 1GiB", math.MaxInt)
			*p = int(n)
		} else {
			return unknownSubdirective(d, "limits", key, sortedKeys(counts, sizes, map[string]*int{"dedupe_window": nil}))
		}
		return err
	}); err != nil {
		return err
	}
	h.Limits = l
	return nil
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
	if err := subdirectives(d, "extension", nil, func(key string) error {
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
			// The JSON config can only hold JSON here; whether it is an
			// object is Validate's rule.
			if !json.Valid([]byte(v)) {
				return d.Errf("params: want a JSON object (quote it with backticks), got %q", v)
			}
			x.Params = json.RawMessage(v)
		default:
			return unknownSubdirective(d, "extension", key, extensionKeys)
		}
		return nil
	}); err != nil {
		return err
	}
	h.Extensions = append(h.Extensions, x)
	return nil
}

// unmarshalCORS parses `cors { origins <origin>...; credentials on|off;
// max_age <duration> }`; every key may appear once.
func (h *Handler) unmarshalCORS(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	c := &CORS{}
	if err := subdirectives(d, "cors", nil, func(key string) error {
		var err error
		switch key {
		case "origins":
			c.Origins, err = argsNoBlock(d, 1, -1)
		case "credentials":
			c.Credentials, err = onOffArg(d)
		case "max_age":
			c.MaxAge, err = durationArg(d)
		default:
			return unknownSubdirective(d, "cors", key, corsKeys)
		}
		return err
	}); err != nil {
		return err
	}
	h.CORS = c
	return nil
}

// argsNoBlock reads the rest of the line, between lo and hi arguments (hi
// < 0: no upper bound), and refuses a block after them.
func argsNoBlock(d *caddyfile.Dispenser, lo, hi int) ([]string, error) {
	key := d.Val()
	args := d.RemainingArgs()
	if len(args) < lo || (hi >= 0 && len(args) > hi) {
		return nil, d.ArgErr()
	}
	if d.NextBlock(d.Nesting()) {
		d.Prev() // report the line of the brace, not of the block's first token
		return nil, d.Errf("%s takes no block", key)
	}
	return args, nil
}

func oneArg(d *caddyfile.Dispenser) (string, error) {
	args, err := argsNoBlock(d, 1, 1)
	if err != nil {
		return "", err
	}
	return args[0], nil
}

// onOffArg reads on or off.
func onOffArg(d *caddyfile.Dispenser) (bool, error) {
	key := d.Val()
	v, err := oneArg(d)
	if err != nil {
		return false, err
	}
	switch v {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, d.Errf("%s: want on or off, got %q", key, v)
}

// countArg reads an integer. 0 is refused: the JSON config would read it
// as unset and apply the default, which is not what was written.
func countArg(d *caddyfile.Dispenser) (int, error) {
	key := d.Val()
	v, err := oneArg(d)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(v)
	if err != nil || n == 0 {
		return 0, d.Errf("%s: want a positive integer, got %q", key, v)
	}
	return n, nil
}

// sizeArg reads a byte size (512KiB, 4MiB, 1GB): not 0 (see countArg),
// nor a size no int64 holds; hint is the error's example.
func sizeArg(d *caddyfile.Dispenser, hint string) (int64, error) {
	return sizeArgMax(d, hint, math.MaxInt64)
}

// sizeArgMax is sizeArg for a field that holds at most max.
func sizeArgMax(d *caddyfile.Dispenser, hint string, max uint64) (int64, error) {
	key := d.Val()
	v, err := oneArg(d)
	if err != nil {
		return 0, err
	}
	n, err := humanize.ParseBytes(v)
	if err != nil || n == 0 || n > max {
		return 0, d.Errf("%s: invalid size %q (%s)", key, v, hint)
	}
	return int64(n), nil
}

// durationArg reads a duration (not 0, see countArg).
func durationArg(d *caddyfile.Dispenser) (caddy.Duration, error) {
	key := d.Val()
	s, err := oneArg(d)
	if err != nil {
		return 0, err
	}
	dur, err := caddy.ParseDuration(s)
	if err != nil || dur == 0 {
		return 0, d.Errf("%s: want a positive duration, got %q", key, s)
	}
	return caddy.Duration(dur), nil
}

package caddya2a

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/dustin/go-humanize"
)

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	a2a [<matcher>] {
//		upstream <url> {
//			timeout             <duration>
//			header_up           <name> <value>
//			max_response_header <size>
//			transport           http { <reverse_proxy http transport options> }
//		}
//		spec_version      0.3 1.0
//		card_path         /.well-known/agent-card.json
//		rpc_path          /a2a
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
//		store memory {
//			max_tasks <n>
//			max_bytes <size>
//			ttl       <duration>
//			idle_ttl  <duration>
//			share     <name>
//		}
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
//	}
//
// Every subdirective but skill and extension (one per id or uri) may
// appear once; an unknown or repeated one is an error naming its line.
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		return d.Errf("a2a takes no arguments, only a block (got %q)", d.Val())
	}
	seen := map[string]int{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		key := d.Val()
		if key != "skill" && key != "extension" {
			if line, dup := seen[key]; dup {
				return d.Errf("duplicate subdirective %q (first at line %d)", key, line)
			}
			seen[key] = d.Line()
		}
		if err := h.unmarshalKey(d, key); err != nil {
			return err
		}
	}
	if h.Upstream == nil {
		d.Reset()
		d.Next()
		return d.Err("a2a: upstream is required")
	}
	return nil
}

// unmarshalKey parses one subdirective of the a2a block.
func (h *Handler) unmarshalKey(d *caddyfile.Dispenser, key string) error {
	var err error
	switch key {
	case "upstream":
		return h.unmarshalUpstream(d)
	case "spec_version":
		args, err := argsNoBlock(d, 1, 2)
		if err != nil {
			return err
		}
		for _, a := range args {
			if _, err := parseSpecVersion(a); err != nil {
				return d.Err(err.Error())
			}
			if slices.Contains(h.SpecVersion, a) {
				return d.Errf("spec_version %s listed twice", a)
			}
			h.SpecVersion = append(h.SpecVersion, a)
		}
	case "card_path":
		h.CardPath, err = pathArg(d)
	case "rpc_path":
		h.RPCPath, err = pathArg(d)
	case "url":
		h.URL, err = urlArg(d, checkPublicURL)
	case "name":
		h.Name, err = oneArg(d)
	case "description":
		h.Description, err = oneArg(d)
	case "version":
		h.Version, err = oneArg(d)
	case "provider":
		args, err := argsNoBlock(d, 2, 2)
		if err != nil {
			return err
		}
		if _, err := checkAbsoluteURL(args[1]); err != nil {
			return d.Errf("provider: %v", err)
		}
		h.Provider = &Provider{Organization: args[0], URL: args[1]}
	case "documentation_url":
		h.DocumentationURL, err = urlArg(d, checkPublicURL)
	case "icon_url":
		h.IconURL, err = urlArg(d, checkPublicURL)
	case "input_modes":
		h.InputModes, err = argsNoBlock(d, 1, -1)
	case "output_modes":
		h.OutputModes, err = argsNoBlock(d, 1, -1)
	case "skill":
		return h.unmarshalSkill(d)
	case "owner":
		h.Owner, err = oneArg(d)
	case "store":
		return h.unmarshalStore(d)
	case "limits":
		return h.unmarshalLimits(d)
	case "extension":
		return h.unmarshalExtension(d)
	case "cors":
		return h.unmarshalCORS(d)
	case "max_request_body":
		var s string
		if s, err = oneArg(d); err != nil {
			return err
		}
		n, perr := humanize.ParseBytes(s)
		if perr != nil || n == 0 || n > 1<<40 {
			return d.Errf("max_request_body: invalid size %q (e.g. 4MiB)", s)
		}
		h.MaxRequestBody = int64(n)
	case "streaming":
		var s string
		if s, err = oneArg(d); err != nil {
			return err
		}
		switch s {
		case "on":
			h.Streaming = new(true)
		case "off":
			h.Streaming = new(false)
		default:
			return d.Errf("streaming: want on or off, got %q", s)
		}
	case "reply":
		var s string
		if s, err = oneArg(d); err != nil {
			return err
		}
		if s != ReplyTask && s != ReplyMessage {
			return d.Errf("reply: want task or message, got %q", s)
		}
		h.Reply = s
	case "heartbeat":
		h.Heartbeat, err = durationArg(d)
	case "card_max_age":
		h.CardMaxAge, err = durationArg(d)
		if err == nil && h.CardMaxAge == 0 {
			// 0 would read as "unset": keep the default rather than
			// silently meaning something else.
			return d.Err("card_max_age must be positive")
		}
	default:
		return d.Errf("unknown subdirective %q", key)
	}
	return err
}

// unmarshalUpstream parses `upstream <url> { … }`.
func (h *Handler) unmarshalUpstream(d *caddyfile.Dispenser) error {
	if !d.NextArg() {
		return d.ArgErr()
	}
	u := &Upstream{URL: d.Val()}
	if !hasPlaceholder(u.URL) {
		if err := checkUpstreamURL(u.URL); err != nil {
			return d.Errf("upstream: %v", err)
		}
	}
	if d.NextArg() {
		return d.ArgErr()
	}
	seen := map[string]int{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		key := d.Val()
		if key != "header_up" {
			if line, dup := seen[key]; dup {
				return d.Errf("duplicate upstream subdirective %q (first at line %d)", key, line)
			}
			seen[key] = d.Line()
		}
		switch key {
		case "timeout":
			dur, err := durationArg(d)
			if err != nil {
				return err
			}
			u.Timeout = dur
		case "header_up":
			args, err := argsNoBlock(d, 2, 2)
			if err != nil {
				return err
			}
			if err := checkHeaderUp(args[0]); err != nil {
				return d.Errf("header_up: %v", err)
			}
			name := http.CanonicalHeaderKey(args[0])
			if _, dup := u.HeaderUp[name]; dup {
				return d.Errf("header_up %s given twice", name)
			}
			if u.HeaderUp == nil {
				u.HeaderUp = http.Header{}
			}
			u.HeaderUp[name] = []string{args[1]}
		case "max_response_header":
			v, err := oneArg(d)
			if err != nil {
				return err
			}
			// A size past int64 turns negative and is refused too.
			n, err := humanize.ParseBytes(v)
			if err != nil || checkMaxResponseHeader(int64(n)) != nil {
				return d.Errf("max_response_header: invalid size %q: want a size from 1KiB to 1GiB", v)
			}
			u.MaxResponseHeaderSize = int64(n)
		case "transport":
			if !d.NextArg() {
				return d.ArgErr()
			}
			name := d.Val()
			if name != "http" {
				return d.Errf("transport %q is not supported; use transport http", name)
			}
			unm, err := caddyfile.UnmarshalModule(d, "http.reverse_proxy.transport."+name)
			if err != nil {
				return err
			}
			u.TransportRaw = caddyconfig.JSONModuleObject(unm, "protocol", name, nil)
		default:
			return d.Errf("unknown upstream subdirective %q", key)
		}
	}
	h.Upstream = u
	return nil
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
	for _, o := range h.Skills {
		if o.ID == s.ID {
			return d.Errf("skill %q defined twice", s.ID)
		}
	}
	seen := map[string]int{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		key := d.Val()
		if line, dup := seen[key]; dup {
			return d.Errf("duplicate skill subdirective %q (first at line %d)", key, line)
		}
		seen[key] = d.Line()
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
			return d.Errf("unknown skill subdirective %q", key)
		}
		if err != nil {
			return err
		}
	}
	h.Skills = append(h.Skills, s)
	return nil
}

// unmarshalStore parses `store memory { … }`.
func (h *Handler) unmarshalStore(d *caddyfile.Dispenser) error {
	if !d.NextArg() {
		return d.ArgErr()
	}
	s := &Store{Type: d.Val()}
	if s.Type != "memory" {
		return d.Errf("store: unknown type %q (only memory is available)", s.Type)
	}
	if d.NextArg() {
		return d.ArgErr()
	}
	seen := map[string]int{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		key := d.Val()
		if line, dup := seen[key]; dup {
			return d.Errf("duplicate store subdirective %q (first at line %d)", key, line)
		}
		seen[key] = d.Line()
		switch key {
		case "max_tasks":
			v, err := oneArg(d)
			if err != nil {
				return err
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return d.Errf("max_tasks: want a positive integer, got %q", v)
			}
			s.MaxTasks = n
		case "max_bytes":
			v, err := oneArg(d)
			if err != nil {
				return err
			}
			n, err := humanize.ParseBytes(v)
			if err != nil || n == 0 || n > maxStoreBytes {
				return d.Errf("max_bytes: invalid size %q (e.g. 256MiB, at most 1TiB)", v)
			}
			s.MaxBytes = int64(n)
		case "ttl":
			dur, err := durationArg(d)
			if err != nil {
				return err
			}
			s.TTL = dur
		case "idle_ttl":
			dur, err := durationArg(d)
			if err != nil {
				return err
			}
			s.IdleTTL = dur
		case "share":
			v, err := oneArg(d)
			if err != nil {
				return err
			}
			if err := checkShareName(v); err != nil {
				return d.Errf("share: %v", err)
			}
			s.Share = v
		default:
			return d.Errf("unknown store subdirective %q", key)
		}
	}
	h.Store = s
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

func pathArg(d *caddyfile.Dispenser) (string, error) {
	key := d.Val()
	p, err := oneArg(d)
	if err != nil {
		return "", err
	}
	if err := checkPath(p); err != nil {
		return "", d.Errf("%s: %v", key, err)
	}
	return p, nil
}

// urlArg reads a URL, checking it now unless it holds a placeholder that
// only provisioning can resolve.
func urlArg(d *caddyfile.Dispenser, check func(string) error) (string, error) {
	key := d.Val()
	s, err := oneArg(d)
	if err != nil {
		return "", err
	}
	if !hasPlaceholder(s) {
		if err := check(s); err != nil {
			return "", d.Errf("%s: %v", key, err)
		}
	}
	return s, nil
}

func durationArg(d *caddyfile.Dispenser) (caddy.Duration, error) {
	key := d.Val()
	s, err := oneArg(d)
	if err != nil {
		return 0, err
	}
	dur, err := caddy.ParseDuration(s)
	if err != nil || dur <= 0 {
		return 0, d.Errf("%s: want a positive duration, got %q", key, s)
	}
	return caddy.Duration(dur), nil
}

func hasPlaceholder(s string) bool { return strings.Contains(s, "{") }

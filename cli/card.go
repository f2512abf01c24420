package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// probeTimeout bounds the check of one interface.
const probeTimeout = 10 * time.Second

// probeTaskID is the task a card check asks each interface for: no
// server has it, so an A2A server answers "task not found" and nothing
// is created.
const probeTaskID = "caddy-a2a-card-check"

// requiredMembers are the card members the spec requires, by version
// (the members both have, then 0.3's, then 1.0's). The neutral model
// that protocol.ParseCard reads cannot tell a missing member from an
// empty one, so their presence is checked on the document.
var requiredMembers = struct{ both, v03, v10 []string }{
	both: []string{"name", "description", "version", "capabilities", "defaultInputModes", "defaultOutputModes", "skills"},
	v03:  []string{"protocolVersion", "url"},
	v10:  []string{"supportedInterfaces"},
}

// probe is what one interface did when asked for a task.
type probe struct {
	iface  *a2a.AgentInterface
	result string // for the listing: "answers", "needs credentials (HTTP 401)"
	bad    string // a problem, or empty
}

// Card reads the card of the server at given (a base URL finds the
// well-known path), prints it (the document itself with JSON set), asks
// each of its interfaces whether it answers, and lists what is wrong:
// exit 1 when anything is.
func Card(ctx context.Context, o *Options, given string) int {
	w := newWire(o)
	f, err := fetchCard(ctx, w, given)
	if err != nil {
		return commandFailed(o, "card", err)
	}
	problems := checkCard(f)
	var probes []probe
	if f.Card != nil {
		for _, in := range f.Card.SupportedInterfaces {
			p := probeInterface(ctx, o, f.URL, in)
			if p.bad != "" {
				problems = append(problems, p.bad)
			}
			probes = append(probes, p)
		}
	}
	if o.JSON {
		o.raw(bytes.TrimSpace(f.Raw))
	} else {
		printCard(o, f, probes)
	}
	if len(problems) == 0 {
		if !o.JSON {
			o.printf("Problems:     none\n")
		}
		return ExitOK
	}
	out := o.printf
	if o.JSON {
		out = o.errorf
	}
	out("Problems (%d):\n", len(problems))
	for _, p := range problems {
		out("  - %s\n", p)
	}
	return ExitFailed
}

// CheckCard lists what is wrong with a card document itself, as the card
// command does before it probes the interfaces: what a2a-go cannot read,
// what this module's own card reader refuses (the field rules of both
// versions), and the members the card's version requires that are
// missing. Nil: nothing.
func CheckCard(raw []byte) []string {
	_, err := readCard(raw)
	return checkCard(&fetched{Raw: raw, ParseErr: err})
}

// checkCard is CheckCard of a fetched card.
func checkCard(f *fetched) []string {
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if f.ParseErr != nil {
		add("the card cannot be read by a2a-go: " + f.ParseErr.Error())
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(f.Raw, &members); err != nil {
		add("card: must be a JSON object")
		return out
	}
	need := slices.Clone(requiredMembers.both)
	_, v10 := members["supportedInterfaces"]
	_, hasURL := members["url"]
	_, hasPV := members["protocolVersion"]
	if hasURL || hasPV || !v10 {
		need = append(need, requiredMembers.v03...)
	}
	if v10 || !(hasURL || hasPV) {
		need = append(need, requiredMembers.v10...)
	}
	if !v10 && !hasURL && !hasPV {
		// Neither version's members: say what either needs.
		add("card: has neither supportedInterfaces (1.0) nor url and protocolVersion (0.3)")
		need = requiredMembers.both
	}
	missing := map[string]bool{}
	for _, m := range need {
		if _, ok := members[m]; !ok {
			add(m + ": is required")
			missing[m] = true
		}
	}
	if _, err := protocol.ParseCard(f.Raw); err != nil {
		var pe *protocol.Error
		if errors.As(err, &pe) && len(pe.Violations) > 0 {
			for _, v := range pe.Violations {
				if !missing[v.Field] { // said once, as missing
					add(v.Field + ": " + v.Description)
				}
			}
		} else {
			add(err.Error())
		}
	}
	return out
}

// probeInterface asks one interface for a task no server has. An A2A
// server answers with an error in JSON (task not found), or asks for
// credentials; a refused connection, a timeout or an HTML page means
// the URL does not serve A2A. A gRPC address is only dialled. The
// command's credentials go only where Options.mayCredential allows.
func probeInterface(ctx context.Context, o *Options, cardURL string, in *a2a.AgentInterface) (p probe) {
	p = probe{iface: in}
	name := string(in.ProtocolBinding) + " " + string(in.ProtocolVersion) + " " + in.URL
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	switch in.ProtocolBinding {
	case a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON:
	case a2a.TransportProtocolGRPC:
		addr := in.URL
		if u, err := url.Parse(in.URL); err == nil && u.Host != "" {
			addr = u.Host
		}
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			p.result = "does not answer"
			p.bad = fmt.Sprintf("interface %s: does not answer: %v", name, err)
			return p
		}
		conn.Close()
		p.result = "accepts connections (gRPC not probed further)"
		return p
	default:
		p.result = "not probed (custom binding)"
		return p
	}
	w := newWire(o)
	withheld := len(w.header) > 0 && !o.mayCredential(cardURL, in.URL)
	if withheld {
		w.header = nil
		defer func() {
			p.result += fmt.Sprintf(" (without your credentials: another origin; --trust-origin %s sends them)", originOf(in.URL))
		}()
	}
	c, err := a2aclient.NewFromEndpoints(ctx, []*a2a.AgentInterface{in}, clientOptions(w)...)
	if err != nil {
		p.result = "cannot be called"
		p.bad = fmt.Sprintf("interface %s: %v", name, err)
		return p
	}
	defer c.Destroy()
	_, err = c.GetTask(ctx, &a2a.GetTaskRequest{ID: probeTaskID})
	status, mt := w.answer()
	switch over := w.bound(); {
	case over != nil:
		p.result = "answers too much"
		p.bad = fmt.Sprintf("interface %s: %v", name, over)
	case status == 401 || status == 403:
		p.result = fmt.Sprintf("needs credentials (HTTP %d)", status)
	case err == nil || (status != 0 && strings.HasSuffix(mt, "json")):
		p.result = "answers"
	case status != 0 && jsonwire.IsObject(w.last()):
		// JSON under another media type (a2a-go's 0.3 compat server
		// sends text/plain): it serves A2A, the listing says how.
		p.result = fmt.Sprintf("answers (JSON sent as %q)", mt)
	case status == 0:
		p.result = "does not answer"
		p.bad = fmt.Sprintf("interface %s: does not answer: %v", name, err)
	default:
		p.result = "does not answer as A2A"
		p.bad = fmt.Sprintf("interface %s: answers HTTP %d with %q, not an A2A answer", name, status, mt)
	}
	return p
}

// printCard is the card for a person.
func printCard(o *Options, f *fetched, probes []probe) {
	o.printf("Card:         %s\n", f.URL)
	c := f.Card
	if c == nil {
		return
	}
	o.printf("Name:         %s\n", c.Name)
	o.printf("Description:  %s\n", c.Description)
	o.printf("Version:      %s\n", c.Version)
	if c.Provider != nil {
		o.printf("Provider:     %s (%s)\n", c.Provider.Org, c.Provider.URL)
	}
	o.printf("Interfaces:\n")
	if len(probes) == 0 {
		o.printf("  none\n")
	}
	for _, p := range probes {
		o.printf("  %-10s %-6s %s  %s\n", p.iface.ProtocolBinding, p.iface.ProtocolVersion, p.iface.URL, p.result)
	}
	var caps []string
	if c.Capabilities.Streaming {
		caps = append(caps, "streaming")
	}
	if c.Capabilities.PushNotifications {
		caps = append(caps, "push notifications")
	}
	if c.Capabilities.ExtendedAgentCard {
		caps = append(caps, "extended card")
	}
	for _, x := range c.Capabilities.Extensions {
		s := "extension " + x.URI
		if x.Required {
			s += " (required)"
		}
		caps = append(caps, s)
	}
	if len(caps) == 0 {
		caps = []string{"none"}
	}
	o.printf("Capabilities: %s\n", strings.Join(caps, ", "))
	o.printf("Input modes:  %s\n", strings.Join(c.DefaultInputModes, ", "))
	o.printf("Output modes: %s\n", strings.Join(c.DefaultOutputModes, ", "))
	o.printf("Skills:\n")
	if len(c.Skills) == 0 {
		o.printf("  none\n")
	}
	for _, s := range c.Skills {
		o.printf("  %s: %s: %s", s.ID, s.Name, s.Description)
		if len(s.Tags) > 0 {
			o.printf(" [%s]", strings.Join(s.Tags, ", "))
		}
		o.printf("\n")
	}
	printSecurity(o, c)
}

// printSecurity lists the card's schemes and the alternatives a caller
// may satisfy (each one all of its schemes).
func printSecurity(o *Options, c *a2a.AgentCard) {
	if len(c.SecuritySchemes) == 0 && len(c.SecurityRequirements) == 0 {
		o.printf("Security:     none declared\n")
		return
	}
	o.printf("Security:\n")
	names := make([]string, 0, len(c.SecuritySchemes))
	for n := range c.SecuritySchemes {
		names = append(names, string(n))
	}
	sort.Strings(names)
	for _, n := range names {
		o.printf("  scheme %s: %s\n", n, describeScheme(c.SecuritySchemes[a2a.SecuritySchemeName(n)]))
	}
	for _, req := range c.SecurityRequirements {
		var all []string
		for n, scopes := range req {
			s := string(n)
			if len(scopes) > 0 {
				s += " (" + strings.Join(scopes, " ") + ")"
			}
			all = append(all, s)
		}
		sort.Strings(all)
		o.printf("  requires:  %s\n", strings.Join(all, " and "))
	}
}

func describeScheme(s a2a.SecurityScheme) string {
	switch s := s.(type) {
	case a2a.HTTPAuthSecurityScheme:
		if s.BearerFormat != "" {
			return "HTTP " + s.Scheme + " (" + s.BearerFormat + ")"
		}
		return "HTTP " + s.Scheme
	case a2a.APIKeySecurityScheme:
		return fmt.Sprintf("API key %q in the %s", s.Name, s.Location)
	case a2a.OpenIDConnectSecurityScheme:
		return "OpenID Connect " + s.OpenIDConnectURL
	case a2a.MutualTLSSecurityScheme:
		return "mutual TLS"
	case a2a.OAuth2SecurityScheme:
		return "OAuth 2.0"
	}
	return fmt.Sprintf("%T", s)
}

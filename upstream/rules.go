package upstream

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// ErrBadOutput: the agent's answer breaks one of the rules its output is
// held to (see rules). The run fails; the error, naming the rule and the
// field, is for the log only.
var ErrBadOutput = errors.New("upstream: agent output breaks a rule")

// rules are what an agent's answer is held to before anything of it is
// relayed or stored: the limits a caller's message gets (the nesting of
// each JSON object the agent sends, the size of each part, the parts of
// an artifact), and what a part must be before a client is handed it
// (protocol.CheckOutputPart). Callers' limits, because what the agent
// makes reaches callers, is stored beside what they sent and is re-sent
// to the agent in the next turn's history: one setting bounds every JSON
// document and part the module handles, whoever made it.
type rules struct {
	limits   protocol.Limits // defaults applied
	maxDepth int
}

// newRules applies the defaults of l and maxDepth (<= 0:
// protocol.DefaultMaxDepth).
func newRules(l protocol.Limits, maxDepth int) *rules {
	if maxDepth <= 0 {
		maxDepth = protocol.DefaultMaxDepth
	}
	return &rules{limits: l.WithDefaults(), maxDepth: maxDepth}
}

// defaultRules hold an answer to the default limits.
var defaultRules = newRules(protocol.Limits{}, 0)

// checkDepth refuses a JSON document (an event object, a plain JSON
// answer: the whole of what the agent sent, as a caller's whole body
// counts) nested deeper than maxDepth. It reports whether b is valid JSON,
// so a caller that needs to know can say so in its own words.
func (r *rules) checkDepth(b []byte, what string) (valid bool, err error) {
	depth, ok := jsonwire.Valid(b)
	if !ok {
		return false, nil
	}
	if depth > r.maxDepth {
		return true, fmt.Errorf("%w: %s nests %d levels deep, over the %s limit of %d",
			ErrBadOutput, what, depth, protocol.LimitMaxJSONDepth, r.maxDepth)
	}
	return true, nil
}

// checkText bounds a text part (a chunk, a status message, a plain
// answer) without building one: this is on the path of every token.
func (r *rules) checkText(s, field string) error {
	if len(s) <= r.limits.MaxTextBytes {
		return nil
	}
	return r.checkPart(&protocol.Part{Kind: protocol.PartText, Text: s}, field)
}

// checkPart holds one part to the callers' limits and to what a client
// may take from it.
func (r *rules) checkPart(p *protocol.Part, field string) error {
	if e := r.limits.CheckPart(p, field); e != nil {
		return badOutput(e)
	}
	if e := protocol.CheckOutputPart(p, field); e != nil {
		return badOutput(e)
	}
	return nil
}

// checkParts holds an artifact's parts to the same, and their number to
// the parts a caller's message may have.
func (r *rules) checkParts(ps []protocol.Part, field string) error {
	if e := r.limits.CheckParts(ps, field); e != nil {
		return badOutput(e)
	}
	for i := range ps {
		if e := protocol.CheckOutputPart(&ps[i], fmt.Sprintf("%s[%d]", field, i)); e != nil {
			return badOutput(e)
		}
	}
	return nil
}

// badOutput is the log text of a protocol error about agent output: the
// field and what is wrong with it, not the -32602 wording of a reply.
func badOutput(e *protocol.Error) error {
	if len(e.Violations) > 0 {
		v := e.Violations[0]
		return fmt.Errorf("%w: %s: %s", ErrBadOutput, v.Field, v.Description)
	}
	return fmt.Errorf("%w: %s", ErrBadOutput, e.Message)
}

// unaskedEncoding returns the first content coding of h other than
// identity. The module asks for none: the transport it is given either
// asks for none, or asks for gzip itself and then decodes the answer and
// removes the header. So any coding left is one nobody here can read, and
// the body is not what its media type says (stored as it is, a gzip
// stream would become a text part of garbage).
func unaskedEncoding(h http.Header) string {
	for _, v := range h.Values("Content-Encoding") {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return c
			}
		}
	}
	return ""
}

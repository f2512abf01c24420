package upstream

import (
	"errors"
	"fmt"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// ErrBadOutput: the agent's answer breaks one of the rules its output is
// held to (see Rules). The run fails; the error, naming the rule and the
// field, is for the log only.
var ErrBadOutput = errors.New("upstream: agent output breaks a rule")

// Rules are what an agent's answer is held to before anything of it is
// relayed or stored, whatever kind of agent made it: the limits a
// caller's message gets (the nesting of each JSON document the agent
// sends, the size of each part, the parts of an artifact), and what a
// part must be before a client is handed it (protocol.CheckOutputPart).
// Callers' limits, because what the agent makes reaches callers, is
// stored beside what they sent and is re-sent to the agent in the next
// turn's history: one setting bounds every JSON document and part the
// module handles, whoever made it. Each kind applies them where its wire
// format hands it a document or a part.
type Rules struct {
	limits   protocol.Limits // defaults applied
	maxDepth int
}

// NewRules applies the defaults of l and maxDepth (<= 0:
// protocol.DefaultMaxDepth).
func NewRules(l protocol.Limits, maxDepth int) *Rules {
	if maxDepth <= 0 {
		maxDepth = protocol.DefaultMaxDepth
	}
	return &Rules{limits: l.WithDefaults(), maxDepth: maxDepth}
}

// CheckDepth refuses a JSON document (an event object, a plain JSON
// answer: the whole of what the agent sent, as a caller's whole body
// counts) nested deeper than the depth limit. It reports whether b is
// valid JSON, so a caller that needs to know can say so in its own words.
func (r *Rules) CheckDepth(b []byte, what string) (valid bool, err error) {
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

// CheckText bounds a text part (a chunk, a status message) without
// building one: this is on the path of every token.
func (r *Rules) CheckText(s, field string) error {
	if len(s) <= r.limits.MaxTextBytes {
		return nil
	}
	return r.CheckPart(&protocol.Part{Kind: protocol.PartText, Text: s}, field)
}

// CheckPart holds one part to the callers' limits and to what a client
// may take from it.
func (r *Rules) CheckPart(p *protocol.Part, field string) error {
	if e := r.limits.CheckPart(p, field); e != nil {
		return badOutput(e)
	}
	return r.CheckOutputPart(p, field)
}

// CheckParts holds an artifact's parts to the same, and their number to
// the parts a caller's message may have.
func (r *Rules) CheckParts(ps []protocol.Part, field string) error {
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

// CheckOutputPart holds a part to what a client may take from it (media
// type, URI, name) but not to the per-part sizes: for a part that is a
// whole answer, bounded by the answer's own size and the task's output
// limit as a streamed answer merged from chunks is.
func (r *Rules) CheckOutputPart(p *protocol.Part, field string) error {
	if e := protocol.CheckOutputPart(p, field); e != nil {
		return badOutput(e)
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

// MaxDepth is the nesting bound of one document of the agent's.
func (r *Rules) MaxDepth() int { return r.maxDepth }

package httpagent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// HeaderTaskState is the response header of a plain answer that sets the
// outcome of the run (completed when absent).
const HeaderTaskState = "A2A-Task-State"

// readPlain turns a plain answer into its events: completed →
// [EventParts{parts, Whole}, EventStatus{completed}]; any other state →
// [EventStatus{state, Parts: parts}], the body being the status message.
// An empty body has no parts. The body is one part, held to r's rules
// for what a part may be (its size is the answer's: maxBytes).
func readPlain(resp *http.Response, mt string, maxBytes int64, r *upstream.Rules) ([]upstream.Event, error) {
	state := protocol.StateCompleted
	if v := resp.Header.Get(HeaderTaskState); v != "" {
		s, ok := outcome(strings.ToLower(strings.TrimSpace(v)))
		if !ok {
			return nil, fmt.Errorf("upstream: unknown %s %q", HeaderTaskState, v)
		}
		state = s
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("upstream: reading the answer: %w", err)
	}
	if int64(len(body)) > maxBytes {
		return nil, errBodyTooLarge
	}
	var parts []protocol.Part
	if len(body) > 0 {
		p, err := plainPart(body, mt, resp.Header, r)
		if err != nil {
			return nil, err
		}
		// The body is the whole answer, bounded by maxBytes and then by
		// the task's output limit, as a streamed answer merged from
		// chunks is: the callers' per-part sizes bound what arrives in
		// one piece of a stream, not a whole answer. What a client may
		// take from a part (media type, URI, name) holds all the same.
		if err := r.CheckOutputPart(&p, "answer"); err != nil {
			return nil, err
		}
		parts = []protocol.Part{p}
	}
	if state != protocol.StateCompleted {
		return []upstream.Event{{Kind: upstream.EventStatus, State: state, Parts: parts}}, nil
	}
	events := make([]upstream.Event, 0, 2)
	if parts != nil {
		events = append(events, upstream.Event{Kind: upstream.EventParts, Parts: parts, Whole: true})
	}
	return append(events, upstream.Event{Kind: upstream.EventStatus, State: protocol.StateCompleted}), nil
}

// plainPart maps a body by media type: text/* is text, JSON a string's text
// or else data, anything else a file with the bytes inline. A JSON body is
// held to r's nesting limit as a whole, as an event object is.
func plainPart(body []byte, mt string, h http.Header, r *upstream.Rules) (protocol.Part, error) {
	switch {
	case strings.HasPrefix(mt, "text/"):
		return protocol.Part{Kind: protocol.PartText, Text: string(body)}, nil
	case isJSONType(mt):
		t := bytes.TrimSpace(body)
		valid, err := r.CheckDepth(t, "answer")
		if err != nil {
			return protocol.Part{}, err
		}
		if !valid {
			return protocol.Part{}, fmt.Errorf("upstream: %s answer is not valid JSON", mt)
		}
		if t[0] == '"' {
			var s string
			if err := json.Unmarshal(t, &s); err != nil {
				return protocol.Part{}, fmt.Errorf("upstream: %w", err)
			}
			return protocol.Part{Kind: protocol.PartText, Text: s}, nil
		}
		return protocol.Part{Kind: protocol.PartData, Data: json.RawMessage(t)}, nil
	}
	p := protocol.Part{Kind: protocol.PartFile, Raw: body, MediaType: mt}
	if cd := h.Get("Content-Disposition"); cd != "" {
		if _, ps, err := mime.ParseMediaType(cd); err == nil {
			p.Filename = ps["filename"]
		}
	}
	return p, nil
}

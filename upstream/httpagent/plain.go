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

// HeaderReply is the response header that marks a whole answer, plain or
// streamed, as a direct message (its value "message"; "task", the
// default, is today's answer): the turn is then answered with one Message
// and no task is kept. One header for both forms, since the handler must
// know what the turn is before it stores anything.
const HeaderReply = "A2A-Reply"

// replyKey is HeaderReply as net/http keys it (textproto's canonical
// form): indexed directly, the lookup of every answer allocates nothing.
const replyKey = "A2a-Reply"

// directAnswer reports whether h marks the answer as a direct message.
func directAnswer(h http.Header) (bool, error) {
	vs := h[replyKey]
	if len(vs) == 0 {
		return false, nil
	}
	switch strings.ToLower(strings.TrimSpace(vs[0])) {
	case "message":
		return true, nil
	case "task":
		return false, nil
	}
	return false, fmt.Errorf("%w: unknown %s %q (want message or task)", upstream.ErrBadOutput, HeaderReply, vs[0])
}

// readPlain turns a plain answer into its events: completed →
// [EventParts{parts, Whole}, EventStatus{completed}]; any other state →
// [EventStatus{state, Parts: parts}], the body being the status message.
// An empty body has no parts. The body is one part, held to r's rules
// for what a part may be (its size is the answer's: maxBytes).
//
// A direct answer (direct) starts with EventMessage: the same events then
// make the message.
func readPlain(resp *http.Response, mt string, maxBytes int64, r *upstream.Rules, direct bool) ([]upstream.Event, error) {
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
		status := upstream.Event{Kind: upstream.EventStatus, State: state, Parts: parts}
		if direct {
			return []upstream.Event{{Kind: upstream.EventMessage}, status}, nil
		}
		return []upstream.Event{status}, nil
	}
	// Sized for what comes: an answer that is not direct allocates as it
	// did before the marker existed.
	n := 2
	if direct {
		n = 3
	}
	events := make([]upstream.Event, 0, n)
	if direct {
		events = append(events, upstream.Event{Kind: upstream.EventMessage})
	}
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

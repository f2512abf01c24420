package httpagent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
	"github.com/caddy-a2a/caddy-a2a/upstream/frames"
)

// ErrEventTooLarge: one NDJSON line or SSE event is over MaxEventBytes.
var ErrEventTooLarge = frames.ErrTooLarge

// eventParser reads an agent's event stream (NDJSON or SSE) frame by frame
// and parses each frame as an event object of the contract.
type eventParser struct {
	r        *frames.Reader
	rules    *upstream.Rules
	finished bool
}

func newEventParser(r io.Reader, sse bool, max int, rules *upstream.Rules) *eventParser {
	return &eventParser{r: frames.NewReader(r, sse, max), rules: rules}
}

// next returns the next event; io.EOF once the stream ended cleanly or a
// final status was returned.
func (p *eventParser) next() (upstream.Event, error) {
	if p.finished {
		return upstream.Event{}, io.EOF
	}
	obj, err := p.r.Next()
	if err != nil {
		return upstream.Event{}, err
	}
	ev, final, err := parseEvent(obj, p.rules)
	if err != nil {
		return upstream.Event{}, err
	}
	p.finished = final
	return ev, nil
}

// The event objects of the contract. Anything else is an error: an agent
// that speaks another shape should learn at once, not lose output silently.

// outcome reads the state an agent ends its run with, spelled as in A2A
// 0.3 (protocol.ParseTaskState): a terminal or interrupted state the agent
// may set. Submitted and working are not outcomes, and canceled belongs
// to the caller.
func outcome(name string) (protocol.TaskState, bool) {
	s, ok := protocol.ParseTaskState(name)
	if !ok || s == protocol.StateCanceled || !(s.Terminal() || s.Interrupted()) {
		return protocol.StateUnspecified, false
	}
	return s, true
}

// parseEvent decodes one event object and holds it to r; final reports
// whether it ends the run.
func parseEvent(b []byte, r *upstream.Rules) (ev upstream.Event, final bool, err error) {
	if s, ok := plainTextEvent(b); ok {
		// One level deep: only the size can be over a limit.
		if err := r.CheckText(s, ""); err != nil {
			return upstream.Event{}, false, err
		}
		return upstream.Event{Kind: upstream.EventText, Text: s}, false, nil
	}
	return parseEventSlow(b, r)
}

// plainTextEvent is the fast path of token streaming: {"text":"…"} whose
// string needs no unescaping (no quote, backslash or control character,
// valid UTF-8), exactly as the agent wrote it.
func plainTextEvent(b []byte) (string, bool) {
	const pre, post = `{"text":"`, `"}`
	// JSON's white space only: bytes.TrimSpace also drops \v, \f and
	// Unicode spaces, which the general decoder refuses around a value.
	b = bytes.Trim(b, " \t\r\n")
	if len(b) < len(pre)+len(post) || string(b[:len(pre)]) != pre || string(b[len(b)-len(post):]) != post {
		return "", false
	}
	mid := b[len(pre) : len(b)-len(post)]
	for _, c := range mid {
		if c < 0x20 || c == '"' || c == '\\' {
			return "", false
		}
	}
	if !utf8.Valid(mid) {
		return "", false
	}
	return string(mid), true
}

func parseEventSlow(b []byte, r *upstream.Rules) (ev upstream.Event, final bool, err error) {
	// The depth first, before anything recurses into the object; invalid
	// JSON is left to the decoder below, which says what is wrong.
	valid, err := r.CheckDepth(b, "event")
	if err != nil {
		return upstream.Event{}, false, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return upstream.Event{}, false, fmt.Errorf("upstream: event is not a JSON object: %w", err)
	}
	if !valid {
		// What the decoder lets through and the validator does not: bytes
		// that are not UTF-8, which json.RawMessage would carry verbatim
		// into a data part. A caller's body like it is -32700; the agent's
		// output is held to the same.
		return upstream.Event{}, false, errors.New("upstream: event is not valid JSON: not UTF-8")
	}
	only := func(key string, allowed ...string) error {
		for k := range m {
			if k != key && !slices.Contains(allowed, k) {
				return fmt.Errorf("upstream: event %q has an unexpected member %q", key, k)
			}
		}
		return nil
	}
	switch {
	case m["text"] != nil:
		if err := only("text"); err != nil {
			return upstream.Event{}, false, err
		}
		s, err := jsonString(m["text"])
		if err != nil {
			return upstream.Event{}, false, errors.New(`upstream: "text" is not a string`)
		}
		if err := r.CheckText(s, ""); err != nil {
			return upstream.Event{}, false, err
		}
		return upstream.Event{Kind: upstream.EventText, Text: s}, false, nil
	case m["data"] != nil, m["file"] != nil:
		p, err := parsePart(m)
		if err != nil {
			return upstream.Event{}, false, err
		}
		if err := r.CheckPart(&p, ""); err != nil {
			return upstream.Event{}, false, err
		}
		return upstream.Event{Kind: upstream.EventParts, Parts: []protocol.Part{p}}, false, nil
	case m["artifact"] != nil:
		if err := only("artifact"); err != nil {
			return upstream.Event{}, false, err
		}
		a, err := parseArtifact(m["artifact"])
		if err != nil {
			return upstream.Event{}, false, err
		}
		if err := r.CheckParts(a.Parts, "artifact.parts"); err != nil {
			return upstream.Event{}, false, err
		}
		return upstream.Event{Kind: upstream.EventArtifact, Artifact: a}, false, nil
	case m["status"] != nil:
		if err := only("status", "message"); err != nil {
			return upstream.Event{}, false, err
		}
		st, err := jsonString(m["status"])
		if err != nil {
			return upstream.Event{}, false, errors.New(`upstream: "status" is not a string`)
		}
		ev := upstream.Event{Kind: upstream.EventStatus}
		if msg, ok := m["message"]; ok {
			s, err := jsonString(msg)
			if err != nil {
				return upstream.Event{}, false, errors.New(`upstream: status "message" is not a string`)
			}
			if err := r.CheckText(s, "message"); err != nil {
				return upstream.Event{}, false, err
			}
			ev.Parts = []protocol.Part{{Kind: protocol.PartText, Text: s}}
		}
		if st == "working" {
			ev.State = protocol.StateWorking
			return ev, false, nil
		}
		state, ok := outcome(st)
		if !ok {
			return upstream.Event{}, false, fmt.Errorf("upstream: unknown status %q", st)
		}
		ev.State = state
		return ev, true, nil
	case m["error"] != nil:
		if err := only("error"); err != nil {
			return upstream.Event{}, false, err
		}
		s, err := jsonString(m["error"])
		if err != nil {
			return upstream.Event{}, false, errors.New(`upstream: "error" is not a string`)
		}
		return upstream.Event{Kind: upstream.EventStatus, State: protocol.StateFailed, Detail: s}, true, nil
	}
	// Sorted, so that one event gets one message.
	keys := slices.Sorted(maps.Keys(m))
	return upstream.Event{}, false, fmt.Errorf("upstream: unknown event shape with members [%s]", strings.Join(keys, ","))
}

// jsonString decodes a JSON string; null is not one.
func jsonString(raw json.RawMessage) (string, error) {
	var s string
	if len(raw) == 0 || raw[0] != '"' {
		return "", errors.New("not a string")
	}
	err := json.Unmarshal(raw, &s)
	return s, err
}

// parsePart decodes a tagged part: exactly one of text, data or file.
func parsePart(m map[string]json.RawMessage) (protocol.Part, error) {
	if len(m) != 1 {
		return protocol.Part{}, errors.New("upstream: a part has exactly one of text, data, file")
	}
	if raw, ok := m["text"]; ok {
		s, err := jsonString(raw)
		if err != nil {
			return protocol.Part{}, errors.New(`upstream: part "text" is not a string`)
		}
		return protocol.Part{Kind: protocol.PartText, Text: s}, nil
	}
	if raw, ok := m["data"]; ok {
		return protocol.Part{Kind: protocol.PartData, Data: raw}, nil
	}
	if raw, ok := m["file"]; ok {
		return parseFile(raw)
	}
	for k := range m {
		return protocol.Part{}, fmt.Errorf("upstream: unknown part member %q", k)
	}
	panic("unreachable")
}

type wireFile struct {
	URI      *string `json:"uri"`
	Bytes    *string `json:"bytes"`
	MimeType string  `json:"mimeType"`
	Name     string  `json:"name"`
}

func parseFile(raw json.RawMessage) (protocol.Part, error) {
	var f wireFile
	if err := strictUnmarshal(raw, &f); err != nil {
		return protocol.Part{}, fmt.Errorf("upstream: bad file: %w", err)
	}
	p := protocol.Part{Kind: protocol.PartFile, MediaType: f.MimeType, Filename: f.Name}
	switch {
	case f.URI != nil && f.Bytes == nil:
		if *f.URI == "" {
			return protocol.Part{}, errors.New("upstream: file uri is empty")
		}
		p.URL = *f.URI
	case f.Bytes != nil && f.URI == nil:
		b, ok := protocol.DecodeBase64(*f.Bytes)
		if !ok {
			return protocol.Part{}, errors.New("upstream: file bytes are not base64")
		}
		p.Raw = b
	default:
		return protocol.Part{}, errors.New("upstream: a file has exactly one of uri, bytes")
	}
	return p, nil
}

type wireArtifact struct {
	Name        string                       `json:"name"`
	Description string                       `json:"description"`
	Parts       []map[string]json.RawMessage `json:"parts"`
}

func parseArtifact(raw json.RawMessage) (*protocol.Artifact, error) {
	var w wireArtifact
	if err := strictUnmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("upstream: bad artifact: %w", err)
	}
	if len(w.Parts) == 0 {
		return nil, errors.New("upstream: artifact without parts")
	}
	a := &protocol.Artifact{Name: w.Name, Description: w.Description, Parts: make([]protocol.Part, len(w.Parts))}
	for i, m := range w.Parts {
		p, err := parsePart(m)
		if err != nil {
			return nil, err
		}
		a.Parts[i] = p
	}
	return a, nil
}

func strictUnmarshal(raw []byte, v any) error {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return errors.New("null")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

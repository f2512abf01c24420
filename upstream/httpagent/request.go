package httpagent

import (
	"encoding/base64"
	"errors"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

var errInvalidRaw = errors.New("upstream: request holds a JSON value that is not valid JSON")

// sizeHint guesses the body size so that appendRequestBody grows its buffer
// once at most in the common case.
func sizeHint(r *upstream.RunRequest) int {
	n := 256 + len(r.TaskID) + len(r.ContextID) + len(r.User) + len(r.Metadata) + len(r.Message.Metadata)
	n += 2 * partsSize(r.Message.Parts) // once in input, once in message
	for i := range r.History {
		n += 32 + partsSize(r.History[i].Parts)
	}
	for _, e := range r.Extensions {
		n += len(e) + 3
	}
	return n
}

func partsSize(ps []protocol.Part) int {
	n := 0
	for i := range ps {
		p := &ps[i]
		n += 48 + len(p.Text) + len(p.Data) + len(p.URL) + len(p.Filename) + len(p.MediaType) + base64.StdEncoding.EncodedLen(len(p.Raw))
		n += len(p.Text) / 8 // escapes
	}
	return n
}

// appendRequestBody appends the JSON body of the agent contract:
//
//	{"taskId","contextId","input","message":{"messageId","role","parts","metadata"?},
//	 "history":[{"role","parts"}],"user"?,"metadata"?,"extensions"?}
func appendRequestBody(dst []byte, r *upstream.RunRequest) ([]byte, error) {
	var err error
	dst = append(dst, `{"taskId":`...)
	dst = appendString(dst, r.TaskID)
	dst = append(dst, `,"contextId":`...)
	dst = appendString(dst, r.ContextID)
	dst = append(dst, `,"input":`...)
	if dst, err = appendInput(dst, r.Message.Parts); err != nil {
		return dst, err
	}
	dst = append(dst, `,"message":{"messageId":`...)
	dst = appendString(dst, r.Message.ID)
	dst = append(dst, `,"role":"user","parts":`...)
	if dst, err = appendParts(dst, r.Message.Parts); err != nil {
		return dst, err
	}
	if hasJSON(r.Message.Metadata) {
		dst = append(dst, `,"metadata":`...)
		if dst, err = appendRaw(dst, r.Message.Metadata); err != nil {
			return dst, err
		}
	}
	dst = append(dst, `},"history":[`...)
	for i := range r.History {
		if i > 0 {
			dst = append(dst, ',')
		}
		if r.History[i].Role == protocol.RoleAgent {
			dst = append(dst, `{"role":"agent","parts":`...)
		} else {
			dst = append(dst, `{"role":"user","parts":`...)
		}
		if dst, err = appendParts(dst, r.History[i].Parts); err != nil {
			return dst, err
		}
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	if r.User != "" {
		dst = append(dst, `,"user":`...)
		dst = appendString(dst, r.User)
	}
	if hasJSON(r.Metadata) {
		dst = append(dst, `,"metadata":`...)
		if dst, err = appendRaw(dst, r.Metadata); err != nil {
			return dst, err
		}
	}
	if len(r.Extensions) > 0 {
		dst = append(dst, `,"extensions":[`...)
		for i, e := range r.Extensions {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, e)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}'), nil
}

// appendInput appends the "input" member: all-text messages become one
// string (parts joined with "\n"), a lone data part its value, a lone file
// part its file object; anything else (including no parts) the array of
// tagged parts.
func appendInput(dst []byte, ps []protocol.Part) ([]byte, error) {
	if len(ps) == 1 {
		switch ps[0].Kind {
		case protocol.PartData:
			return appendRaw(dst, ps[0].Data)
		case protocol.PartFile:
			return appendFile(dst, &ps[0]), nil
		}
	}
	allText := len(ps) > 0
	for i := range ps {
		if ps[i].Kind != protocol.PartText {
			allText = false
			break
		}
	}
	if !allText {
		return appendParts(dst, ps)
	}
	dst = append(dst, '"')
	for i := range ps {
		if i > 0 {
			dst = append(dst, `\n`...)
		}
		dst = appendStringBody(dst, ps[i].Text)
	}
	return append(dst, '"'), nil
}

// appendParts appends parts in the contract's member-presence shape.
func appendParts(dst []byte, ps []protocol.Part) ([]byte, error) {
	dst = append(dst, '[')
	for i := range ps {
		if i > 0 {
			dst = append(dst, ',')
		}
		p := &ps[i]
		switch p.Kind {
		case protocol.PartText:
			dst = append(dst, `{"text":`...)
			dst = appendString(dst, p.Text)
		case protocol.PartData:
			dst = append(dst, `{"data":`...)
			var err error
			if dst, err = appendRaw(dst, p.Data); err != nil {
				return dst, err
			}
		case protocol.PartFile:
			dst = append(dst, `{"file":`...)
			dst = appendFile(dst, p)
		default:
			return dst, errors.New("upstream: part of unknown kind")
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), nil
}

// appendFile appends {"uri"|"bytes", "mimeType"?, "name"?}; a part with a
// URL is sent by reference, otherwise its bytes (standard base64).
func appendFile(dst []byte, p *protocol.Part) []byte {
	if p.URL != "" {
		dst = append(dst, `{"uri":`...)
		dst = appendString(dst, p.URL)
	} else {
		dst = append(dst, `{"bytes":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, p.Raw)
		dst = append(dst, '"')
	}
	if p.MediaType != "" {
		dst = append(dst, `,"mimeType":`...)
		dst = appendString(dst, p.MediaType)
	}
	if p.Filename != "" {
		dst = append(dst, `,"name":`...)
		dst = appendString(dst, p.Filename)
	}
	return append(dst, '}')
}

package httpagent

import (
	"bytes"
	"encoding/json"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
)

// The request body is written by hand into one growing buffer: this is on
// the path of every run, and the shape is fixed, so reflection buys nothing.

// appendString and appendStringBody escape as every encoder of the module
// does; the one implementation lives in jsonwire.
func appendString(dst []byte, s string) []byte { return jsonwire.AppendString(dst, s) }

func appendStringBody(dst []byte, s string) []byte { return jsonwire.AppendStringBody(dst, s) }

// appendRaw appends a JSON value of the neutral model. The codecs hand over
// only valid JSON, so the common case is a copy; a value spread over lines
// is compacted, and one that is not JSON at all is an error (a bug above).
func appendRaw(dst []byte, raw json.RawMessage) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return append(dst, "null"...), nil
	}
	if !json.Valid(raw) {
		return dst, errInvalidRaw
	}
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 && bytes.IndexByte(raw, '\t') < 0 {
		return append(dst, raw...), nil
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, raw); err != nil {
		return dst, errInvalidRaw
	}
	return buf.Bytes(), nil
}

// hasJSON reports whether raw is worth sending (neither absent nor null).
func hasJSON(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

package protocol

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strconv"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
)

// Limits bound what one decoded request may carry. The codecs check them
// while decoding, so an oversized part is refused before its content is
// copied or (for inline files) base64-decoded. A zero field takes its
// default; the request body as a whole is bounded by the HTTP layer.
type Limits struct {
	// MaxParts bounds the parts of one message (default 64).
	MaxParts int
	// MaxTextBytes bounds the UTF-8 bytes of one text part (default 1 MiB).
	MaxTextBytes int
	// MaxFileBytes bounds the decoded bytes of one inline file part
	// (default 4 MiB). The size is computed from the base64 length before
	// anything is decoded. File parts given by URL are not bounded: they
	// are passed through and never fetched.
	MaxFileBytes int
	// MaxMetadataBytes bounds each metadata object (of the params, the
	// message and each part) as sent, in bytes of JSON (default 64 KiB).
	MaxMetadataBytes int
}

// The default limits.
const (
	DefaultMaxParts         = 64
	DefaultMaxTextBytes     = 1 << 20
	DefaultMaxFileBytes     = 4 << 20
	DefaultMaxMetadataBytes = 64 << 10
)

// The names of the limits as errors report them (metadata "limit"). They
// are the Caddyfile keys, so an operator reading a client's error report
// knows which setting to change; LimitMaxIDBytes names the fixed bound on
// a request id (1 KiB), which no setting changes.
const (
	LimitMaxParts         = "max_parts"
	LimitMaxTextBytes     = "max_text_size"
	LimitMaxFileBytes     = "max_file_size"
	LimitMaxMetadataBytes = "max_metadata_size"
	LimitMaxJSONDepth     = "max_json_depth"
	LimitMaxIDBytes       = "max_id_size"
)

// Fixed bounds on the identifiers and names a caller chooses. Each is
// copied into stored tasks, every stream frame and the agent's request, so
// an unbounded one multiplies: a 3 MB contextId made every event of its task
// 3 MB. They are not settings: no client needs more.
const (
	// maxIdentifierBytes bounds one identifier a caller chooses (messageId,
	// contextId, taskId, a reference task id, an extension URI, a media
	// type in acceptedOutputModes, tenant, a page token), as decoded.
	maxIdentifierBytes = 256
	// maxIdentifiers bounds an array of them (referenceTaskIds,
	// extensions, acceptedOutputModes).
	maxIdentifiers = 64
	// limitMaxIdentifierBytes and limitMaxIdentifiers name them in errors.
	limitMaxIdentifierBytes = "max_identifier_size"
	limitMaxIdentifiers     = "max_identifiers"
)

// DefaultLimits returns the limits used when none are configured.
func DefaultLimits() Limits {
	return Limits{
		MaxParts:         DefaultMaxParts,
		MaxTextBytes:     DefaultMaxTextBytes,
		MaxFileBytes:     DefaultMaxFileBytes,
		MaxMetadataBytes: DefaultMaxMetadataBytes,
	}
}

// WithDefaults returns l with every zero field set to its default.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits()
	if l.MaxParts == 0 {
		l.MaxParts = d.MaxParts
	}
	if l.MaxTextBytes == 0 {
		l.MaxTextBytes = d.MaxTextBytes
	}
	if l.MaxFileBytes == 0 {
		l.MaxFileBytes = d.MaxFileBytes
	}
	if l.MaxMetadataBytes == 0 {
		l.MaxMetadataBytes = d.MaxMetadataBytes
	}
	return l
}

// Validate reports a negative limit.
func (l Limits) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{
		{LimitMaxParts, l.MaxParts},
		{LimitMaxTextBytes, l.MaxTextBytes},
		{LimitMaxFileBytes, l.MaxFileBytes},
		{LimitMaxMetadataBytes, l.MaxMetadataBytes},
	} {
		if f.v < 0 {
			return errors.New("protocol: limit " + f.name + " must not be negative")
		}
	}
	return nil
}

// NewCodec returns the codec of v enforcing l (zero fields take their
// defaults), or nil for an unknown version.
func NewCodec(v Version, l Limits) Codec {
	var d dialect
	switch v {
	case V03:
		d = v03
	case V10:
		d = v10
	default:
		return nil
	}
	d.lim = l.WithDefaults()
	return dialectCodec{d: &d}
}

// limitError is the -32602 error for a field over a limit. The message and
// the violation name the limit, and the error metadata carries its name
// and value, so a client can tell a limit from a malformed request.
func limitError(field, desc, limit string, max int) *Error {
	e := invalidField(field, desc)
	e.Metadata = map[string]string{"limit": limit, "max": strconv.Itoa(max)}
	return e
}

// overBytes describes a size over a byte limit.
func overBytes(n int, limit string, max int) string {
	return "is " + strconv.Itoa(n) + " bytes, over the " + limit + " limit of " + strconv.Itoa(max) + " bytes"
}

// readID reads an identifier within maxIdentifierBytes. A literal longer
// than any escaping of the bound is refused before it is unquoted.
func readID(v []byte, parent, name string) (string, *Error) {
	s, n, e := readIDValue(v, parent, name)
	if n > 0 {
		return "", idTooLong(join(parent, name), n)
	}
	return s, e
}

// readIDValue is readID reporting an identifier over the bound by its
// size n (and no error), so that a caller names the field only then: the
// path of an array element is built on failure alone.
func readIDValue(v []byte, parent, name string) (s string, n int, e *Error) {
	if len(v) > 6*maxIdentifierBytes+2 { // every byte a \uXXXX escape, and the quotes
		return "", len(v), nil
	}
	s, e = readString(v, parent, name)
	if e == nil && len(s) > maxIdentifierBytes {
		return "", len(s), nil
	}
	return s, 0, e
}

// readIDs reads an array of identifiers: at most maxIdentifiers, each
// within maxIdentifierBytes.
func readIDs(v []byte, parent, name string) ([]string, *Error) {
	return readStrings(v, parent, name, "must be an array of strings", maxIdentifiers, func(field string) *Error {
		return limitError(field, "has more than "+strconv.Itoa(maxIdentifiers)+" entries (the "+limitMaxIdentifiers+" limit)",
			limitMaxIdentifiers, maxIdentifiers)
	}, func(el []byte, i int) (string, *Error) {
		if jsonwire.KindOf(el) != jsonwire.String {
			return "", invalidField(indexPath(join(parent, name), i), "must be a string")
		}
		s, n, e := readIDValue(el, parent, name)
		if n > 0 {
			return "", idTooLong(indexPath(join(parent, name), i), n)
		}
		return s, e
	})
}

func idTooLong(field string, n int) *Error {
	return limitError(field, overBytes(n, limitMaxIdentifierBytes, maxIdentifierBytes), limitMaxIdentifierBytes, maxIdentifierBytes)
}

// tooManyParts is the error for a parts array longer than MaxParts.
func (d *dialect) tooManyParts(field string) *Error {
	max := d.lim.MaxParts
	return limitError(field, "has more than "+strconv.Itoa(max)+" parts (the "+LimitMaxParts+" limit)", LimitMaxParts, max)
}

// checkMetadata bounds a metadata object as sent.
func (d *dialect) checkMetadata(v []byte, parent, name string) *Error {
	if len(v) > d.lim.MaxMetadataBytes {
		return limitError(join(parent, name), overBytes(len(v), LimitMaxMetadataBytes, d.lim.MaxMetadataBytes), LimitMaxMetadataBytes, d.lim.MaxMetadataBytes)
	}
	return nil
}

// readMetadata reads a metadata object within MaxMetadataBytes.
func (d *dialect) readMetadata(v []byte, parent, name string) ([]byte, *Error) {
	if e := d.checkMetadata(v, parent, name); e != nil {
		return nil, e
	}
	return readObject(v, parent, name)
}

// readText reads a text part's text within MaxTextBytes. The raw JSON
// string can only be longer than the text by its escapes, and the body is
// already bounded, so the length is checked on the unquoted text.
func (d *dialect) readText(v []byte, parent, name string) (string, *Error) {
	s, e := readString(v, parent, name)
	if e != nil {
		return "", e
	}
	if len(s) > d.lim.MaxTextBytes {
		return "", d.textTooLarge(join(parent, name), len(s))
	}
	return s, nil
}

// readFileBytes reads inline file bytes: the decoded size is computed from
// the base64 length and checked against MaxFileBytes before anything is
// decoded, so an oversized file costs no allocation of its size. Base64
// needs no JSON escapes, so the size is read off the JSON text itself when
// it has none, before even the text is copied.
func (d *dialect) readFileBytes(v []byte, parent, name string) ([]byte, *Error) {
	if jsonwire.KindOf(v) == jsonwire.String && bytes.IndexByte(v, '\\') < 0 {
		if n := base64DecodedLen(v[1 : len(v)-1]); n > d.lim.MaxFileBytes {
			return nil, d.fileTooLarge(join(parent, name), n)
		}
	}
	s, e := readString(v, parent, name)
	if e != nil {
		return nil, e
	}
	if n := base64DecodedLen(s); n > d.lim.MaxFileBytes {
		return nil, d.fileTooLarge(join(parent, name), n)
	}
	b, ok := DecodeBase64(s)
	if !ok {
		return nil, invalidField(join(parent, name), "must be base64")
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

func (d *dialect) fileTooLarge(field string, n int) *Error {
	return limitError(field, overBytes(n, LimitMaxFileBytes, d.lim.MaxFileBytes), LimitMaxFileBytes, d.lim.MaxFileBytes)
}

// base64DecodedLen is how many bytes s decodes to, padded or not (the
// padding is not counted). For input that DecodeBase64 refuses it is still
// an upper bound, which is all the limit needs.
func base64DecodedLen[T string | []byte](s T) int {
	n := len(s)
	for n > 0 && s[n-1] == '=' {
		n--
	}
	return base64.RawStdEncoding.DecodedLen(n)
}

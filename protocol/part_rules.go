package protocol

import (
	"net/url"
	"strings"
)

// An agent's output is made outside the codecs, so no decoder held it to
// anything on the way in. The functions below hold it to the rules the
// codecs hold a caller's message to, with the same limits, defaults,
// names and descriptions (so a limit means one thing whoever made the
// part), and to what a client may safely take from a part it is handed.

// CheckParts holds parts that did not come through a codec to the limits
// the codecs enforce on a caller's message: at most MaxParts of them, and
// each within CheckPart's limits. Zero fields of l take their defaults.
// field names the list in the error (e.g. "artifact.parts").
func (l Limits) CheckParts(parts []Part, field string) *Error {
	d := dialect{lim: l.WithDefaults()}
	if len(parts) > d.lim.MaxParts {
		return d.tooManyParts(field)
	}
	for i := range parts {
		if e := d.checkPart(&parts[i], indexPath(field, i)); e != nil {
			return e
		}
	}
	return nil
}

// CheckPart holds one part that did not come through a codec to the
// limits a codec holds each part of a caller's message to: its text
// within MaxTextBytes, its inline file within MaxFileBytes, its metadata
// within MaxMetadataBytes. The error is the -32602 a caller gets for the
// same part, naming the limit; field is the part's path ("" for none).
func (l Limits) CheckPart(p *Part, field string) *Error {
	d := dialect{lim: l.WithDefaults()}
	return d.checkPart(p, field)
}

func (d *dialect) checkPart(p *Part, field string) *Error {
	if len(p.Text) > d.lim.MaxTextBytes {
		return d.textTooLarge(join(field, "text"), len(p.Text))
	}
	if len(p.Raw) > d.lim.MaxFileBytes {
		return d.fileTooLarge(join(field, "file"), len(p.Raw))
	}
	if len(p.Metadata) > 0 {
		return d.checkMetadata(p.Metadata, field, "metadata")
	}
	return nil
}

// textTooLarge is the error for a text part over MaxTextBytes.
func (d *dialect) textTooLarge(field string, n int) *Error {
	return limitError(field, overBytes(n, LimitMaxTextBytes, d.lim.MaxTextBytes), LimitMaxTextBytes, d.lim.MaxTextBytes)
}

// CheckOutputPart holds a part an agent made to what a client may safely
// take from it, before it is stored or relayed: a client may put the
// media type in a header, follow or render the URL, and save the file
// under its name. So the media type is one mime.ParseMediaType reads
// (type/subtype) with no control character; a file URL is an absolute
// http or https URL with a host and no user info, or a data: URL, with no
// space or control character; a file name is a base name (no / or \, not
// "." or "..") with no control character. The error is -32602 naming the
// field; field is the part's path ("" for none).
func CheckOutputPart(p *Part, field string) *Error {
	if p.MediaType != "" && !validMediaType(p.MediaType) {
		return invalidField(join(field, "mediaType"), "must be a media type without control characters")
	}
	if p.URL != "" && !validFileURL(p.URL) {
		return invalidField(join(field, "url"), "must be an absolute http or https URL with a host and no user info, or a data: URL")
	}
	if p.Filename != "" && !validBaseName(p.Filename) {
		return invalidField(join(field, "filename"), `must be a base name (no "/" or "\", not "." or "..", no control characters)`)
	}
	return nil
}

// validMediaType reports whether s is a media type (type/subtype, with
// optional parameters) and holds no control character. The second test
// is not redundant: mime.ParseMediaType drops some control characters
// inside quoted parameter values instead of refusing them.
func validMediaType(s string) bool {
	return !hasControl(s, false) && isMediaType(s)
}

// validFileURL accepts the file URLs a client may follow: http(s) as the
// card's own URLs are checked, and data: URLs (content inline, fetched
// from nowhere). Anything else (javascript:, file:, a relative reference)
// is refused.
func validFileURL(s string) bool {
	if hasControl(s, true) {
		return false
	}
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "http", "https":
		return checkHTTPURL(s) == nil
	case "data":
		// data:[<media type>][;base64],<data>
		return strings.IndexByte(u.Opaque, ',') >= 0
	}
	return false
}

// validBaseName accepts a file name that names no directory: saved as it
// is, it lands where the client saves files, and nowhere else.
func validBaseName(s string) bool {
	return s != "." && s != ".." && !strings.ContainsAny(s, `/\`) && !hasControl(s, false)
}

// hasControl reports whether s holds an ASCII control character (or,
// with space set, a space).
func hasControl(s string, space bool) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || space && c == ' ' {
			return true
		}
	}
	return false
}

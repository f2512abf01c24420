package protocol

import "strings"

// BaseMediaType is a media type without its parameters, trimmed and
// lower-cased ("Text/Plain; charset=utf-8" is "text/plain"): what a part's
// type and an input mode are compared as.
func BaseMediaType(s string) string {
	if i := strings.IndexByte(s, ';'); i >= 0 {
		s = s[:i]
	}
	return strings.ToLower(strings.TrimSpace(s))
}

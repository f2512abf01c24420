package protocol

import (
	"encoding/base64"
	"strings"
)

// decodeBase64 decodes file bytes leniently, in every form the two
// versions' senders produce: ProtoJSON writes standard base64 with
// padding but parsers must also take the URL-safe alphabet and unpadded
// input. Padding, when present, is dropped rather than checked, and an
// input that mixes the two alphabets is rejected.
func decodeBase64(s string) ([]byte, bool) {
	s = strings.TrimRight(s, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(s, "-_") {
		if strings.ContainsAny(s, "+/") {
			return nil, false
		}
		enc = base64.RawURLEncoding
	}
	b, err := enc.DecodeString(s)
	if err != nil {
		return nil, false
	}
	return b, true
}

// appendBase64 appends b as a quoted standard, padded base64 string, the
// form both versions document.
func appendBase64(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

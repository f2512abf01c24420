package protocol

import "encoding/base64"

// DecodeBase64 decodes the base64 text of a bytes value: a 1.0 part's raw,
// a 0.3 file's bytes, and the file bytes an agent sends (the agent
// contract writes them the same way), so that one text means the same
// bytes, or is refused the same way, whoever sent it.
//
// The rule is ProtoJSON's for bytes, which 1.0 adopts and 0.3 (whose
// schema only says "base64-encoded") does not contradict: RFC 4648 base64
// in the standard (§4) or the URL-safe (§5) alphabet, not both in one
// value, either padded to a multiple of four characters or not padded at
// all (§3.2). Go's protojson, and with it a2a-go's gRPC types, reads
// exactly this. a2a-go's JSON types (encoding/json's []byte) read only the
// padded standard form, which is what a2a-go and a2a-js write and what
// this server writes (appendBase64). a2a-js reads with Node's
// Buffer.from, which skips whatever is not base64, so it is no guide to
// what is valid.
//
// Refused: partial padding ("QQ=", which no encoder writes: it is a value
// cut short or mangled), padding before the end, and whitespace, line
// breaks included: RFC 4648 §3.3 asks a decoder to refuse characters
// outside the alphabet unless the format allows them, and ProtoJSON does
// not (Go's decoder would skip CR and LF silently, so they are refused
// before it runs). Unused bits set in the last character ("QR==") are
// accepted, as §3.5 allows and every decoder named above does.
func DecodeBase64(s string) ([]byte, bool) {
	urlSafe, std := false, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '-', '_':
			urlSafe = true
		case '+', '/':
			std = true
		case '\r', '\n':
			return nil, false
		}
	}
	if urlSafe && std {
		return nil, false
	}
	// The four encodings are chosen, not derived with WithPadding, which
	// would allocate a copy of the encoding on every call.
	var enc *base64.Encoding
	switch padded := len(s)%4 == 0; {
	case urlSafe && padded:
		enc = base64.URLEncoding
	case urlSafe:
		enc = base64.RawURLEncoding
	case padded:
		enc = base64.StdEncoding
	default:
		enc = base64.RawStdEncoding
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

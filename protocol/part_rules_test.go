package protocol

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"testing"
)

// TestCheckPartsMatchesTheCodec: a part over a limit gets from CheckParts
// the error a caller's message with the same part gets from the codec
// (code, description, limit metadata), so agent output and caller input
// are held to one rule.
func TestCheckPartsMatchesTheCodec(t *testing.T) {
	l := Limits{MaxParts: 2, MaxTextBytes: 4, MaxFileBytes: 3, MaxMetadataBytes: 10}
	raw := base64.StdEncoding.EncodeToString([]byte("abcd"))
	for _, tc := range []struct {
		name  string
		wire  string // the parts as a 1.0 caller sends them
		parts []Part
	}{
		{"text", `[{"text":"abcde"}]`, []Part{{Kind: PartText, Text: "abcde"}}},
		{"file", `[{"raw":"` + raw + `"}]`, []Part{{Kind: PartFile, Raw: []byte("abcd")}}},
		{"metadata", `[{"text":"a","metadata":{"k":"0123456"}}]`, []Part{{Kind: PartText, Text: "a", Metadata: json.RawMessage(`{"k":"0123456"}`)}}},
		{"parts", `[{"text":"a"},{"text":"b"},{"text":"c"}]`, []Part{{Kind: PartText, Text: "a"}, {Kind: PartText, Text: "b"}, {Kind: PartText, Text: "c"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params := `{"message":{"messageId":"m","role":"ROLE_USER","parts":` + tc.wire + `}}`
			_, err := NewCodec(V10, l).DecodeSend(json.RawMessage(params))
			want, ok := err.(*Error)
			if !ok {
				t.Fatalf("codec: %v", err)
			}
			got := l.CheckParts(tc.parts, "message.parts")
			// The field paths differ only where the versions name the
			// member differently (1.0 "raw", 0.3 "file.bytes"; the
			// neutral "file" here).
			if got == nil || got.Code != want.Code || !reflect.DeepEqual(got.Metadata, want.Metadata) ||
				len(got.Violations) != 1 || len(want.Violations) != 1 || got.Violations[0].Description != want.Violations[0].Description {
				t.Fatalf("CheckParts %+v, codec %+v", got, want)
			}
			if e := l.CheckParts(tc.parts[:1], "message.parts"); tc.name == "parts" && e != nil {
				t.Fatalf("one part: %v", e)
			}
		})
	}
}

// TestCheckOutputPart: the media type, URL and file name rules of agent
// output, each at its edge.
func TestCheckOutputPart(t *testing.T) {
	for _, tc := range []struct {
		part  Part
		field string // "" : accepted
	}{
		{Part{MediaType: "text/plain; charset=utf-8", URL: "https://x.example/a?b#c", Filename: "a b.txt"}, ""},
		{Part{URL: "data:,hi", Filename: "..a"}, ""},
		{Part{URL: "HTTP://X.example/"}, ""},
		{Part{MediaType: "text/plain\r\nX: y"}, "f.mediaType"},
		{Part{MediaType: "text/plain; q=\"\x01\""}, "f.mediaType"},
		{Part{MediaType: "text/plain\x7f"}, "f.mediaType"},
		{Part{MediaType: "text"}, "f.mediaType"},
		{Part{URL: "javascript:alert(1)"}, "f.url"},
		{Part{URL: "JavaScript:alert(1)"}, "f.url"},
		{Part{URL: "vbscript:x"}, "f.url"},
		{Part{URL: "file:///etc/passwd"}, "f.url"},
		{Part{URL: "//x.example/a"}, "f.url"},
		{Part{URL: "https://u:p@x.example/"}, "f.url"},
		{Part{URL: "https://x.example/a\tb"}, "f.url"},
		{Part{URL: "data:text/plain"}, "f.url"},
		{Part{Filename: "a/b"}, "f.filename"},
		{Part{Filename: `a\b`}, "f.filename"},
		{Part{Filename: "."}, "f.filename"},
		{Part{Filename: "a\nb"}, "f.filename"},
	} {
		e := CheckOutputPart(&tc.part, "f")
		switch {
		case tc.field == "" && e != nil:
			t.Errorf("%+v refused: %v", tc.part, e)
		case tc.field != "" && (e == nil || e.Code != CodeInvalidParams || len(e.Violations) != 1 || e.Violations[0].Field != tc.field):
			t.Errorf("%+v: %+v, want a violation of %s", tc.part, e, tc.field)
		}
	}
}

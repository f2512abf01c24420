package jsonwire

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// stdString is encoding/json's rendering of s without HTML escaping, the
// reference AppendString must match.
func stdString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	inputs := []string{"", "plain", `q"uote\back`, "<a>&</a>", "\x00\x01\x1f\x7f", "\n\r\t\b\f", "é日本🎉",
		"\u2028\u2029", "bad\xffutf8\xc3", "\xed\xa0\x80 surrogate", "trailing\xe2\x82"}
	for _, s := range inputs {
		got := string(AppendString(nil, s))
		if got != stdString(s) {
			t.Errorf("AppendString(%q) = %s, encoding/json %s", s, got, stdString(s))
		}
		if !json.Valid([]byte(got)) || !utf8.ValidString(got) {
			t.Errorf("%q: invalid output %s", s, got)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"a", "\u2028", "\xff", `"\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendString(nil, s)
		if string(got) != stdString(s) {
			t.Fatalf("%q: %s vs %s", s, got, stdString(s))
		}
	})
}

func TestAppendRawJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, `null`},
		{`{"a":1}`, `{"a":1}`},
		{"  {\"a\": 1}  ", `{"a": 1}`},
		{"{\n  \"a\": [1,\r\n 2]\n}", `{"a":[1,2]}`},
		{`{"a":`, `null`},
		{`nope`, `null`},
		{"{\"a\":\"\xff\"}", `{"a":"` + "\ufffd" + `"}`},
		{`{"big":12345678901234567890}`, `{"big":12345678901234567890}`},
		{"{\"big\":12345678901234567890,\"s\":\"\xff\"}", `{"big":12345678901234567890,"s":"` + "\ufffd" + `"}`},
		{`"str"`, `"str"`},
	}
	for _, tt := range tests {
		got := AppendRaw(nil, []byte(tt.in))
		if string(got) != tt.want {
			t.Errorf("AppendRaw(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if !json.Valid(got) || !utf8.Valid(got) || bytes.ContainsAny(got, "\r\n") {
			t.Errorf("AppendRaw(%q) not one line of valid JSON: %q", tt.in, got)
		}
	}
}

package protocol

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
	"unicode/utf8"
)

// stdString is encoding/json's rendering of s without HTML escaping, the
// reference appendString must match.
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
		got := string(appendString(nil, s))
		if got != stdString(s) {
			t.Errorf("appendString(%q) = %s, encoding/json %s", s, got, stdString(s))
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
		got := appendString(nil, s)
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
		got := appendRawJSON(nil, []byte(tt.in))
		if string(got) != tt.want {
			t.Errorf("appendRawJSON(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if !json.Valid(got) || !utf8.Valid(got) || bytes.ContainsAny(got, "\r\n") {
			t.Errorf("appendRawJSON(%q) not one line of valid JSON: %q", tt.in, got)
		}
	}
}

func TestTimestamps(t *testing.T) {
	loc := time.FixedZone("x", 2*3600)
	if got := string(appendTimestamp(nil, time.Date(2026, 1, 2, 5, 4, 5, 999999999, loc))); got != `"2026-01-02T03:04:05.999Z"` {
		t.Errorf("got %s", got)
	}
	if got := string(appendTimestamp(nil, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))); got != `"2026-01-02T03:04:05.000Z"` {
		t.Errorf("got %s", got)
	}
	want := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, s := range []string{"2026-01-02T03:04:05Z", "2026-01-02T03:04:05.000Z", "2026-01-02T05:04:05+02:00", "2026-01-02T03:04:05+00:00", "2026-01-02T03:04:05", "2026-01-02 03:04:05Z"} {
		got, ok := parseTimestamp(s)
		if !ok || !got.Equal(want) {
			t.Errorf("parseTimestamp(%q) = %v %v", s, got, ok)
		}
	}
	for _, s := range []string{"", "2026-01-02", "yesterday", "2026-13-02T03:04:05Z"} {
		if _, ok := parseTimestamp(s); ok {
			t.Errorf("parseTimestamp(%q) accepted", s)
		}
	}
}

func TestDecodeBase64(t *testing.T) {
	want := []byte{0xfb, 0xff, 0xfe, 'a'}
	for _, s := range []string{"+//+YQ==", "+//+YQ", "-__-YQ==", "-__-YQ", "+//+YQ="} {
		got, ok := decodeBase64(s)
		if !ok || !bytes.Equal(got, want) {
			t.Errorf("decodeBase64(%q) = %v %v", s, got, ok)
		}
	}
	for _, s := range []string{"+_", "a", "QQ=x", "Q Q==", "%%"} {
		if _, ok := decodeBase64(s); ok {
			t.Errorf("decodeBase64(%q) accepted", s)
		}
	}
	if got := string(appendBase64(nil, want)); got != `"+//+YQ=="` {
		t.Errorf("appendBase64 = %s", got)
	}
}

func TestScannersTolerateMalformedInput(t *testing.T) {
	for _, in := range []string{`{`, `{"a"`, `{"a":`, `{"a":1`, `{"a" 1}`, `{1:2}`, `{"a":"x`, `[1,`, `[`, `{"a":[}`, `{"a\":1}`} {
		it := newObjIter([]byte(in))
		for n := 0; n < 10; n++ {
			if _, _, ok := it.next(); !ok {
				break
			}
		}
		ai := newArrIter([]byte(in))
		for n := 0; n < 10; n++ {
			if _, ok := ai.next(); !ok {
				break
			}
		}
	}
}

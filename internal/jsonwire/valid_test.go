package jsonwire

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// refDepth is the nesting depth of valid JSON, by a plain recursive walk
// over the decoded value.
func refDepth(v any) int {
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			d = max(d, refDepth(e))
		}
		return d + 1
	case []any:
		for _, e := range x {
			d = max(d, refDepth(e))
		}
		return d + 1
	}
	return 0
}

func checkValidJSON(t *testing.T, in []byte) {
	t.Helper()
	depth, ok := Valid(in)
	// json.Valid does not look at the bytes inside strings; Valid
	// also requires UTF-8.
	if want := json.Valid(in) && utf8.Valid(in); ok != want {
		t.Fatalf("Valid(%q) = %v, json.Valid and utf8.Valid %v", in, ok, want)
	}
	if !ok {
		return
	}
	var v any
	if err := json.Unmarshal(in, &v); err != nil {
		return // beyond encoding/json's own depth limit
	}
	if want := refDepth(v); depth != want {
		t.Fatalf("Valid(%q) depth %d, want %d", in, depth, want)
	}
}

var validJSONSeeds = []string{
	``, ` `, `{}`, `[]`, `[[]]`, `{"a":[{"b":{}}]}`, `1`, `-0`, `-0.5e+10`, `01`, `1.`, `.5`, `1e`, `-`, `--1`,
	`"a\u00e9\n"`, `"\u12"`, `"\x"`, "\"\t\"", `"\/"`, `true`, `tru`, `nul`, `null `, ` null x`, `[1,]`, `[,1]`,
	`{"a"}`, `{"a":}`, `{"a":1,}`, `{,"a":1}`, `{"a" : 1 , "b" : [ true , false , null ] }`, `{1:2}`, `[}`, `{]`,
	`{"a":1}}`, `[1]]`, "\xff", `"\xff"`, strings.Repeat("[", 70) + strings.Repeat("]", 70), `[1 2]`, `{"a":1 "b":2}`,
	"{\"a\":\"\x7f\"}", "{\"k\xff\":1}", "[\"\xed\xa0\x80\"]", "\"\xe2\x82\"", "\"é\u00e9\"", `1E5`, `1e-0`, `[-]`, `["a",{"b":["c"]}]`,
}

func TestValidJSON(t *testing.T) {
	for _, s := range validJSONSeeds {
		checkValidJSON(t, []byte(s))
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, s := range validJSONSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkValidJSON(t, in) })
}

// TestValidDepth is the depth any document reports, wherever it comes
// from (a request body, an agent's event).
func TestValidDepth(t *testing.T) {
	for _, tc := range []struct {
		in    string
		depth int
		ok    bool
	}{
		{`1`, 0, true}, {` {"a":[{}]} `, 3, true}, {strings.Repeat("[", 100) + strings.Repeat("]", 100), 100, true}, {`[1,]`, 0, false}, {`{} {}`, 0, false},
	} {
		if d, ok := Valid([]byte(tc.in)); ok != tc.ok || ok && d != tc.depth {
			t.Errorf("%.20s: %d %v, want %d %v", tc.in, d, ok, tc.depth, tc.ok)
		}
	}
}

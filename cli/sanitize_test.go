package cli

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	for _, c := range []struct {
		in, line, multi string
	}{
		{"plain text, ünïcödé, 日本語, emoji 👩‍👩‍👧", "plain text, ünïcödé, 日本語, emoji 👩‍👩‍👧", "plain text, ünïcödé, 日本語, emoji 👩‍👩‍👧"},
		{"two\nlines\tand a tab", `two\nlines\tand a tab`, "two\nlines\tand a tab"},
		{"crlf\r\nline", `crlf\r\nline`, "crlf\nline"},
		{"over\rwrite", `over\rwrite`, `over\rwrite`},
		// OSC 52 (clipboard), CSI (clear screen, cursor up), OSC 8 (link).
		{"\x1b]52;c;ZXZpbA==\x07", `\x1b]52;c;ZXZpbA==\x07`, `\x1b]52;c;ZXZpbA==\x07`},
		{"\x1b[2J\x1b[1AProblems:     none", `\x1b[2J\x1b[1AProblems:     none`, `\x1b[2J\x1b[1AProblems:     none`},
		{"\x1b]8;;https://evil\x1b\\docs\x1b]8;;\x1b\\", `\x1b]8;;https://evil\x1b\docs\x1b]8;;\x1b\`, `\x1b]8;;https://evil\x1b\docs\x1b]8;;\x1b\`},
		{"nul\x00 del\x7f", `nul\x00 del\x7f`, `nul\x00 del\x7f`},
		// C1: CSI as one code point, and NEL.
		{"\u009b2J\u0085", `\u009b2J\u0085`, `\u009b2J\u0085`},
		// Bidi: RLO, LRI, PDI, ALM, RLM.
		{"a\u202etxt.exe\u2066b\u2069\u061c\u200f", `a\u202etxt.exe\u2066b\u2069\u061c\u200f`, `a\u202etxt.exe\u2066b\u2069\u061c\u200f`},
		// Bytes that are not UTF-8; U+FFFD itself is text.
		{"bad\xff\xc0 \ufffd", `bad\xff\xc0 ` + "\ufffd", `bad\xff\xc0 ` + "\ufffd"},
		{`already \x1b escaped`, `already \x1b escaped`, `already \x1b escaped`},
	} {
		if got := sanitize(c.in, false); got != c.line {
			t.Errorf("sanitize(%q, one line) = %q, want %q", c.in, got, c.line)
		}
		if got := sanitize(c.in, true); got != c.multi {
			t.Errorf("sanitize(%q, multi-line) = %q, want %q", c.in, got, c.multi)
		}
	}
}

// FuzzSanitize holds sanitize to its promise for any input: nothing that
// drives a terminal or reorders text is left, text that has none is
// unchanged, and sanitizing twice is sanitizing once.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"", "hello", "a\nb\tc\r\nd\re", "\x1b]52;c;eA==\x07", "\x1b[2J", "\u009b\u0085\u202e\u2066", "\xff\xfe", "日本\u200d語", `\x1b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, multi := range []bool{false, true} {
			out := sanitize(in, multi)
			if !utf8.ValidString(out) {
				t.Fatalf("sanitize(%q, %v) = %q: not UTF-8", in, multi, out)
			}
			for i := 0; i < len(out); i++ {
				b := out[i]
				if (b < 0x20 && !(multi && (b == '\n' || b == '\t'))) || b == 0x7f {
					t.Fatalf("sanitize(%q, %v) = %q: byte %#x at %d", in, multi, out, b, i)
				}
			}
			for _, r := range out {
				if (r >= 0x80 && r <= 0x9f) || unicode.Is(unicode.Bidi_Control, r) {
					t.Fatalf("sanitize(%q, %v) = %q: %U", in, multi, out, r)
				}
			}
			if again := sanitize(out, multi); again != out {
				t.Fatalf("sanitize is not idempotent: %q, then %q", out, again)
			}
			if printable(in, multi) && out != in {
				t.Fatalf("sanitize(%q, %v) = %q: printable text changed", in, multi, out)
			}
		}
	})
}

// printable is text sanitize must leave alone: UTF-8 with no control
// (but, in multi-line text, newlines and tabs) and no bidi control.
func printable(s string, multi bool) bool {
	if !utf8.ValidString(s) {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool {
		if multi && (r == '\n' || r == '\t') {
			return false
		}
		return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
	})
}

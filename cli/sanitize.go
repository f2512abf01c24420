package cli

import (
	"fmt"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"
)

// text marks a printf argument as multi-line agent text (artifacts,
// messages, status notes): its newlines and tabs stay as they are.
// Every other string argument is shown on one line.
type text string

// sanitize is how every string a server sent is shown to a person: a
// hostile card or agent must not be able to drive the terminal (OSC 52
// writes the clipboard, CSI clears or rewrites the screen to fake a
// "Problems: none", OSC 8 disguises links) nor reorder what is read
// (bidi overrides). So C0 controls, DEL, C1 controls (U+0080–U+009F),
// bidi controls and bytes that are not UTF-8 are written as Go escapes:
// \n, \r, \t, \xNN for the other C0 controls, DEL and stray bytes,
// \uNNNN for C1 and bidi controls. multiline keeps \n and \t (a CRLF
// becomes \n) for text meant to span lines; a lone \r is escaped either
// way, as it would overwrite the line. A backslash is not escaped: the
// output is for reading, and that keeps it idempotent.
func sanitize(s string, multiline bool) string {
	i := firstUnsafe(s, multiline)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case multiline && r == '\r' && strings.HasPrefix(s[i+1:], "\n"):
			// The newline that follows is written alone.
		case !unsafeRune(r, multiline):
			b.WriteString(s[i : i+n])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}

// firstUnsafe is the index of the first byte sanitize changes, or
// len(s): most text has none and is returned as it is.
func firstUnsafe(s string, multiline bool) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return i
			}
		}
		if unsafeRune(r, multiline) {
			return i
		}
	}
	return len(s)
}

func unsafeRune(r rune, multiline bool) bool {
	if multiline && (r == '\n' || r == '\t') {
		return false
	}
	return r < 0x20 || (r >= 0x7f && r <= 0x9f) || unicode.Is(unicode.Bidi_Control, r)
}

// shown is args as printf and errorf print them: every string (any type
// whose kind is string, and every error's text) sanitized, on one line
// unless it is text. Everything printed for a person goes through here,
// so no server string can reach the terminal raw; --json output does
// not (Options.raw).
func shown(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case text:
			out[i] = sanitize(string(v), true)
		case error:
			out[i] = sanitize(v.Error(), false)
		case string:
			out[i] = sanitize(v, false)
		default:
			if rv := reflect.ValueOf(a); rv.Kind() == reflect.String {
				out[i] = sanitize(rv.String(), false)
			} else {
				out[i] = a
			}
		}
	}
	return out
}

package jsonwire

import "unicode/utf8"

// Valid reports whether b is exactly one JSON value (with optional
// surrounding whitespace), by the same rules as json.Valid and, unlike it,
// in valid UTF-8 (RFC 8259 §8.1), and how deeply it nests arrays and
// objects. Invalid UTF-8 is refused rather than read: encoding/json would
// turn it into U+FFFD in the strings it decodes, while a data part or
// metadata object passed through as sent would keep the raw bytes, so the
// agent and the caller would read two different documents. It is one pass
// with no allocation for documents up to 64 levels deep, so a reader can
// check validity and depth together before anything recurses into the
// document; it also runs several times faster than json.Valid, which
// matters on every request.
func Valid(b []byte) (depth int, ok bool) {
	var stackBuf [64]byte
	stack := stackBuf[:0] // the open containers, '{' or '['
	i := skipSpace(b, 0)
	for {
		// A value starts at i.
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case '{', '[':
			open := b[i]
			stack = append(stack, open)
			if len(stack) > depth {
				depth = len(stack)
			}
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == open+2 { // '}' or ']'
				stack = stack[:len(stack)-1]
				i++
				break
			}
			if open == '{' {
				if i = scanKey(b, i); i < 0 {
					return 0, false
				}
			}
			continue
		case '"':
			if i = scanString(b, i); i < 0 {
				return 0, false
			}
		case 't':
			if i = scanLiteral(b, i, "true"); i < 0 {
				return 0, false
			}
		case 'f':
			if i = scanLiteral(b, i, "false"); i < 0 {
				return 0, false
			}
		case 'n':
			if i = scanLiteral(b, i, "null"); i < 0 {
				return 0, false
			}
		default:
			if i = scanNumber(b, i); i < 0 {
				return 0, false
			}
		}
		// A value ended at i: close containers or move to the next member.
		for {
			i = skipSpace(b, i)
			if len(stack) == 0 {
				return depth, i == len(b)
			}
			if i >= len(b) {
				return 0, false
			}
			top := stack[len(stack)-1]
			c := b[i]
			if c == top+2 {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if c != ',' {
				return 0, false
			}
			i = skipSpace(b, i+1)
			if top == '{' {
				if i = scanKey(b, i); i < 0 {
					return 0, false
				}
			}
			break
		}
	}
}

// scanKey reads `"key" :` and the whitespace after it, returning the index
// of the member's value, or -1.
func scanKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = scanString(b, i); i < 0 {
		return -1
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipSpace(b, i+1)
}

// scanString reads the string literal at b[i] and returns the index after
// it, or -1. Like json.Valid it checks escapes and control characters;
// unlike it, it also refuses invalid UTF-8 (see Valid).
func scanString(b []byte, i int) int {
	for j := i + 1; j < len(b); {
		c := b[j]
		switch {
		case c == '"':
			return j + 1
		case c < 0x20:
			return -1
		case c == '\\':
			if j+1 >= len(b) {
				return -1
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(b) {
					return -1
				}
				for _, h := range b[j+2 : j+6] {
					if !isHex(h) {
						return -1
					}
				}
				j += 6
			default:
				return -1
			}
		case c < utf8.RuneSelf:
			j++
		default:
			r, n := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && n == 1 {
				return -1
			}
			j += n
		}
	}
	return -1
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func scanLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// scanNumber reads -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?.
func scanNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return -1
	}
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

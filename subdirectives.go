package caddya2a

import (
	"slices"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// unknownSubdirective is the parser's error for key, which is none of the
// subdirectives known in the block (kind names it in the message: "" for
// the a2a block itself, "skill", "limits", …). A key one typo away from a
// known one (a letter added, dropped or changed, or two neighbours
// swapped) gets that one suggested.
func unknownSubdirective(d *caddyfile.Dispenser, kind, key string, known []string) error {
	if kind != "" {
		kind += " "
	}
	for _, k := range known {
		if oneEditApart(key, k) {
			return d.Errf("unknown %ssubdirective %q (did you mean %q?)", kind, key, k)
		}
	}
	return d.Errf("unknown %ssubdirective %q", kind, key)
}

// oneEditApart reports whether a and b differ by exactly one insertion,
// deletion or substitution of a byte, or by one swap of adjacent bytes
// (subdirective names are ASCII).
func oneEditApart(a, b string) bool {
	if a == b {
		return false
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	switch len(b) - len(a) {
	case 0:
		i := 0
		for i < len(a) && a[i] == b[i] {
			i++
		}
		// One substitution, or a swap of i and i+1.
		if a[i+1:] == b[i+1:] {
			return true
		}
		return i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:]
	case 1:
		i := 0
		for i < len(a) && a[i] == b[i] {
			i++
		}
		return a[i:] == b[i+1:]
	}
	return false
}

// sortedKeys lists the keys of m in order, for a stable suggestion.
func sortedKeys[V any](maps ...map[string]V) []string {
	var keys []string
	for _, m := range maps {
		for k := range m {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// subdirectives calls each for every subdirective of the block d is at,
// after refusing a key given twice (naming its first line) unless it is
// one of the repeatable keys. kind names the block in the message, as for
// unknownSubdirective. Every block the module parses is walked here, so
// they all refuse repeats the same way.
func subdirectives(d *caddyfile.Dispenser, kind string, repeatable []string, each func(key string) error) error {
	if kind != "" {
		kind += " "
	}
	seen := map[string]int{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		key := d.Val()
		if !slices.Contains(repeatable, key) {
			if line, dup := seen[key]; dup {
				return d.Errf("duplicate %ssubdirective %q (first at line %d)", kind, key, line)
			}
			seen[key] = d.Line()
		}
		if err := each(key); err != nil {
			return err
		}
	}
	return nil
}

package a2aagent

import (
	"strings"
	"testing"
)

// FuzzParseOrigin: whatever the config writes, an origin read is
// scheme://host:port (http or https, the port always given, nothing
// after it) and reads back as itself, so that two spellings of one
// origin compare equal and no path or credentials ride along.
func FuzzParseOrigin(f *testing.F) {
	for _, seed := range []string{
		"http://a", "http://a:80", "HTTPS://Agent.Example:443/", "https://[::1]:8443", "http://user@a",
		"http://a/path", "http://a?q", "ftp://a", "http://", "//a", "http://a:99999", "http://[fe80::1%25eth0]:8080",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseOrigin(s)
		if err != nil {
			return
		}
		scheme, rest, ok := strings.Cut(o, "://")
		if !ok || (scheme != "http" && scheme != "https") || strings.ContainsAny(rest, "/?#@") {
			t.Fatalf("%q read as %q: not scheme://host:port", s, o)
		}
		if again, err := ParseOrigin(o); err != nil || again != o {
			t.Fatalf("%q read as %q, which reads as %q (%v)", s, o, again, err)
		}
	})
}

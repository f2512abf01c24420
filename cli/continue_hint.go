package cli

import (
	"strings"
)

// The flags a command was given that decide whom it reaches as whom
// (--user, -H, --trust-origin), kept in the order given so that the
// hint to continue a task can repeat them: without them the command it
// prints gets a 401. Secrets are masked: the hint lands in terminals,
// logs and bug reports.

// noteFlag keeps one such flag, already masked, for the hint.
func (o *Options) noteFlag(flag, value string) {
	o.given = append(o.given, flag+" "+shellQuote(value))
}

// givenFlags are the noted flags as a command line spells them, each
// after a space, or "".
func (o *Options) givenFlags() string {
	if len(o.given) == 0 {
		return ""
	}
	return " " + strings.Join(o.given, " ")
}

// maskUser is --user's name:password with the password masked.
func maskUser(userPass string) string {
	name, _, _ := strings.Cut(userPass, ":")
	return name + ":…"
}

// maskHeader is a -H value with its secret masked when the field
// carries one: an Authorization's credentials (its scheme kept), each
// cookie's value (its name kept), a field named for a key, token or
// secret whole.
func maskHeader(name, value string) string {
	n := strings.ToLower(name)
	switch {
	case strings.HasSuffix(n, "authorization"):
		if scheme, _, ok := strings.Cut(value, " "); ok {
			return scheme + " …"
		}
		return "…"
	case n == "cookie":
		var b []string
		for _, c := range strings.Split(value, ";") {
			k, _, _ := strings.Cut(strings.TrimSpace(c), "=")
			b = append(b, k+"=…")
		}
		return strings.Join(b, "; ")
	case strings.Contains(n, "key"), strings.Contains(n, "token"), strings.Contains(n, "secret"):
		return "…"
	}
	return value
}

// shellQuote is s as a POSIX shell reads it back: bare when it holds
// nothing the shell treats specially, else in single quotes.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@%+=,…") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

package pgstore

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// maxIdent is PostgreSQL's bound on an identifier (NAMEDATALEN - 1).
const maxIdent = 63

// CheckSchema accepts a schema name of 1 to 63 bytes of letters, digits
// and _ (not starting with a digit): quoted, it names the same schema in
// every statement, and it fits the server's identifiers untruncated.
func CheckSchema(name string) error {
	if name == "" || len(name) > maxIdent {
		return fmt.Errorf("pgstore: schema %q: want 1 to %d bytes", name, maxIdent)
	}
	for i, c := range name {
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return fmt.Errorf("pgstore: schema %q: want letters, digits and _ (not a digit first)", name)
		}
	}
	return nil
}

// CheckDSN checks that dsn is one the driver can use, and returns it as
// errors and logs may show it: the password replaced by xxxxx, in a URL
// (its user info or a password= parameter) as in keyword=value form.
func CheckDSN(dsn string) (string, error) {
	redacted := RedactDSN(dsn)
	if strings.TrimSpace(dsn) == "" {
		return "", errors.New("pgstore: empty DSN")
	}
	if _, err := pgconn.ParseConfig(dsn); err != nil {
		// The driver's message may quote the DSN: say nothing of it.
		return "", fmt.Errorf("pgstore: malformed DSN %s", redacted)
	}
	return redacted, nil
}

// kvPassword is a password in keyword=value form, quoted or not.
var kvPassword = regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s]*)`)

// RedactDSN returns dsn with its password replaced by xxxxx.
func RedactDSN(dsn string) string {
	// Any URL, not only postgres:// ones: a wrong scheme's error quotes
	// it too.
	if strings.Contains(dsn, "://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "(malformed URL)"
		}
		q := u.Query()
		if q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.Redacted()
	}
	return kvPassword.ReplaceAllString(dsn, "${1}xxxxx")
}

// scrub makes sure err's text holds no password of the DSN: the driver
// is not expected to quote it, but one that did would reach a log.
func (s *Store) scrub(err error) error {
	if err == nil || s.password == "" || !strings.Contains(err.Error(), s.password) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), s.password, "xxxxx"))
}

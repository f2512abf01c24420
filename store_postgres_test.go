package caddya2a

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

// Provision resolves an {env.*} placeholder in the DSN and fills the
// defaults once; Validate's errors never show the password.
func TestPostgresStoreProvision(t *testing.T) {
	t.Setenv("A2A_TEST_PG_PASSWORD", "pw-from-env")
	m := &PostgresStore{DSN: "postgres://a2a:{env.A2A_TEST_PG_PASSWORD}@db/a2a"}
	if err := m.Provision(caddy.Context{}); err != nil {
		t.Fatal(err)
	}
	if m.dsn != "postgres://a2a:pw-from-env@db/a2a" || m.DSN != "postgres://a2a:{env.A2A_TEST_PG_PASSWORD}@db/a2a" {
		t.Errorf("resolved %q, kept %q", m.dsn, m.DSN)
	}
	if m.Schema != "a2a" || m.MaxConns != DefaultPostgresMaxConns || m.Lease != caddy.Duration(DefaultPostgresLease) ||
		m.Timeout != caddy.Duration(DefaultPostgresTimeout) || m.TTL != caddy.Duration(DefaultTTL) || m.IdleTTL != caddy.Duration(DefaultIdleTTL) {
		t.Errorf("defaults not filled: %+v", m)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := m.ShareName(); got != "postgres schema a2a" {
		t.Errorf("ShareName %q", got)
	}
	m.Share = "team-a"
	if got := m.ShareName(); got != "team-a" {
		t.Errorf("ShareName %q", got)
	}
	for _, c := range []struct {
		change func(*PostgresStore)
		want   string
	}{
		{func(m *PostgresStore) { m.dsn = "mysql://a2a:pw-from-env@db/a2a" }, "dsn: malformed DSN mysql://a2a:xxxxx@db/a2a"},
		{func(m *PostgresStore) { m.Schema = "a;b" }, `schema: schema "a;b": want letters, digits and _`},
		{func(m *PostgresStore) { m.MaxConns = -1 }, "max_conns: want 1 to 1000"},
		{func(m *PostgresStore) { m.Lease = caddy.Duration(100e6) }, "lease: want at least 1s"},
		{func(m *PostgresStore) { m.Share = "a b" }, "share: "},
	} {
		bad := *m
		c.change(&bad)
		err := bad.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "pw-from-env") {
			t.Errorf("Validate: %v, want %q without the password", err, c.want)
		}
	}
}

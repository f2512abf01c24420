package pgstore

import (
	"context"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/internal/pgtest"
)

func TestCheckDSN(t *testing.T) {
	for _, c := range []struct{ dsn, want string }{
		{"postgres://u:s3cret@db:5432/a2a?sslmode=require", "postgres://u:xxxxx@db:5432/a2a?sslmode=require"},
		{"postgresql://u@db/a2a?password=s3cret", "postgresql://u@db/a2a?password=xxxxx"},
		{"host=db user=u password=s3cret dbname=a2a", "host=db user=u password=xxxxx dbname=a2a"},
		{"host=db password = 's3 cr\\'et' dbname=a2a", "host=db password = xxxxx dbname=a2a"},
		{"host=db dbname=a2a", "host=db dbname=a2a"},
	} {
		got, err := CheckDSN(c.dsn)
		if err != nil || got != c.want {
			t.Errorf("CheckDSN(%q) = %q, %v; want %q", c.dsn, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "postgres://u:s3cret@db:99999999/x", "host=db password=s3cret port=notaport", "mysql://u:s3cret@db/x"} {
		_, err := CheckDSN(bad)
		if err == nil {
			t.Errorf("CheckDSN(%q) accepted", bad)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("CheckDSN(%q)'s error shows the password: %v", bad, err)
		}
	}
}

// A wrong password is refused at New, and the error shows neither the
// wrong password nor, for a server that is down, the right one.
func TestPasswordNotInErrors(t *testing.T) {
	srv := pgtest.Start(t)
	wrong := strings.Replace(srv.DSN(), pgtest.Password, "Wr0ng-pw-123", 1)
	_, err := New(Options{DSN: wrong})
	if err == nil || strings.Contains(err.Error(), "Wr0ng-pw-123") || !strings.Contains(err.Error(), "xxxxx") {
		t.Fatalf("New with a wrong password: %v, want a refusal naming the server without the password", err)
	}
	kv := "host=127.0.0.1 port=" + strings.Split(strings.Split(srv.DSN(), "@127.0.0.1:")[1], "/")[0] +
		" user=postgres dbname=postgres sslmode=disable password=" + pgtest.Password
	s := newStore(t, kv, Options{Timeout: 500 * 1e6})
	if _, err := s.Secret(context.Background(), "k", 8); err != nil {
		t.Fatalf("a keyword=value DSN: %v", err)
	}
	srv.Stop()
	_, err = s.Get(context.Background(), "alice", "t")
	if err == nil || strings.Contains(err.Error(), pgtest.Password) || !strings.Contains(err.Error(), "password=xxxxx") {
		t.Fatalf("an error with the server down: %v", err)
	}
}

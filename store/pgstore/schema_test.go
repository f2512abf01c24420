package pgstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/internal/pgtest"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// Ten replicas starting at once on an empty database: each migrates or
// waits for the one that does, none fails, the schema is migrated once.
func TestConcurrentMigrations(t *testing.T) {
	dsn := pgtest.Start(t).DSN()
	var wg sync.WaitGroup
	stores := make([]*Store, 10)
	errs := make([]error, 10)
	for i := range stores {
		wg.Go(func() { stores[i], errs[i] = New(Options{DSN: dsn, Schema: "fresh"}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("store %d: %v", i, err)
		}
		t.Cleanup(func() { stores[i].Close() })
	}
	ctx := ctx5(t)
	for i, s := range stores {
		if _, err := s.Create(ctx, "alice", task(string(rune('a'+i)), protocol.StateWorking)); err != nil {
			t.Fatalf("store %d: %v", i, err)
		}
	}
	var rows, max int
	if err := stores[0].pool.QueryRow(ctx, `SELECT count(*), max(version) FROM fresh.schema_version`).Scan(&rows, &max); err != nil {
		t.Fatal(err)
	}
	if rows != schemaVersion || max != schemaVersion {
		t.Fatalf("schema_version holds %d rows up to %d, want %d", rows, max, schemaVersion)
	}
}

// A schema a later build migrated is refused, naming both versions.
func TestNewerSchemaRefused(t *testing.T) {
	dsn := pgtest.Start(t).DSN()
	s := newStore(t, dsn, Options{Schema: "later"})
	if _, err := s.pool.Exec(ctx5(t), `INSERT INTO later.schema_version (version) VALUES (99)`); err != nil {
		t.Fatal(err)
	}
	_, err := New(Options{DSN: dsn, Schema: "later"})
	var ve *VersionError
	if !errors.As(err, &ve) || ve.Have != 99 || ve.Want != schemaVersion {
		t.Fatalf("New on a newer schema: %v, want a VersionError", err)
	}
	want := "pgstore: schema later is at version 99, newer than this build's " + strconv.Itoa(schemaVersion)
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("message %q, want it to start %q", err, want)
	}
}

// Schema names: identifiers only, quoted in every statement.
func TestCheckSchema(t *testing.T) {
	for _, ok := range []string{"a2a", "A2A_tasks", "_x", strings.Repeat("s", 63)} {
		if err := CheckSchema(ok); err != nil {
			t.Errorf("CheckSchema(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "1abc", "a-b", "a b", `a"b`, "a;DROP", "é", strings.Repeat("s", 64)} {
		if err := CheckSchema(bad); err == nil {
			t.Errorf("CheckSchema(%q) accepted", bad)
		}
		if _, err := New(Options{DSN: "postgres://127.0.0.1/x", Schema: bad}); bad != "" && err == nil {
			t.Errorf("New with schema %q accepted", bad)
		}
	}
	// A mixed-case name is one schema, as quoted.
	dsn := pgtest.Start(t).DSN()
	s := newStore(t, dsn, Options{Schema: "MiXed"})
	if _, err := s.Create(context.Background(), "alice", task("t", protocol.StateWorking)); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM "MiXed".tasks`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows in \"MiXed\".tasks: %d %v", n, err)
	}
}

// A schema made by a build of migration 1 (before exactly-once sends)
// is brought to the newest version by the next store to open it: its tasks are kept, the
// write function of migration 1 is kept for the replicas still running
// that build, and sends are claimed from then on.
func TestMigrationFromVersion1(t *testing.T) {
	dsn := pgtest.Start(t).DSN()
	ctx := ctx5(t)
	old := newStore(t, dsn, Options{Schema: "upg"})
	if _, err := old.Create(ctx, "alice", task("t1", protocol.StateCompleted)); err != nil {
		t.Fatal(err)
	}
	// Back to what migration 1 left.
	if _, err := old.pool.Exec(ctx, `DROP FUNCTION upg.claim_reply; DROP TABLE upg.replies; DROP FUNCTION upg.write2; DROP TABLE upg.sends; DELETE FROM upg.schema_version WHERE version >= 2`); err != nil {
		t.Fatal(err)
	}
	s := newStore(t, dsn, Options{Schema: "upg"})
	if _, err := s.Get(ctx, "alice", "t1"); err != nil {
		t.Fatalf("a task from before the migration: %v", err)
	}
	var have int
	if err := s.pool.QueryRow(ctx, `SELECT max(version) FROM upg.schema_version`).Scan(&have); err != nil || have != schemaVersion {
		t.Fatalf("schema version %d (%v), want %d", have, err, schemaVersion)
	}
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'upg' AND p.proname = 'write'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("migration 1's write function: %d (%v), want kept", n, err)
	}
	send := store.Send{MessageID: "m1", Digest: "d1"}
	if _, err := s.CreateSend(ctx, "alice", send, task("t2", protocol.StateWorking)); err != nil {
		t.Fatal(err)
	}
	_, err := s.CreateSend(ctx, "alice", send, task("t3", protocol.StateWorking))
	var se *store.SentError
	if !errors.As(err, &se) || !se.Same || se.TaskID != "t2" {
		t.Fatalf("the retry: %v", err)
	}
}

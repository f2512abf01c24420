package pgstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// migrations are the schema's versions, in order: migrations[k] takes a
// schema at version k to k+1. A released step is never edited (a
// replica that ran it would not run it again); a change is a new step.
// Every statement names the schema as {s}, replaced by the quoted
// schema name.
var migrations = []string{
	// 1: the tables, and the write function (write.go).
	`
CREATE TABLE {s}.tasks (
	scope      text COLLATE "C" NOT NULL,
	id         text COLLATE "C" NOT NULL,
	owner      text COLLATE "C" NOT NULL,
	version    bigint NOT NULL,
	snap       bytea NOT NULL,
	state      integer NOT NULL,
	kind       smallint NOT NULL,
	ts         bigint NOT NULL,
	context_id text COLLATE "C" NOT NULL,
	n          bigint NOT NULL,
	expires    timestamptz,
	cancelled  boolean NOT NULL DEFAULT false,
	push_seq   integer NOT NULL DEFAULT 0,
	lease      timestamptz,
	PRIMARY KEY (scope, id)
);
CREATE INDEX tasks_owner ON {s}.tasks (scope, owner, ts DESC, id DESC) INCLUDE (state, context_id, expires);
CREATE INDEX tasks_expires ON {s}.tasks (scope, expires) WHERE expires IS NOT NULL;
CREATE INDEX tasks_lease ON {s}.tasks (scope, lease) WHERE lease IS NOT NULL;
CREATE TABLE {s}.events (
	scope   text COLLATE "C" NOT NULL,
	task_id text COLLATE "C" NOT NULL,
	seq     bigint NOT NULL,
	data    bytea NOT NULL,
	PRIMARY KEY (scope, task_id, seq),
	FOREIGN KEY (scope, task_id) REFERENCES {s}.tasks ON DELETE CASCADE
);
CREATE TABLE {s}.push_configs (
	scope     text COLLATE "C" NOT NULL,
	task_id   text COLLATE "C" NOT NULL,
	config_id text COLLATE "C" NOT NULL,
	ord       integer NOT NULL,
	data      bytea NOT NULL,
	PRIMARY KEY (scope, task_id, config_id),
	FOREIGN KEY (scope, task_id) REFERENCES {s}.tasks ON DELETE CASCADE
);
CREATE TABLE {s}.claims (
	scope   text COLLATE "C" NOT NULL,
	task_id text COLLATE "C" NOT NULL,
	key     text COLLATE "C" NOT NULL,
	PRIMARY KEY (scope, task_id, key),
	FOREIGN KEY (scope, task_id) REFERENCES {s}.tasks ON DELETE CASCADE
);
CREATE TABLE {s}.secrets (
	scope text COLLATE "C" NOT NULL,
	name  text COLLATE "C" NOT NULL,
	value bytea NOT NULL,
	PRIMARY KEY (scope, name)
);
CREATE TABLE {s}.handoffs (
	scope   text COLLATE "C" NOT NULL,
	kind    text COLLATE "C" NOT NULL,
	seq     bigint GENERATED ALWAYS AS IDENTITY,
	data    bytea NOT NULL,
	expires timestamptz NOT NULL,
	PRIMARY KEY (scope, kind, seq)
);
` + writeFunc + putPushFunc,
	// 2: the claims of exactly-once sends, and write2 (sends.go).
	sendsMigration,
	// 3: the claims of sends made before their answer (replies.go).
	repliesMigration,
}

// schemaVersion is the version this build's migrations reach.
var schemaVersion = len(migrations)

// migrate brings the schema to schemaVersion. Every replica runs it at
// start; the first to take the schema's advisory lock migrates, the
// others wait for it and find nothing left to do, so ten replicas
// starting at once on an empty database race nowhere (CREATE SCHEMA IF
// NOT EXISTS alone does: two at once fail on a unique index). A schema
// newer than this build is refused: its tables may mean what this build
// does not know.
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "caddy-a2a schema "+s.opts.Schema); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, s.sql(`CREATE SCHEMA IF NOT EXISTS {s}; CREATE TABLE IF NOT EXISTS {s}.schema_version (
	version integer PRIMARY KEY,
	applied timestamptz NOT NULL DEFAULT now()
)`)); err != nil {
		return err
	}
	var have int
	if err := tx.QueryRow(ctx, s.sql(`SELECT coalesce(max(version), 0) FROM {s}.schema_version`)).Scan(&have); err != nil {
		return err
	}
	if have > schemaVersion {
		return &VersionError{Schema: s.opts.Schema, Have: have, Want: schemaVersion}
	}
	for v := have; v < schemaVersion; v++ {
		if _, err := tx.Exec(ctx, s.sql(migrations[v])); err != nil {
			return fmt.Errorf("migration %d: %w", v+1, err)
		}
		if _, err := tx.Exec(ctx, s.sql(`INSERT INTO {s}.schema_version (version) VALUES ($1)`), v+1); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// VersionError is a schema that a later build migrated: this one does
// not know its tables and refuses to use them.
type VersionError struct {
	Schema     string
	Have, Want int
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("pgstore: schema %s is at version %d, newer than this build's %d: run a build that knows it, or another schema",
		e.Schema, e.Have, e.Want)
}

// sql puts the quoted schema into a statement.
func (s *Store) sql(q string) string { return strings.ReplaceAll(q, "{s}", s.quoted) }

// quoteIdent quotes a schema name CheckSchema accepted.
func quoteIdent(name string) string { return pgx.Identifier{name}.Sanitize() }

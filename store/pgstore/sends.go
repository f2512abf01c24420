package pgstore

import "github.com/caddy-a2a/caddy-a2a/store"

// Migration 2: exactly-once sends (store.Sends). The claims are rows of
// sends, each naming its task (they go with it: ON DELETE CASCADE, and
// an expired task's claims are dead), written by write2: write (write.go,
// which migration 1 made and binaries before this one call) with the
// send's claim. A claim is made in the transaction of the write that
// starts its turn, after the new task's row (which it references), and
// a live claim found turns the write into the answer "sent" (the same
// digest) or "reused" (another message), naming the task, with nothing
// written.
const sendsMigration = `
CREATE TABLE {s}.sends (
	scope      text COLLATE "C" NOT NULL,
	owner      text COLLATE "C" NOT NULL,
	message_id text COLLATE "C" NOT NULL,
	task_id    text COLLATE "C" NOT NULL,
	digest     text NOT NULL,
	until      timestamptz,
	PRIMARY KEY (scope, owner, message_id),
	FOREIGN KEY (scope, task_id) REFERENCES {s}.tasks ON DELETE CASCADE
);
CREATE INDEX sends_task ON {s}.sends (scope, task_id);
` + writeFunc2

// writeFunc2 is writeFunc with the send's claim: p_send_id NULL claims
// nothing, as write does.
const writeFunc2 = `
CREATE FUNCTION {s}.write2(
	p_scope text, p_id text, p_create boolean, p_version bigint, p_owner text,
	p_snap bytea, p_state integer, p_kind smallint, p_ts bigint, p_ctx text,
	p_ttl_ms bigint, p_max_ev integer, p_max_own integer, p_lease_ms bigint,
	p_channel text, p_events bytea[], p_send_id text, p_send_digest text, p_send_until timestamptz,
	OUT status text, OUT new_version bigint, OUT last bigint, OUT has_push boolean, OUT sent_task text)
LANGUAGE plpgsql AS $f$
DECLARE
	nev integer := coalesce(array_length(p_events, 1), 0);
	exp timestamptz;
	cur record;
	base bigint := 0;
	cnt integer;
	gone integer;
	claimed text;
	claimed_digest text;
BEGIN
	sent_task := '';
	last := 0;
	new_version := 0;
	has_push := false;
	IF p_ttl_ms > 0 THEN
		exp := now() + p_ttl_ms * interval '1 millisecond';
	END IF;
	IF p_create THEN
		IF nev > p_max_ev AND p_kind <> 2 THEN
			status := 'toomany';
			RETURN;
		END IF;
		-- An expired task the sweep has not removed yet makes way.
		DELETE FROM {s}.tasks WHERE scope = p_scope AND id = p_id AND expires <= now();
		INSERT INTO {s}.tasks (scope, id, owner, version, snap, state, kind, ts, context_id, n, expires, lease)
		VALUES (p_scope, p_id, p_owner, 1, p_snap, p_state, p_kind, p_ts, p_ctx, nev, exp,
			CASE WHEN p_kind = 0 THEN now() + p_lease_ms * interval '1 millisecond' END)
		ON CONFLICT DO NOTHING;
		IF NOT FOUND THEN
			status := 'exists';
			RETURN;
		END IF;
		new_version := 1;
		-- The send's claim, with the task it names: a live claim of
		-- another task (made first, or committed while this insert
		-- waited on it) turns the write into the answer that names it.
		IF p_send_id IS NOT NULL THEN
			INSERT INTO {s}.sends AS c (scope, owner, message_id, task_id, digest, until)
			VALUES (p_scope, p_owner, p_send_id, p_id, p_send_digest, p_send_until)
			ON CONFLICT (scope, owner, message_id) DO UPDATE
				SET task_id = EXCLUDED.task_id, digest = EXCLUDED.digest, until = EXCLUDED.until
				WHERE c.until <= now() OR EXISTS (SELECT 1 FROM {s}.tasks t
					WHERE t.scope = c.scope AND t.id = c.task_id AND t.expires <= now())
			RETURNING c.task_id INTO claimed;
			IF NOT FOUND THEN
				SELECT task_id, digest INTO claimed, claimed_digest FROM {s}.sends
				WHERE scope = p_scope AND owner = p_owner AND message_id = p_send_id;
				DELETE FROM {s}.tasks WHERE scope = p_scope AND id = p_id;
				sent_task := claimed;
				status := CASE WHEN claimed_digest = p_send_digest THEN 'sent' ELSE 'reused' END;
				new_version := 0;
				RETURN;
			END IF;
		END IF;
		IF p_owner <> '' AND p_max_own > 0 THEN
			PERFORM pg_advisory_xact_lock(hashtext(p_scope), hashtext(p_owner));
			SELECT count(*) INTO cnt FROM {s}.tasks
			WHERE scope = p_scope AND owner = p_owner AND (expires IS NULL OR expires > now());
			IF cnt > p_max_own THEN
				WITH dropped AS (
					DELETE FROM {s}.tasks WHERE scope = p_scope AND id IN (
						SELECT id FROM {s}.tasks
						WHERE scope = p_scope AND owner = p_owner AND kind > 0 AND id <> p_id
							AND (expires IS NULL OR expires > now())
						ORDER BY kind DESC, ts, id
						LIMIT cnt - p_max_own)
					RETURNING id)
				SELECT count(pg_notify(p_channel, 'e0 ' || id)) INTO gone FROM dropped;
				IF cnt - gone > p_max_own THEN
					DELETE FROM {s}.tasks WHERE scope = p_scope AND id = p_id;
					status := 'quota';
					RETURN;
				END IF;
			END IF;
		END IF;
	ELSE
		SELECT owner, version, kind, n, push_seq, expires INTO cur FROM {s}.tasks
		WHERE scope = p_scope AND id = p_id FOR NO KEY UPDATE;
		IF NOT FOUND OR cur.expires <= now() OR (p_send_id IS NOT NULL AND cur.owner <> p_owner) THEN
			status := 'notfound';
			RETURN;
		END IF;
		-- A retry finds its claim whatever the version has become.
		IF p_send_id IS NOT NULL THEN
			SELECT c.task_id, c.digest INTO claimed, claimed_digest FROM {s}.sends c
			WHERE c.scope = p_scope AND c.owner = p_owner AND c.message_id = p_send_id
				AND (c.until IS NULL OR c.until > now()) AND NOT EXISTS (SELECT 1 FROM {s}.tasks t
					WHERE t.scope = c.scope AND t.id = c.task_id AND t.expires <= now());
			IF FOUND THEN
				sent_task := claimed;
				status := CASE WHEN claimed_digest = p_send_digest THEN 'sent' ELSE 'reused' END;
				RETURN;
			END IF;
		END IF;
		IF cur.version <> p_version THEN
			status := 'conflict';
			RETURN;
		END IF;
		-- The write that finishes the task always goes in, so that the
		-- failure this bound causes can be recorded.
		IF cur.n + nev > p_max_ev AND NOT (p_kind = 2 AND cur.kind <> 2) THEN
			status := 'toomany';
			RETURN;
		END IF;
		-- The claim before the task's row changes: one made meanwhile on
		-- another replica (committed while this insert waited on it)
		-- answers instead, with nothing written.
		IF p_send_id IS NOT NULL THEN
			INSERT INTO {s}.sends AS c (scope, owner, message_id, task_id, digest, until)
			VALUES (p_scope, p_owner, p_send_id, p_id, p_send_digest, p_send_until)
			ON CONFLICT (scope, owner, message_id) DO UPDATE
				SET task_id = EXCLUDED.task_id, digest = EXCLUDED.digest, until = EXCLUDED.until
				WHERE c.until <= now() OR EXISTS (SELECT 1 FROM {s}.tasks t
					WHERE t.scope = c.scope AND t.id = c.task_id AND t.expires <= now())
			RETURNING c.task_id INTO claimed;
			IF NOT FOUND THEN
				SELECT task_id, digest INTO claimed, claimed_digest FROM {s}.sends
				WHERE scope = p_scope AND owner = p_owner AND message_id = p_send_id;
				sent_task := claimed;
				status := CASE WHEN claimed_digest = p_send_digest THEN 'sent' ELSE 'reused' END;
				RETURN;
			END IF;
		END IF;
		UPDATE {s}.tasks SET version = version + 1, snap = p_snap, state = p_state, kind = p_kind,
			ts = p_ts, context_id = p_ctx, n = n + nev, expires = exp,
			lease = CASE
				WHEN p_kind <> 0 THEN NULL
				WHEN cur.kind <> 0 THEN now() + p_lease_ms * interval '1 millisecond'
				ELSE lease END
		WHERE scope = p_scope AND id = p_id;
		base := cur.n;
		new_version := cur.version + 1;
		has_push := cur.push_seq > 0;
	END IF;
	IF nev > 0 THEN
		INSERT INTO {s}.events (scope, task_id, seq, data)
		SELECT p_scope, p_id, base + u.i, u.d FROM unnest(p_events) WITH ORDINALITY AS u(d, i);
		last := base + nev;
		-- Nobody can be waiting on a task being created.
		IF NOT p_create THEN
			PERFORM pg_notify(p_channel, 'e' || last || ' ' || p_id);
		END IF;
	END IF;
	status := 'ok';
END
$f$;
`

var _ store.Sends = (*Store)(nil)

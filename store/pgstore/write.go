package pgstore

// writeFunc is Create and Update as one function of the schema: one
// round trip, one transaction (the statement's), so the version
// compare-and-set, the snapshot, the events, the quota and the lease
// either all happen or none does, and the NOTIFY that wakes the
// streams of other replicas goes out with the commit, not before.
//
// kind is 0 running, 1 interrupted, 2 finished (the writer tells it, so
// the task states are known in Go alone). The owner quota counts the
// new task: one over drops the owner's finished tasks whose status
// changed longest ago, then its interrupted ones; with none left to
// drop the new task goes again and the answer is quota. The owner's
// advisory lock keeps two Creates of one owner from both counting
// before either inserts (each statement of a function reads anew, so
// the second counts the first's task). Every dropped task notifies its
// streams with event id 0: they read and find it gone.
//
// The status word is ok, exists, notfound, conflict, toomany or quota;
// last is the number of the log's last event when the write appended
// (0 if it did not), has_push whether a push config was ever put.
const writeFunc = `
CREATE FUNCTION {s}.write(
	p_scope text, p_id text, p_create boolean, p_version bigint, p_owner text,
	p_snap bytea, p_state integer, p_kind smallint, p_ts bigint, p_ctx text,
	p_ttl_ms bigint, p_max_ev integer, p_max_own integer, p_lease_ms bigint,
	p_channel text, p_events bytea[],
	OUT status text, OUT new_version bigint, OUT last bigint, OUT has_push boolean)
LANGUAGE plpgsql AS $f$
DECLARE
	nev integer := coalesce(array_length(p_events, 1), 0);
	exp timestamptz;
	cur record;
	base bigint := 0;
	cnt integer;
	gone integer;
BEGIN
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
		IF NOT FOUND OR cur.expires <= now() THEN
			status := 'notfound';
			RETURN;
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

// putPushFunc is PutPushConfig: the task row's lock orders the puts of
// one task, so the bound and the order of first put hold under races.
const putPushFunc = `
CREATE FUNCTION {s}.put_push(p_scope text, p_id text, p_owner text, p_cfg text, p_data bytea, p_max integer)
RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
	v_seq integer;
BEGIN
	SELECT push_seq INTO v_seq FROM {s}.tasks
	WHERE scope = p_scope AND id = p_id AND owner = p_owner AND (expires IS NULL OR expires > now())
	FOR NO KEY UPDATE;
	IF NOT FOUND THEN
		RETURN 'notfound';
	END IF;
	UPDATE {s}.push_configs SET data = p_data WHERE scope = p_scope AND task_id = p_id AND config_id = p_cfg;
	IF FOUND THEN
		RETURN 'ok';
	END IF;
	IF (SELECT count(*) FROM {s}.push_configs WHERE scope = p_scope AND task_id = p_id) >= p_max THEN
		RETURN 'toomany';
	END IF;
	UPDATE {s}.tasks SET push_seq = v_seq + 1 WHERE scope = p_scope AND id = p_id;
	INSERT INTO {s}.push_configs (scope, task_id, config_id, ord, data) VALUES (p_scope, p_id, p_cfg, v_seq + 1, p_data);
	RETURN 'ok';
END
$f$;
`

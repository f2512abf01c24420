package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/internal/pack"
)

// Migration 3: the sends claimed before their answer (store.Replies),
// rows of replies lapsing at until (the sweep deletes them; a lapsed row
// is no claim). kind and body are the answer's (pack.EncodeReply). claim_reply claims or reads in one call:
// each of its statements sees what committed before it, so a claim made
// meanwhile by another replica, which the insert waits for and then
// finds live, is read by the next round of its loop.
const repliesMigration = `
CREATE TABLE {s}.replies (
	scope      text COLLATE "C" NOT NULL,
	owner      text COLLATE "C" NOT NULL,
	message_id text COLLATE "C" NOT NULL,
	kind       text NOT NULL,
	digest     text NOT NULL,
	body       bytea,
	until      timestamptz NOT NULL,
	PRIMARY KEY (scope, owner, message_id)
);
CREATE INDEX replies_until ON {s}.replies (scope, until);
CREATE FUNCTION {s}.claim_reply(p_scope text, p_owner text, p_mid text, p_digest text, p_pending_ms bigint,
	OUT claimed boolean, OUT r_kind text, OUT r_digest text, OUT r_body bytea)
LANGUAGE plpgsql AS $f$
BEGIN
	claimed := false;
	LOOP
		SELECT kind, digest, body INTO r_kind, r_digest, r_body FROM {s}.replies
		WHERE scope = p_scope AND owner = p_owner AND message_id = p_mid AND until > clock_timestamp();
		IF FOUND THEN
			RETURN;
		END IF;
		INSERT INTO {s}.replies AS r (scope, owner, message_id, kind, digest, body, until)
		VALUES (p_scope, p_owner, p_mid, 'p', p_digest, NULL, clock_timestamp() + p_pending_ms * interval '1 millisecond')
		ON CONFLICT (scope, owner, message_id) DO UPDATE
			SET kind = 'p', digest = EXCLUDED.digest, body = NULL, until = EXCLUDED.until
			WHERE r.until <= clock_timestamp()
		RETURNING true INTO claimed;
		IF FOUND THEN
			RETURN;
		END IF;
		claimed := false;
	END LOOP;
END
$f$;
`

var _ store.Replies = (*Store)(nil)

// errBadReply is a reply row that does not read back.
var errBadReply = errors.New("pgstore: malformed reply claim")

// ClaimReply implements store.Replies.
func (s *Store) ClaimReply(ctx context.Context, owner string, send store.Send, pending time.Duration) (*store.Reply, error) {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	var claimed bool
	var kind, digest *string
	var body []byte
	if err := s.pool.QueryRow(c, s.sql(`SELECT * FROM {s}.claim_reply($1, $2, $3, $4, $5)`),
		s.scope, owner, send.MessageID, send.Digest, max(pending.Milliseconds(), 1)).Scan(&claimed, &kind, &digest, &body); err != nil {
		return nil, s.fail(ctx, err)
	}
	if claimed {
		return nil, nil
	}
	if kind == nil || digest == nil {
		return nil, errBadReply
	}
	if len(*kind) != 1 {
		return nil, errBadReply
	}
	r, err := pack.DecodeReply((*kind)[0], *digest, body)
	if err != nil {
		return nil, errBadReply
	}
	return r, nil
}

// SettleReply implements store.Replies.
func (s *Store) SettleReply(ctx context.Context, owner string, send store.Send, r *store.Reply) error {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	kind, body := pack.EncodeReply(r)
	if _, err := s.pool.Exec(c, s.sql(`INSERT INTO {s}.replies (scope, owner, message_id, kind, digest, body, until)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (scope, owner, message_id) DO UPDATE
			SET kind = EXCLUDED.kind, digest = EXCLUDED.digest, body = EXCLUDED.body, until = EXCLUDED.until`),
		s.scope, owner, send.MessageID, string(rune(kind)), r.Digest, body, send.Lapse(s.opts.TTL)); err != nil {
		return s.fail(ctx, err)
	}
	return nil
}

// DropReply implements store.Replies.
func (s *Store) DropReply(ctx context.Context, owner, messageID string) error {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	if _, err := s.pool.Exec(c, s.sql(`DELETE FROM {s}.replies WHERE scope = $1 AND owner = $2 AND message_id = $3`),
		s.scope, owner, messageID); err != nil {
		return s.fail(ctx, err)
	}
	return nil
}

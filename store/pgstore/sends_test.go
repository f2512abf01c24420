package pgstore

import (
	"testing"

	"github.com/caddy-a2a/caddy-a2a/internal/pgtest"
	"github.com/caddy-a2a/caddy-a2a/store/storetest"
)

// One send made on two replicas at once, ten times on each: one task is
// written, and every caller is told of it.
func TestSendClaimedOnceAcrossReplicas(t *testing.T) {
	dsn := pgtest.Start(t).DSN()
	share := newShare()
	storetest.RaceSends(t, newStore(t, dsn, Options{Share: share}), newStore(t, dsn, Options{Share: share}))
}

package pgstore

import (
	"testing"

	"github.com/caddy-a2a/caddy-a2a/internal/pgtest"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/storetest"
)

// Every subtest's store has a share of its own in one schema: a share's
// rows are the only ones it sees, so it starts empty.
func TestConformance(t *testing.T) {
	dsn := pgtest.Start(t).DSN()
	storetest.Run(t, func(t *testing.T) store.Store {
		return newStore(t, dsn, Options{Share: newShare()})
	})
}

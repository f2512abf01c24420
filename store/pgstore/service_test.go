package pgstore

import (
	"testing"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/handler/handlertest"
	"github.com/caddy-a2a/caddy-a2a/internal/pgtest"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// The service's behaviour suite (sends, multi-turn, streams and their
// order, resubscribe and Last-Event-ID, cancel, owners, listing) with
// its tasks in PostgreSQL: each scenario on a share of its own.
func TestServiceSuite(t *testing.T) {
	dsn := pgtest.Start(t).DSN()
	handlertest.RunStore(t, func(t *testing.T) store.Store {
		return newStore(t, dsn, Options{Share: newShare()})
	}, func(_ *testing.T, svc *handler.Service) handlertest.Client { return handlertest.Direct(svc) })
}

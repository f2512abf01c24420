package filestore

import (
	"testing"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/handler/handlertest"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// The service's behaviour suite (sends, multi-turn, streams and their
// order, resubscribe and Last-Event-ID, cancel, owners, listing) with
// its tasks in a file: each scenario in a directory of its own.
func TestServiceSuite(t *testing.T) {
	handlertest.RunStore(t, func(t *testing.T) store.Store {
		return open(t, t.TempDir(), Options{})
	}, func(_ *testing.T, svc *handler.Service) handlertest.Client { return handlertest.Direct(svc) })
}

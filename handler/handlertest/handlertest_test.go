package handlertest_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/handler/handlertest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The suite over no wire at all: the service's methods called as a
// binding calls them. A scenario that fails here is the service's; one
// that passes here and fails over a binding is that binding's.
func TestService(t *testing.T) {
	handlertest.Run(t, func(t *testing.T, svc *handler.Service) handlertest.Client {
		return handlertest.Direct(svc)
	})
}

package redisstore

import (
	"testing"

	"github.com/caddy-a2a/caddy-a2a/store/storetest"
)

// One send made on two replicas at once, ten times on each: one task is
// written, and every caller is told of it.
func TestSendClaimedOnceAcrossReplicas(t *testing.T) {
	url, _ := startRedis(t)
	prefix := newPrefix()
	storetest.RaceSends(t, newStore(t, url, Options{KeyPrefix: prefix}), newStore(t, url, Options{KeyPrefix: prefix}))
}

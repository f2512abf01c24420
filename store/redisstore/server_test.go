package redisstore

import (
	"testing"

	"github.com/caddy-a2a/caddy-a2a/internal/redistest"
)

// server is a redis-server the test started, without persistence.
type server = redistest.Server

// startRedis starts a redis-server on a free port of 127.0.0.1 and stops
// it when the test ends; it returns the server's URL.
func startRedis(t testing.TB, args ...string) (string, *server) {
	t.Helper()
	srv := redistest.Start(t, args...)
	return srv.URL(), srv
}

// startCluster starts a Redis Cluster of three masters and returns the
// URL of its first node.
func startCluster(t testing.TB) string { return redistest.StartCluster(t) }

// freePort asks the kernel for a port nobody listens on.
func freePort(t testing.TB) int { return redistest.FreePort(t) }

package redisstore

import (
	"context"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/internal/redistest"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/storetest"
)

// Each form CheckURL takes, and each it refuses with the reason, the
// password never in the answer.
func TestCheckURL(t *testing.T) {
	for _, tc := range []struct {
		url     string
		cluster bool
		want    string // the redacted URL, or a fragment of the error
		ok      bool
	}{
		{url: "redis://127.0.0.1:6379/0", want: "redis://127.0.0.1:6379/0", ok: true},
		{url: "redis://u:s3cret@127.0.0.1:6379", want: "redis://u:xxxxx@127.0.0.1:6379", ok: true},
		{url: "rediss://cache.example:6380", want: "rediss://cache.example:6380", ok: true},
		{url: "redis://10.0.0.1:7000?addr=10.0.0.2:7000", cluster: true, want: "redis://10.0.0.1:7000?addr=10.0.0.2:7000", ok: true},
		{url: "unix:///run/redis/redis.sock", want: "unix:///run/redis/redis.sock", ok: true},
		{url: "unix:///run/redis/redis.sock?db=2", want: "unix:///run/redis/redis.sock?db=2", ok: true},
		{url: "unix://u:s3cret@/run/redis/redis.sock", want: "unix://u:xxxxx@/run/redis/redis.sock", ok: true},
		{url: "redis://", want: "has no host"},
		{url: "http://u:s3cret@127.0.0.1:6379", want: "URL http://u:xxxxx@127.0.0.1:6379: scheme must be redis (redis://[user:pass@]host:port[/db]), rediss (TLS) or unix (unix:///path/to/redis.sock)"},
		{url: "unix://localhost/run/redis.sock", want: "names a socket path, not a host"},
		{url: "unix://run/redis.sock", want: "names a socket path, not a host"},
		{url: "unix:", want: "the socket path must be absolute"},
		{url: "unix:///run/redis.sock?addr=127.0.0.1:6379", want: "addr= names TCP seeds"},
		{url: "unix:///run/redis.sock", cluster: true, want: "a Cluster is reached over TCP"},
		{url: "redis://u:s3cret@[::1", want: "malformed URL"},
	} {
		got, err := CheckURL(tc.url, tc.cluster)
		if tc.ok {
			if err != nil || got != tc.want {
				t.Errorf("CheckURL(%q) = %q, %v; want %q", tc.url, got, err, tc.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckURL(%q) = %q, %v; want an error with %q", tc.url, got, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("CheckURL(%q): the password is in %q", tc.url, err)
		}
	}
}

// The conformance suite over a Unix socket: the same store, the other
// transport.
func TestConformanceUnix(t *testing.T) {
	srv := redistest.StartUnix(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		return newStore(t, srv.UnixURL(), Options{KeyPrefix: newPrefix()})
	})
}

// A store over the socket and one over TCP to the same server, with one
// prefix, are one store: a task written through the socket is read over
// TCP, and a wait over TCP is woken by a write through the socket.
func TestUnixAndTCPShare(t *testing.T) {
	srv := redistest.StartUnix(t)
	prefix := newPrefix()
	a := newStore(t, srv.UnixURL(), Options{KeyPrefix: prefix})
	b := newStore(t, srv.URL(), Options{KeyPrefix: prefix})
	ctx := ctx5(t)
	v, err := a.Create(ctx, "alice", task("t1", protocol.StateWorking))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := b.Get(ctx, "alice", "t1"); err != nil || r.Version != v {
		t.Fatalf("Get over TCP: %+v %v", r, err)
	}
	woken := make(chan []store.StoredEvent, 1)
	go func() {
		evs, _ := b.Events(ctx, "t1", "", true)
		woken <- evs
	}()
	if _, _, err := a.Update(ctx, "t1", v, task("t1", protocol.StateCompleted), chunk("x")); err != nil {
		t.Fatal(err)
	}
	if evs := <-woken; len(evs) != 1 || evs[0].ID != "1" || evs[0].Event.Artifact == nil {
		t.Fatalf("the wait over TCP got %+v", evs)
	}
	// A socket nobody listens on: the store is made (Redis may start
	// later) and its operations fail within the timeout, naming the
	// socket and not the password.
	dead := newStore(t, "unix://u:s3cret@"+srv.Socket+".none", Options{KeyPrefix: prefix, Timeout: 300e6})
	_, err = dead.Get(context.Background(), "alice", "t1")
	if err == nil || !strings.Contains(err.Error(), srv.Socket+".none") || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("a dead socket: %v", err)
	}
}

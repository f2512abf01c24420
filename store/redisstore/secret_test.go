package redisstore

import (
	"bytes"
	"context"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// Two stores on one prefix get one secret, made once; another prefix its
// own.
func TestSecretShared(t *testing.T) {
	url, _ := startRedis(t)
	a := newStore(t, url, Options{KeyPrefix: "s1:"})
	b := newStore(t, url, Options{KeyPrefix: "s1:"})
	c := newStore(t, url, Options{KeyPrefix: "s2:"})
	ctx := context.Background()
	ka, err := a.Secret(ctx, "k", 32)
	if err != nil || len(ka) != 32 {
		t.Fatalf("a: %x %v", ka, err)
	}
	kb, err := b.Secret(ctx, "k", 32)
	if err != nil || !bytes.Equal(ka, kb) {
		t.Fatalf("b: %x %v, want a's %x", kb, err, ka)
	}
	if again, _ := a.Secret(ctx, "k", 32); !bytes.Equal(again, ka) {
		t.Fatal("the secret changed")
	}
	if kc, err := c.Secret(ctx, "k", 32); err != nil || bytes.Equal(kc, ka) {
		t.Fatalf("another prefix: %x %v", kc, err)
	}
}

// A Redis restarted without persistence loses the secrets. A process
// that kept one and a process that made it anew since agree by the first
// write of a turn: the keeper takes Redis' value if another made one
// first, and puts its own back if nobody did. The check costs no round
// trip (the write carries it), and a kept secret is read from Redis once.
func TestSecretAgreedAfterLoss(t *testing.T) {
	url, srv := startRedis(t)
	prefix := newPrefix()
	keeper := newStore(t, url, Options{KeyPrefix: prefix})
	ctx := context.Background()
	old, err := keeper.Secret(ctx, "k", 32)
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	srv.Start(t)
	// Made anew by a process that came after the restart.
	fresh, err := newStore(t, url, Options{KeyPrefix: prefix}).Secret(ctx, "k", 32)
	if err != nil || bytes.Equal(fresh, old) {
		t.Fatalf("the new process's secret: %x %v (the old one %x)", fresh, err, old)
	}
	createOnceUp(t, keeper, "t1")
	gets := serverCount(t, keeper, "get")
	if got, err := keeper.Secret(ctx, "k", 32); err != nil || !bytes.Equal(got, fresh) {
		t.Fatalf("the keeper after a turn: %x %v, want Redis' %x", got, err, fresh)
	}
	if n := serverCount(t, keeper, "get"); n != gets {
		t.Fatalf("%d GETs to read a kept secret, want 0", n-gets)
	}
	// Lost again, and nobody made it since: the keeper's write puts its
	// value back, which a new process then reads.
	srv.Stop()
	srv.Start(t)
	createOnceUp(t, keeper, "t2")
	if got, err := newStore(t, url, Options{KeyPrefix: prefix}).Secret(ctx, "k", 32); err != nil || !bytes.Equal(got, fresh) {
		t.Fatalf("a new process after the keeper's turn: %x %v, want the kept %x", got, err, fresh)
	}
	// A write in the middle of a turn (a chunk) checks nothing.
	calls := serverCount(t, keeper, "get")
	if _, _, err := keeper.Update(ctx, "t2", 1, task("t2", protocol.StateWorking), chunk("x")); err != nil {
		t.Fatal(err)
	}
	if n := serverCount(t, keeper, "get"); n != calls {
		t.Fatalf("a chunk's write ran %d GETs, want 0", n-calls)
	}
}

package redisstore

import (
	"bytes"
	"context"
	"testing"
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

package pgstore

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/internal/pgtest"
)

// A secret is made by the first store to ask and is the same for every
// store of the scope, however many ask at once; it survives a restart of
// the server.
func TestSecretShared(t *testing.T) {
	srv := pgtest.Start(t)
	share := newShare()
	var stores []*Store
	for range 4 {
		stores = append(stores, newStore(t, srv.DSN(), Options{Share: share}))
	}
	ctx := ctx5(t)
	got := make([][]byte, len(stores))
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Go(func() {
			var err error
			if got[i], err = s.Secret(ctx, "ctx", 32); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i := range got {
		if len(got[i]) != 32 || !bytes.Equal(got[i], got[0]) {
			t.Fatalf("store %d's secret %x, store 0's %x", i, got[i], got[0])
		}
	}
	if _, err := stores[0].Secret(ctx, "ctx", 16); err == nil {
		t.Error("a secret asked for at another size was given")
	}
	srv.Restart(t)
	fresh := newStore(t, srv.DSN(), Options{Share: share})
	if v, err := fresh.Secret(context.Background(), "ctx", 32); err != nil || !bytes.Equal(v, got[0]) {
		t.Fatalf("after a restart: %x %v, want %x", v, err, got[0])
	}
}

// Handoffs: each item put is taken once, in order, by whichever store
// asks, and kinds are apart.
func TestHandoffs(t *testing.T) {
	dsn := pgtest.Start(t).DSN()
	share := newShare()
	a := newStore(t, dsn, Options{Share: share})
	b := newStore(t, dsn, Options{Share: share})
	ctx := ctx5(t)
	if err := a.PutHandoffs(ctx, "push", [][]byte{[]byte("one"), []byte("two"), []byte("three")}); err != nil {
		t.Fatal(err)
	}
	if err := a.PutHandoffs(ctx, "other", [][]byte{[]byte("x")}); err != nil {
		t.Fatal(err)
	}
	var taken []string
	for _, s := range []*Store{b, a, b, a} {
		v, err := s.TakeHandoff(ctx, "push")
		if err != nil {
			t.Fatal(err)
		}
		if v != nil {
			taken = append(taken, string(v))
		}
	}
	if got := bytes.Join(toBytes(taken), []byte(",")); string(got) != "one,two,three" {
		t.Fatalf("taken %q, want one,two,three", got)
	}
	// Many takers at once share 50 items, none twice.
	items := make([][]byte, 50)
	for i := range items {
		items[i] = []byte{byte(i)}
	}
	if err := a.PutHandoffs(ctx, "many", items); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[byte]int{}
	var wg sync.WaitGroup
	for i := range 6 {
		s := []*Store{a, b}[i%2]
		wg.Go(func() {
			for {
				v, err := s.TakeHandoff(ctx, "many")
				if err != nil {
					t.Error(err)
					return
				}
				if v == nil {
					return
				}
				mu.Lock()
				seen[v[0]]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != 50 {
		t.Fatalf("%d distinct items taken of 50", len(seen))
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("item %d taken %d times", k, n)
		}
	}
	if v, err := b.TakeHandoff(ctx, "other"); err != nil || string(v) != "x" {
		t.Fatalf("the other kind: %q %v", v, err)
	}
}

func toBytes(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

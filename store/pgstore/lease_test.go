package pgstore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/internal/pgtest"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// A running task's lease is renewed while its store lives; once that
// store is gone (closed without renewing) the lease lapses and, of three
// stores looking at once, exactly one claims the task, within about 1.5
// leases. Settled tasks and tasks still renewed are never orphans.
func TestLeases(t *testing.T) {
	dsn := pgtest.Start(t).DSN()
	share := newShare()
	const lease = time.Second
	a := newStore(t, dsn, Options{Share: share, Lease: lease})
	others := []*Store{
		newStore(t, dsn, Options{Share: share, Lease: lease}),
		newStore(t, dsn, Options{Share: share, Lease: lease}),
		newStore(t, dsn, Options{Share: share, Lease: lease}),
	}
	ctx := context.Background()
	if _, err := a.Create(ctx, "o", task("run", protocol.StateWorking)); err != nil {
		t.Fatal(err)
	}
	v, err := a.Create(ctx, "o", task("done", protocol.StateWorking))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Update(ctx, "done", v, task("done", protocol.StateCompleted)); err != nil {
		t.Fatal(err)
	}
	if _, err := others[0].Create(ctx, "o", task("live", protocol.StateWorking)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if got, err := others[0].Orphans(ctx); err != nil || len(got) != 0 {
		t.Fatalf("orphans while every store renews: %+v %v", got, err)
	}
	a.Close()
	closed := time.Now()
	var mu sync.Mutex
	var claims []string
	var wg sync.WaitGroup
	for _, s := range others {
		wg.Go(func() {
			for time.Since(closed) < 3*lease {
				got, err := s.Orphans(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, o := range got {
					claims = append(claims, fmt.Sprintf("%s/%s after %s", o.ID, o.Owner, time.Since(closed).Round(100*time.Millisecond)))
				}
				mu.Unlock()
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	// Claims last a lease: stop looking before the first one lapses.
	time.Sleep(1500 * time.Millisecond)
	mu.Lock()
	got := append([]string(nil), claims...)
	mu.Unlock()
	wg.Wait()
	if len(got) != 1 || got[0][:6] != "run/o " {
		t.Fatalf("claims within 1.5 leases of the store's close: %q, want run/o once", got)
	}
	t.Logf("claimed: %s", got[0])
}

// A run that ends without settling its task abandons the lease: it is no
// longer renewed, lapses and is claimed; abandoning a version the task no
// longer has here (a later turn wrote it) keeps the renewals going.
func TestAbandonedLeaseLapses(t *testing.T) {
	dsn := pgtest.Start(t).DSN()
	share := newShare()
	a := newStore(t, dsn, Options{Share: share, Lease: time.Second})
	b := newStore(t, dsn, Options{Share: share, Lease: time.Second})
	ctx := context.Background()
	vGone, err := a.Create(ctx, "o", task("gone", protocol.StateWorking))
	if err != nil {
		t.Fatal(err)
	}
	a.Abandon("gone", vGone)
	v, err := a.Create(ctx, "o", task("kept", protocol.StateWorking))
	if err != nil {
		t.Fatal(err)
	}
	v2, _, err := a.Update(ctx, "kept", v, task("kept", protocol.StateWorking))
	if err != nil {
		t.Fatal(err)
	}
	a.Abandon("kept", v) // the run of version v ended; v2's goes on
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := b.Orphans(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 1 {
			if got[0].ID != "gone" {
				t.Fatalf("orphan %+v, want the abandoned task", got[0])
			}
			if _, _, err := b.Update(ctx, "gone", vGone, task("gone", protocol.StateFailed)); err != nil {
				t.Fatal(err)
			}
			break
		}
		if len(got) > 1 {
			t.Fatalf("orphans %+v, want the abandoned task alone", got)
		}
		if time.Now().After(deadline) {
			t.Fatal("the abandoned lease never lapsed")
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond)
	if got, err := b.Orphans(ctx); err != nil || len(got) != 0 {
		t.Fatalf("orphans after a stale Abandon: %+v %v (version %d renewed)", got, err, v2)
	}
}

// An orphan whose claimant records nothing (it died) is not lost: the
// claim lapses like a lease and the next pass, of any store, claims the
// task again. A task cancelled and failed elsewhere leaves the renewals
// of the store that ran it.
func TestOrphanClaimLapses(t *testing.T) {
	dsn := pgtest.Start(t).DSN()
	share := newShare()
	dead := newStore(t, dsn, Options{Share: share, Lease: time.Second})
	b := newStore(t, dsn, Options{Share: share, Lease: time.Second})
	c := newStore(t, dsn, Options{Share: share, Lease: time.Second})
	ctx := context.Background()
	if _, err := dead.Create(ctx, "o", task("t1", protocol.StateWorking)); err != nil {
		t.Fatal(err)
	}
	dead.Close()
	claim := func(s *Store, within time.Duration) []store.Orphan {
		t.Helper()
		deadline := time.Now().Add(within)
		for {
			got, err := s.Orphans(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) > 0 || time.Now().After(deadline) {
				return got
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	want := []store.Orphan{{ID: "t1", Owner: "o"}}
	if got := claim(b, 5*time.Second); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("first claim: %+v, want %+v", got, want)
	}
	if got, err := c.Orphans(ctx); err != nil || len(got) != 0 {
		t.Fatalf("a second claimant at once: %+v %v", got, err)
	}
	if got := claim(c, 5*time.Second); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the claim lapsed: %+v, want %+v", got, want)
	}

	// A task b runs, failed by c (a cancel there): b's renewal finds no
	// lease on it and stops renewing.
	v, err := b.Create(ctx, "o", task("t2", protocol.StateWorking))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Update(ctx, "t2", v, task("t2", protocol.StateCanceled)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		if !b.leases.Has("t2") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("b still renews a task settled elsewhere")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

package pgstore

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/internal/pgtest"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// One send made on two replicas at once, ten times on each: one task is
// written, and every caller is told of it.
func TestSendClaimedOnceAcrossReplicas(t *testing.T) {
	dsn := pgtest.Start(t).DSN()
	share := newShare()
	replicas := []*Store{newStore(t, dsn, Options{Share: share}), newStore(t, dsn, Options{Share: share})}
	ctx := ctx5(t)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		made    []string
		answers = map[string]int{}
	)
	for i := range 20 {
		wg.Go(func() {
			id := fmt.Sprint("t", i)
			_, err := replicas[i%2].CreateSend(ctx, "alice", store.Send{MessageID: "m1", Digest: "d1"}, task(id, protocol.StateWorking))
			mu.Lock()
			defer mu.Unlock()
			var se *store.SentError
			switch {
			case err == nil:
				made = append(made, id)
				answers[id]++
			case errors.As(err, &se) && se.Same:
				answers[se.TaskID]++
			default:
				t.Errorf("send %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if len(made) != 1 || answers[made[0]] != 20 {
		t.Fatalf("tasks made %v, answers by task %v", made, answers)
	}
}

package handler

import (
	"context"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// A cancel races a run writing chunks as fast as it can: the cancel is
// answered canceled, the run ends, and the canceled status stays the
// log's last event.
func TestCancelRacesChunks(t *testing.T) {
	// 5000 chunks, half the store's log bound, since a fast run reaches
	// the bound before a cancel arrives on a busy machine (the task would
	// then fail, and a cancel of it is rightly refused).
	agent := newChanAgent()
	svc := newTestService(t, agent)
	st := svc.opts.Store
	alice := Caller{Owner: "alice"}
	ctx := context.Background()
	ev, perr := svc.SendMessage(ctx, alice, &protocol.SendParams{Message: userMessage("m", "hello")})
	if perr != nil {
		t.Fatal(perr)
	}
	id := ev.Task.ID
	run := agent.next(t)
	go func() {
		for range 5000 {
			select {
			case run.events <- text("x").ev:
			case <-run.ctx.Done():
				return
			}
		}
	}()
	waitFor(t, "some chunks", func() bool {
		evs, _ := st.Events(ctx, id, "", false)
		return len(evs) > 10
	})
	canceled, perr := svc.CancelTask(ctx, alice, &protocol.TaskIDParams{ID: id})
	if perr != nil || canceled.Status.State != protocol.StateCanceled {
		t.Fatalf("cancel answered %+v, %v", canceled, perr)
	}
	<-run.ctx.Done()
	waitFor(t, "run to end", func() bool { return svc.opts.Runner.Running() == 0 })
	evs, err := st.Events(ctx, id, "", false)
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1].Event.Status
	if last == nil || last.Status.State != protocol.StateCanceled || !last.Final {
		t.Fatalf("the canceled status must be the last event; got %+v", evs[len(evs)-1].Event)
	}
}

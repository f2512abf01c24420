package handler

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// FailOrphans looks for running tasks whose process died (o, a store
// shared by processes), every interval until the runner closes, and
// records each failed with the generic message, as a broken run is. The
// run is not executed again: an agent call may have side effects, and
// the caller can send the message anew.
func (r *Runner) FailOrphans(st store.Store, o store.Orphans, every time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.workers.Add(1)
	go func() {
		defer r.workers.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-r.ctx.Done():
				return
			case <-t.C:
			}
			orphans, err := o.Orphans(r.ctx)
			if err != nil {
				if !errors.Is(err, context.Canceled) && !errors.Is(err, store.ErrClosed) {
					r.log.Warn("a2a: looking for the tasks of a stopped replica failed", zap.Error(err))
				}
				continue
			}
			var notify func(string, *protocol.Task, string, []protocol.Event)
			if n := r.notify.Load(); n != nil {
				notify = *n
			}
			for _, or := range orphans {
				failOrphan(r.log, st, or, notify)
			}
		}
	}()
}

// failOrphan records an orphaned running task as failed, unless it has
// settled meanwhile. A write that does not land is not retried here: the
// store's claim on the task lapses, and a later pass claims it again.
// notify, if set, queues the push notifications of the write.
func failOrphan(log *zap.Logger, st store.Store, or store.Orphan, notify func(string, *protocol.Task, string, []protocol.Event)) {
	ctx := context.Background()
	for range maxCASAttempts {
		rec, err := st.Get(ctx, or.Owner, or.ID)
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) {
				log.Warn("a2a: a stopped replica's task could not be read", zap.String("task_id", or.ID), zap.Error(err))
			}
			return
		}
		if s := rec.Task.Status.State; s.Terminal() || s.Interrupted() {
			return
		}
		t := *rec.Task // shared: change a copy
		msg := &protocol.Message{ID: newID(), ContextID: t.ContextID, TaskID: t.ID, Role: protocol.RoleAgent,
			Parts: []protocol.Part{{Kind: protocol.PartText, Text: failedText}}}
		t.Status = protocol.TaskStatus{State: protocol.StateFailed, Message: msg, Timestamp: time.Now().UTC()}
		ev := protocol.Event{Status: &protocol.StatusUpdate{TaskID: t.ID, ContextID: t.ContextID, Status: t.Status, Final: true}}
		_, last, err := st.Update(ctx, t.ID, rec.Version, &t, ev)
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			log.Warn("a2a: a stopped replica's task could not be recorded failed", zap.String("task_id", or.ID), zap.Error(err))
			return
		}
		if notify != nil {
			notify(or.Owner, &t, last, []protocol.Event{ev})
		}
		log.Warn("a2a: a task whose replica stopped while running it is recorded failed (it is not run again)", zap.String("task_id", or.ID))
		return
	}
}

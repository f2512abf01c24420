package handler

import (
	"context"
	"errors"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// A run writes the task through commit: each change read anew from the
// store when another hand wrote first, changes that do not settle the
// task held back while more come.

// commit applies mutate to the run's snapshot and writes it with the
// events mutate returns. On a version conflict it re-reads the task: if it
// became terminal meanwhile (a cancel won the race) the run stops with
// errStopped; otherwise the changes are applied again to the fresh
// snapshot.
//
// A change that does not settle the task is held back while the agent's
// next event is already in hand (ready), up to maxHeld changes, and
// written with the next commit: nothing waits for it, and the store is
// written once instead of twice. bench/run.sh's blocking-send steps (both
// stores) measure it.
func (ru *run) commit(mutate func(t *protocol.Task) []protocol.Event) error {
	for {
		// The snapshot is shared with the store and its readers (see
		// store.Store): mutate changes a copy of the Task struct and must
		// replace, not write into, the slices it changes. Appends go
		// through slices.Clip except where only this run ever appends.
		t := *ru.task
		if ru.upstreamRef != "" {
			t.Upstream = ru.upstreamRef
		}
		evs := mutate(&t)
		settling := settles(t.Status.State)
		if !settling && len(ru.redo) < maxHeld && ru.ready != nil && ru.ready() {
			ru.task = &t
			ru.pending = append(ru.pending, evs...)
			ru.redo = append(ru.redo, mutate)
			return nil
		}
		if len(ru.pending) > 0 {
			evs = append(ru.pending, evs...)
		}
		// Writes do not use the run's context: a canceled run must still
		// record how it ended. The store bounds its own I/O.
		ctx := context.Background()
		if settling {
			// Before the write: a stream relays the settling event as soon
			// as it is stored, and its client may send the next message at
			// once.
			ru.releaseSlot()
		}
		v, last, err := ru.st.Update(ctx, t.ID, ru.version, &t, evs...)
		if err == nil {
			if ru.notify != nil {
				ru.notify(ru.owner, &t, last, evs)
			}
			ru.task, ru.written, ru.version = &t, &t, v
			ru.dropHeld()
			if settling {
				ru.settle(&t)
			}
			return nil
		}
		if !errors.Is(err, store.ErrConflict) {
			// What was held back went with the write that failed.
			ru.abandonHeld()
			return err
		}
		rec, err := ru.st.Get(ctx, ru.owner, t.ID)
		if err != nil {
			ru.abandonHeld()
			return err
		}
		if rec.Task.Status.State.Terminal() {
			ru.abandonHeld()
			return errStopped
		}
		ru.task, ru.written, ru.version = rec.Task, rec.Task, rec.Version
		// The held changes again, on the fresh snapshot; mutate follows
		// at the top of the loop.
		redo := ru.redo
		ru.pending = nil
		for _, m := range redo {
			t := *ru.task
			ru.pending = append(ru.pending, m(&t)...)
			ru.task = &t
		}
		ru.redo = redo
	}
}

// maxHeld bounds the changes commit holds back: the write that settles a
// task is taken past the store's event bound (store.Store), and this
// bounds by how much.
const maxHeld = 8

// dropHeld forgets the changes held back (written, or lost with the
// write).
func (ru *run) dropHeld() {
	// Not reused: a store may keep the events it was given.
	ru.pending, ru.redo = nil, nil
}

// abandonHeld goes back to the snapshot as last written: the held
// changes were not (the write that carried them failed or lost).
func (ru *run) abandonHeld() {
	ru.task = ru.written
	ru.dropHeld()
}

// reread replaces the run's snapshot with the stored task; errStopped if
// that is terminal.
func (ru *run) reread() error {
	rec, err := ru.st.Get(context.Background(), ru.owner, ru.task.ID)
	if err != nil {
		return err
	}
	ru.dropHeld()
	if rec.Task.Status.State.Terminal() {
		return errStopped
	}
	ru.task, ru.written, ru.version = rec.Task, rec.Task, rec.Version
	return nil
}

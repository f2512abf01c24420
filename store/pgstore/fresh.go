package pgstore

import "time"

// A run watches its task's cancel right after its process created the
// task. Read from the row, that watch would be one more round trip for
// every send (a third of a blocking send's, bench/run.sh's durable
// step). Its process's listener hears every cancel of the scope; a task
// it creates running while the listener listens needs no read: a cancel
// can only follow the write that creates the task, and is heard unless
// the connection drops in between (its epoch says so; the watch then
// reads the row as any other).

// freshTask is a task this process is creating running, not watched
// yet.
type freshTask struct {
	epoch     uint64
	cancelled bool
	at        time.Time
}

// expect notes that task id is being created running, before the write
// is sent.
func (l *listener) expect(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.up.Load() {
		l.fresh[id] = &freshTask{epoch: l.epoch, at: time.Now()}
	}
}

// forget drops task id from the fresh tasks (its creation failed, or it
// settled unwatched).
func (l *listener) forget(id string) {
	l.mu.Lock()
	delete(l.fresh, id)
	l.mu.Unlock()
}

// watchFresh registers a watch on a fresh task without reading its row:
// ok is false when id is not fresh or the connection has dropped since
// the task was created. cancelled: its cancel was heard already.
func (l *listener) watchFresh(id string) (w *watch, cancelled, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.fresh[id]
	delete(l.fresh, id)
	if f == nil || f.epoch != l.epoch || !l.up.Load() {
		return nil, false, false
	}
	if f.cancelled {
		return nil, true, true
	}
	return l.watchLocked(id), false, true
}

// dropStaleFresh forgets the fresh tasks no watch came for within a
// sweep (a run that never started).
func (l *listener) dropStaleFresh(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, f := range l.fresh {
		if now.Sub(f.at) >= sweepEvery {
			delete(l.fresh, id)
		}
	}
}

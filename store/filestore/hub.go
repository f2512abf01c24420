package filestore

import (
	"strings"
	"sync"
)

// hub holds the in-process channels of a database's tasks, keyed by
// scope and id (watchKey): every Store on the file shares it, so that a
// write through the Store of one config wakes a stream that waits
// through another's (a reload keeps the file open under two Stores for
// a moment). Only this process writes the file, so waking in-process is
// all the waiting there is.
type hub struct {
	mu sync.Mutex
	w  map[string]*watch
}

// watch is one task's channels.
type watch struct {
	// notify is closed and dropped at each append; made on demand, so
	// appends nobody waits for allocate nothing.
	notify    chan struct{}
	cancelled bool
	cancelCh  chan struct{}
}

// watchKey is the hub's key of task id in scope: no scope holds a NUL
// (Open refuses one), so no two tasks share a key.
func watchKey(scope, id string) string { return scope + "\x00" + id }

// closedChan is handed out for what is ready already.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (h *hub) get(key string) *watch {
	if h.w == nil {
		h.w = map[string]*watch{}
	}
	w := h.w[key]
	if w == nil {
		w = &watch{}
		h.w[key] = w
	}
	return w
}

// wait returns the channel the next append to key closes.
func (h *hub) wait(key string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := h.get(key)
	if w.notify == nil {
		w.notify = make(chan struct{})
	}
	return w.notify
}

// wake releases the waiters of key, after an append is committed.
func (h *hub) wake(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.w[key]; w != nil && w.notify != nil {
		close(w.notify)
		w.notify = nil
		if !w.cancelled && w.cancelCh == nil {
			delete(h.w, key)
		}
	}
}

// drop wakes the waiters of a task that is gone and forgets it.
func (h *hub) drop(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w := h.w[key]; w != nil {
		if w.notify != nil {
			close(w.notify)
		}
		delete(h.w, key)
	}
}

// wakeScope wakes every waiter of scope: its Store is closing, and they
// find that out by reading.
func (h *hub) wakeScope(scope string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for key, w := range h.w {
		if strings.HasPrefix(key, scope+"\x00") && w.notify != nil {
			close(w.notify)
			w.notify = nil
		}
	}
}

// cancel marks key cancelled and closes its channel.
func (h *hub) cancel(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := h.get(key)
	if w.cancelled {
		return
	}
	w.cancelled = true
	if w.cancelCh != nil {
		close(w.cancelCh)
	}
}

// cancelSignal returns key's cancel channel, made on first use.
func (h *hub) cancelSignal(key string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := h.get(key)
	if w.cancelled {
		return closedChan
	}
	if w.cancelCh == nil {
		w.cancelCh = make(chan struct{})
	}
	return w.cancelCh
}

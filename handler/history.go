package handler

import "github.com/caddy-a2a/caddy-a2a/protocol"

// withHistoryLength returns t as a reply shows it: nil n keeps every
// message the server stores, 0 drops them (1.0 omits the member), N keeps
// the N most recent. Tasks from the store are shared and read-only (see
// store.Store), so a trimmed task is a copy.
func withHistoryLength(t *protocol.Task, n *int) *protocol.Task {
	if n == nil || len(t.History) == 0 || (*n > 0 && len(t.History) <= *n) {
		return t
	}
	c := *t
	keepLast(&c.History, *n)
	return &c
}

// keepLast cuts h to its last n messages (n <= 0 empties it).
func keepLast(h *[]protocol.Message, n int) {
	if n <= 0 {
		*h = nil
		return
	}
	if len(*h) > n {
		// A new array: the old one may be shared with stored snapshots,
		// and the dropped messages should not be kept alive by it.
		*h = append((*h)[:0:0], (*h)[len(*h)-n:]...)
	}
}

// keepHistory cuts h to what a task keeps and re-sends to the agent: the
// newest messages within both MaxHistory and MaxHistoryBytes, the newest
// one always. It weighs the messages it keeps, so it runs where history
// grows (a new turn, an agent message), not on every write of a run.
func (l *runLimits) keepHistory(h *[]protocol.Message) {
	hs := *h
	keep, size := 0, 0
	for i := len(hs) - 1; i >= 0 && keep < l.history; i-- {
		size += hs[i].Size()
		if keep > 0 && size > l.historyBytes {
			break
		}
		keep++
	}
	if keep < len(hs) {
		// A new array: the old one may be shared with stored snapshots,
		// and the dropped messages should not be kept alive by it.
		*h = append(hs[:0:0], hs[len(hs)-keep:]...)
	}
}

// closesStream reports whether a task in state s ends a stream and a
// blocking wait: terminal states and input-required do; auth-required
// keeps streams open (A2A 1.0 §7.6.1) but does end a blocking send.
func closesStream(s protocol.TaskState) bool {
	return s.Terminal() || s == protocol.StateInputRequired
}

// settles reports whether a blocking send stops waiting at state s:
// terminal or interrupted (input-required, auth-required).
func settles(s protocol.TaskState) bool {
	return s.Terminal() || s.Interrupted()
}

package handler

import "github.com/caddy-a2a/caddy-a2a/protocol"

// applyHistoryLength trims t's history for a reply: nil keeps everything
// the server stores, 0 drops it (1.0 omits the member), N keeps the N most
// recent messages.
func applyHistoryLength(t *protocol.Task, n *int) {
	if n == nil {
		return
	}
	keepLast(&t.History, *n)
}

// keepLast cuts h to its last n messages (n <= 0 empties it).
func keepLast(h *[]protocol.Message, n int) {
	if n <= 0 {
		*h = nil
		return
	}
	if len(*h) > n {
		// Copy down so the dropped messages are not kept alive by the
		// backing array of a snapshot that may live long in a store.
		*h = append((*h)[:0:0], (*h)[len(*h)-n:]...)
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

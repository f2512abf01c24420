package memory

import (
	"sort"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// eventLog is the event log of a task that is not finished. An event's id
// is its position in the log as first written, from 1. Compaction
// (store.Compact, when the task settles) merges a turn's chunks and drops
// their positions, so after it the positions have gaps and are kept in
// pos; until then pos is nil and the position of evs[i] is i+1, which
// costs nothing to store.
type eventLog struct {
	evs []protocol.Event
	pos []uint32
	// last is the position of the newest event (0: none).
	last int
	// done is how many of evs are compacted already: the turns before the
	// current one.
	done int
	// bytes is the content size of evs (protocol.Event.Size).
	bytes int
}

// at returns the position of evs[i].
func (l *eventLog) at(i int) int {
	if l.pos == nil {
		return i + 1
	}
	return int(l.pos[i])
}

// after returns the index of the first event whose position is past n.
func (l *eventLog) after(n int) int {
	if l.pos == nil {
		return min(max(n, 0), len(l.evs))
	}
	return sort.Search(len(l.pos), func(i int) bool { return int(l.pos[i]) > n })
}

// add appends evs. The array may be shared with readers of earlier
// snapshots of the log, who never look past their length, so appending in
// place is safe (only the task's one writer appends).
func (l *eventLog) add(evs []protocol.Event) {
	for i := range evs {
		l.last++
		if l.pos != nil {
			l.pos = append(l.pos, uint32(l.last))
		}
		l.bytes += evs[i].Size()
	}
	if l.evs == nil {
		// A new log: room for the few events a run adds next.
		l.evs = make([]protocol.Event, 0, len(evs)+3)
	}
	l.evs = append(l.evs, evs...)
}

// compact merges the chunks written since the last compaction (see
// store.Compact) into new arrays: readers of earlier snapshots keep the
// old ones.
func (l *eventLog) compact() {
	tail := l.evs[l.done:]
	out, at := store.Compact(tail)
	if out == nil {
		l.done = len(l.evs)
		return
	}
	evs := make([]protocol.Event, l.done, l.done+len(out))
	copy(evs, l.evs[:l.done])
	pos := make([]uint32, l.done, l.done+len(out))
	for i := range l.done {
		pos[i] = uint32(l.at(i))
	}
	bytes := 0
	for i := range evs {
		bytes += evs[i].Size()
	}
	for k := range out {
		evs = append(evs, out[k])
		pos = append(pos, uint32(l.at(l.done+at[k])))
		bytes += out[k].Size()
	}
	l.evs, l.pos, l.bytes, l.done = evs, pos, bytes, len(evs)
}

// eventID is the id of the event at position n of a log.
func eventID(n int) string { return store.EventID(uint64(n)) }

package memory

import (
	"sync"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	packfmt "github.com/caddy-a2a/caddy-a2a/store/internal/pack"
)

// A finished task is kept packed: its snapshot and its event log encoded
// into one byte slice. The store holds up to max_tasks of them for an hour,
// and as Go values each is ~20 objects full of pointers that every garbage
// collection has to trace (under load that marking cost a send ~9 µs of
// CPU); a byte slice is one object the collector never looks into. Reads of
// a finished task are rare (GetTask, ListTasks, a stream catching up on the
// last events) and unpack what they need.
//
// The format is private to this process (nothing is persisted): varints for
// lengths and numbers, and a "nil or length+1" prefix for every slice and
// pointer, so that nil and empty survive the round trip and a copy compares
// reflect.DeepEqual to the original.

// packed is a finished task's snapshot and log.
type packed struct {
	// data holds the snapshot, then the events in log order, each after
	// the distance of its position from the one before.
	data []byte
	// events is how many events the log holds, last the position of the
	// newest (0: none); eventsAt is where in data the first one starts.
	events, last, eventsAt int
	// id and contextID are the task's, which every event and message of
	// it repeats: the packed form writes them once (packfmt.Writer) and a read
	// hands out these strings again, so a long contextID costs its bytes
	// once per task, not once per event.
	id, contextID string
}

// packBufs holds scratch buffers for pack: a packed task is built in one
// and copied out at its exact size.
var packBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, 2048)
	return &b
}}

// errCorrupt means a packed task did not decode: a bug, never user input.
var errCorrupt = packfmt.ErrCorrupt

// pack encodes t and its log: l, then more (at the positions after l's).
func pack(t *protocol.Task, l *eventLog, more []protocol.Event) *packed {
	scratch := packBufs.Get().(*[]byte)
	defer func() {
		if cap(*scratch) <= 64<<10 {
			packBufs.Put(scratch)
		}
	}()
	w := packfmt.Writer{B: (*scratch)[:0], TID: t.ID, CID: t.ContextID}
	defer func() { *scratch = w.B }()
	w.Task(t)
	p := &packed{eventsAt: len(w.B), events: len(l.evs) + len(more), last: l.last + len(more), id: t.ID, contextID: t.ContextID}
	prev := 0
	for i := range l.evs {
		at := l.at(i)
		w.Uint(uint64(at - prev))
		prev = at
		w.Event(&l.evs[i])
	}
	for i := range more {
		w.Uint(1)
		w.Event(&more[i])
	}
	// One exact-size copy: the slice lives as long as the task.
	p.data = append(make([]byte, 0, len(w.B)), w.B...)
	return p
}

// task decodes the snapshot as v shows it (the zero View: all of it).
func (p *packed) task(v store.View) (*protocol.Task, error) {
	r := packfmt.Reader{B: p.data[:p.eventsAt], TID: p.id, CID: p.contextID}
	t := r.TaskView(v)
	return t, r.Done()
}

// eventsAfter decodes the events whose position is past n, with their
// positions. The ones before are read past without being built.
func (p *packed) eventsAfter(n int) ([]protocol.Event, []int, error) {
	r := packfmt.Reader{B: p.data[p.eventsAt:], TID: p.id, CID: p.contextID}
	var evs []protocol.Event
	var at []int
	pos := 0
	for range p.events {
		pos += int(r.Uint())
		keep := pos > n
		r.Skip = !keep
		var ev protocol.Event
		r.Event(&ev)
		if keep && r.Err == nil {
			evs = append(evs, ev)
			at = append(at, pos)
		}
	}
	r.Skip = false
	return evs, at, r.Done()
}

// unpackAll decodes the snapshot and the whole log.
func (p *packed) unpackAll() (*protocol.Task, eventLog, error) {
	t, err := p.task(store.View{})
	if err != nil {
		return nil, eventLog{}, err
	}
	evs, at, err := p.eventsAfter(0)
	if err != nil {
		return nil, eventLog{}, err
	}
	l := eventLog{evs: evs, last: p.last, done: len(evs)}
	for i := range evs {
		l.bytes += evs[i].Size()
		if at[i] != i+1 && l.pos == nil {
			l.pos = make([]uint32, i, len(evs))
			for j := range i {
				l.pos[j] = uint32(j + 1)
			}
		}
		if l.pos != nil {
			l.pos = append(l.pos, uint32(at[i]))
		}
	}
	return t, l, nil
}

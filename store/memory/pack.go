package memory

import (
	"encoding/binary"
	"errors"
	"sync"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
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
	// it repeats: the packed form writes them once (packer.id) and a read
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
var errCorrupt = errors.New("memory: corrupt packed task")

// pack encodes t and its log: l, then more (at the positions after l's).
func pack(t *protocol.Task, l *eventLog, more []protocol.Event) *packed {
	scratch := packBufs.Get().(*[]byte)
	defer func() {
		if cap(*scratch) <= 64<<10 {
			packBufs.Put(scratch)
		}
	}()
	w := packer{b: (*scratch)[:0], tid: t.ID, cid: t.ContextID}
	defer func() { *scratch = w.b }()
	w.task(t)
	p := &packed{eventsAt: len(w.b), events: len(l.evs) + len(more), last: l.last + len(more), id: t.ID, contextID: t.ContextID}
	prev := 0
	for i := range l.evs {
		at := l.at(i)
		w.uint(uint64(at - prev))
		prev = at
		w.event(&l.evs[i])
	}
	for i := range more {
		w.uint(1)
		w.event(&more[i])
	}
	// One exact-size copy: the slice lives as long as the task.
	p.data = append(make([]byte, 0, len(w.b)), w.b...)
	return p
}

// task decodes the snapshot as v shows it (the zero View: all of it).
func (p *packed) task(v store.View) (*protocol.Task, error) {
	r := unpacker{b: p.data[:p.eventsAt], tid: p.id, cid: p.contextID}
	t := r.taskView(v)
	return t, r.done()
}

// eventsAfter decodes the events whose position is past n, with their
// positions. The ones before are read past without being built.
func (p *packed) eventsAfter(n int) ([]protocol.Event, []int, error) {
	r := unpacker{b: p.data[p.eventsAt:], tid: p.id, cid: p.contextID}
	var evs []protocol.Event
	var at []int
	pos := 0
	for range p.events {
		pos += int(r.uint())
		keep := pos > n
		r.skip = !keep
		var ev protocol.Event
		r.event(&ev)
		if keep && r.err == nil {
			evs = append(evs, ev)
			at = append(at, pos)
		}
	}
	r.skip = false
	return evs, at, r.done()
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

type packer struct {
	b []byte
	// tid and cid are the packed task's id and context id (see id).
	tid, cid string
}

// id writes a task or context id: 0 for the packed task's own id, 1 for
// its context id, else the string's length+2 and its bytes.
func (w *packer) id(s string) {
	switch s {
	case w.tid:
		w.uint(0)
	case w.cid:
		w.uint(1)
	default:
		w.uint(uint64(len(s)) + 2)
		w.b = append(w.b, s...)
	}
}

func (w *packer) uint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *packer) int(v int64)   { w.b = binary.AppendVarint(w.b, v) }

func (w *packer) bool(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

func (w *packer) str(s string) {
	w.uint(uint64(len(s)))
	w.b = append(w.b, s...)
}

// bytes writes nil as 0 and anything else as length+1.
func (w *packer) bytes(b []byte) {
	if b == nil {
		w.uint(0)
		return
	}
	w.uint(uint64(len(b)) + 1)
	w.b = append(w.b, b...)
}

// count writes a slice's length the way bytes does, nil as 0.
func (w *packer) count(isNil bool, n int) {
	if isNil {
		w.uint(0)
	} else {
		w.uint(uint64(n) + 1)
	}
}

func (w *packer) strs(s []string) {
	w.count(s == nil, len(s))
	for _, v := range s {
		w.str(v)
	}
}

// when writes the zero time as 0, a UTC time (all the handler makes) as 1
// and its instant, any other as 2, its instant and its zone's name and
// offset at that instant: it comes back in a fixed zone of that name and
// offset, the same instant shown the same way.
func (w *packer) when(t time.Time) {
	switch {
	case t == (time.Time{}):
		w.uint(0)
	case t == t.UTC():
		w.uint(1)
		w.int(t.Unix())
		w.uint(uint64(t.Nanosecond()))
	default:
		name, offset := t.Zone()
		w.uint(2)
		w.int(t.Unix())
		w.uint(uint64(t.Nanosecond()))
		w.str(name)
		w.int(int64(offset))
	}
}

func (w *packer) part(p *protocol.Part) {
	w.int(int64(p.Kind))
	w.str(p.Text)
	w.bytes(p.Data)
	w.str(p.URL)
	w.bytes(p.Raw)
	w.str(p.Filename)
	w.str(p.MediaType)
	w.bytes(p.Metadata)
}

func (w *packer) parts(ps []protocol.Part) {
	w.count(ps == nil, len(ps))
	for i := range ps {
		w.part(&ps[i])
	}
}

func (w *packer) message(m *protocol.Message) {
	w.str(m.ID)
	w.id(m.ContextID)
	w.id(m.TaskID)
	w.int(int64(m.Role))
	w.parts(m.Parts)
	w.bytes(m.Metadata)
	w.strs(m.Extensions)
	w.strs(m.ReferenceTaskIDs)
}

func (w *packer) messagePtr(m *protocol.Message) {
	w.bool(m != nil)
	if m != nil {
		w.message(m)
	}
}

func (w *packer) status(s *protocol.TaskStatus) {
	w.int(int64(s.State))
	w.messagePtr(s.Message)
	w.when(s.Timestamp)
}

func (w *packer) artifact(a *protocol.Artifact) {
	w.str(a.ID)
	w.str(a.Name)
	w.str(a.Description)
	w.parts(a.Parts)
	w.bytes(a.Metadata)
	w.strs(a.Extensions)
}

func (w *packer) task(t *protocol.Task) {
	w.id(t.ID)
	w.id(t.ContextID)
	w.status(&t.Status)
	w.count(t.Artifacts == nil, len(t.Artifacts))
	for i := range t.Artifacts {
		w.artifact(&t.Artifacts[i])
	}
	w.count(t.History == nil, len(t.History))
	for i := range t.History {
		w.message(&t.History[i])
	}
	w.bytes(t.Metadata)
	w.str(t.Upstream)
}

func (w *packer) event(e *protocol.Event) {
	w.bool(e.Task != nil)
	if e.Task != nil {
		w.task(e.Task)
	}
	w.messagePtr(e.Message)
	w.bool(e.Status != nil)
	if s := e.Status; s != nil {
		w.id(s.TaskID)
		w.id(s.ContextID)
		w.status(&s.Status)
		w.bool(s.Final)
		w.bytes(s.Metadata)
	}
	w.bool(e.Artifact != nil)
	if a := e.Artifact; a != nil {
		w.id(a.TaskID)
		w.id(a.ContextID)
		w.artifact(&a.Artifact)
		w.bool(a.Append)
		w.bool(a.LastChunk)
		w.bytes(a.Metadata)
	}
}

// unpacker reads what packer wrote; the first error sticks and later
// reads return zero values.
type unpacker struct {
	b   []byte
	err error
	// skip reads past values without building them: strings, byte
	// slices, slices and pointers come back zero, and nothing is
	// allocated, so a reader pays for what it keeps.
	skip bool
	// tid and cid are the packed task's id and context id (see id).
	tid, cid string
}

// id reads what packer.id wrote; the task's own ids come back as the
// very strings the packed task holds.
func (r *unpacker) id() string {
	switch n := r.uint(); n {
	case 0:
		return r.tid
	case 1:
		return r.cid
	default:
		b := r.take(n - 2)
		if r.skip {
			return ""
		}
		return string(b)
	}
}

func (r *unpacker) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = errCorrupt
	}
	return r.err
}

func (r *unpacker) uint() uint64 { return varint(r, binary.Uvarint) }
func (r *unpacker) int() int64   { return varint(r, binary.Varint) }

// varint reads one varint with read (binary.Uvarint or binary.Varint).
func varint[T uint64 | int64](r *unpacker, read func([]byte) (T, int)) T {
	if r.err != nil {
		return 0
	}
	v, n := read(r.b)
	if n <= 0 {
		r.err = errCorrupt
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *unpacker) bool() bool {
	b := r.take(1)
	if b == nil {
		return false
	}
	if b[0] > 1 {
		r.err = errCorrupt
	}
	return b[0] == 1
}

// take returns the next n bytes (nil after an error or past the end).
func (r *unpacker) take(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = errCorrupt
		return nil
	}
	out := r.b[:n:n]
	r.b = r.b[n:]
	return out
}

func (r *unpacker) str() string {
	b := r.take(r.uint())
	if r.skip {
		return ""
	}
	return string(b)
}

// bytes returns a copy, so no value a reader gets aliases the packed
// slice (which would keep it alive and let a caller's write reach it).
func (r *unpacker) bytes() []byte {
	n := r.uint()
	if n == 0 {
		return nil
	}
	b := r.take(n - 1)
	if b == nil || r.skip {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

// count reads a slice length written by packer.count: -1 for nil.
func (r *unpacker) count() int {
	n := r.uint()
	if n == 0 || r.err != nil {
		return -1
	}
	if n-1 > uint64(len(r.b)) { // every element takes at least a byte
		r.err = errCorrupt
		return -1
	}
	return int(n - 1)
}

func (r *unpacker) strs() []string {
	n := r.count()
	if n < 0 {
		return nil
	}
	if r.skip {
		for range n {
			r.str()
		}
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.str()
	}
	return out
}

func (r *unpacker) when() time.Time {
	switch r.uint() {
	case 0:
		return time.Time{}
	case 1:
		sec := r.int()
		nsec := r.uint()
		return time.Unix(sec, int64(nsec)).UTC()
	case 2:
		sec := r.int()
		nsec := r.uint()
		name := r.str()
		offset := r.int()
		if r.skip {
			return time.Time{}
		}
		return time.Unix(sec, int64(nsec)).In(time.FixedZone(name, int(offset)))
	}
	r.err = errCorrupt
	return time.Time{}
}

func (r *unpacker) part(p *protocol.Part) {
	p.Kind = protocol.PartKind(r.int())
	p.Text = r.str()
	p.Data = r.bytes()
	p.URL = r.str()
	p.Raw = r.bytes()
	p.Filename = r.str()
	p.MediaType = r.str()
	p.Metadata = r.bytes()
}

func (r *unpacker) parts() []protocol.Part {
	n := r.count()
	if n < 0 {
		return nil
	}
	if r.skip {
		var p protocol.Part
		for range n {
			r.part(&p)
		}
		return nil
	}
	out := make([]protocol.Part, n)
	for i := range out {
		r.part(&out[i])
	}
	return out
}

func (r *unpacker) message(m *protocol.Message) {
	m.ID = r.str()
	m.ContextID = r.id()
	m.TaskID = r.id()
	m.Role = protocol.Role(r.int())
	m.Parts = r.parts()
	m.Metadata = r.bytes()
	m.Extensions = r.strs()
	m.ReferenceTaskIDs = r.strs()
}

func (r *unpacker) messagePtr() *protocol.Message {
	if !r.bool() {
		return nil
	}
	if r.skip {
		var m protocol.Message
		r.message(&m)
		return nil
	}
	m := new(protocol.Message)
	r.message(m)
	return m
}

func (r *unpacker) status(s *protocol.TaskStatus) {
	s.State = protocol.TaskState(r.int())
	s.Message = r.messagePtr()
	s.Timestamp = r.when()
}

func (r *unpacker) artifact(a *protocol.Artifact) {
	a.ID = r.str()
	a.Name = r.str()
	a.Description = r.str()
	a.Parts = r.parts()
	a.Metadata = r.bytes()
	a.Extensions = r.strs()
}

func (r *unpacker) task() *protocol.Task { return r.taskView(store.View{}) }

// taskView reads a task, building only what v keeps: artifacts are read
// past when v omits them, and history messages older than the ones v
// keeps.
func (r *unpacker) taskView(v store.View) *protocol.Task {
	if r.skip {
		var t protocol.Task
		r.taskInto(&t, v)
		return nil
	}
	t := new(protocol.Task)
	r.taskInto(t, v)
	return t
}

func (r *unpacker) taskInto(t *protocol.Task, v store.View) {
	t.ID = r.id()
	t.ContextID = r.id()
	r.status(&t.Status)
	if n := r.count(); n >= 0 {
		skip := r.skip
		r.skip = skip || v.OmitArtifacts
		if !r.skip {
			t.Artifacts = make([]protocol.Artifact, n)
		}
		var a protocol.Artifact
		for i := range n {
			if r.skip {
				r.artifact(&a)
			} else {
				r.artifact(&t.Artifacts[i])
			}
		}
		r.skip = skip
	}
	if n := r.count(); n >= 0 {
		keep := n
		switch {
		case v.History < 0:
			keep = 0
		case v.History > 0:
			keep = min(n, v.History)
		}
		skip := r.skip
		if !skip && (keep > 0 || v.History == 0) {
			t.History = make([]protocol.Message, keep)
		}
		var m protocol.Message
		for i := range n {
			if i < n-keep {
				r.skip = true
				r.message(&m)
				r.skip = skip
				continue
			}
			if skip {
				r.message(&m)
			} else {
				r.message(&t.History[i-(n-keep)])
			}
		}
	}
	t.Metadata = r.bytes()
	t.Upstream = r.str()
}

func (r *unpacker) event(e *protocol.Event) {
	if r.bool() {
		e.Task = r.task()
	}
	e.Message = r.messagePtr()
	if r.bool() {
		var s protocol.StatusUpdate
		s.TaskID = r.id()
		s.ContextID = r.id()
		r.status(&s.Status)
		s.Final = r.bool()
		s.Metadata = r.bytes()
		if !r.skip {
			kept := s
			e.Status = &kept
		}
	}
	if r.bool() {
		var a protocol.ArtifactUpdate
		a.TaskID = r.id()
		a.ContextID = r.id()
		r.artifact(&a.Artifact)
		a.Append = r.bool()
		a.LastChunk = r.bool()
		a.Metadata = r.bytes()
		if !r.skip {
			kept := a
			e.Artifact = &kept
		}
	}
}

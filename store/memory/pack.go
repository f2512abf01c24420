package memory

import (
	"encoding/binary"
	"errors"
	"sync"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
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
	// data holds the snapshot, then the events in log order.
	data []byte
	// events is how many events the log holds; eventsAt is where in data
	// the first one starts.
	events, eventsAt int
}

// packBufs holds scratch buffers for pack: a packed task is built in one
// and copied out at its exact size.
var packBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, 2048)
	return &b
}}

// errCorrupt means a packed task did not decode: a bug, never user input.
var errCorrupt = errors.New("memory: corrupt packed task")

// pack encodes t and the log made of logs, in order.
func pack(t *protocol.Task, logs ...[]protocol.Event) *packed {
	scratch := packBufs.Get().(*[]byte)
	defer func() {
		if cap(*scratch) <= 64<<10 {
			packBufs.Put(scratch)
		}
	}()
	w := packer{b: (*scratch)[:0]}
	defer func() { *scratch = w.b }()
	w.task(t)
	p := &packed{eventsAt: len(w.b)}
	for _, log := range logs {
		for i := range log {
			w.event(&log[i])
		}
		p.events += len(log)
	}
	// One exact-size copy: the slice lives as long as the task.
	p.data = append(make([]byte, 0, len(w.b)), w.b...)
	return p
}

// task decodes the snapshot.
func (p *packed) task() (*protocol.Task, error) {
	r := unpacker{b: p.data[:p.eventsAt]}
	t := r.task()
	return t, r.done()
}

// eventsFrom decodes the events after the first n.
func (p *packed) eventsFrom(n int) ([]protocol.Event, error) {
	r := unpacker{b: p.data[p.eventsAt:]}
	out := make([]protocol.Event, 0, p.events-n)
	for i := range p.events {
		var ev protocol.Event
		r.event(&ev)
		if i >= n {
			out = append(out, ev)
		}
	}
	return out, r.done()
}

// unpackAll decodes the snapshot and the whole log.
func (p *packed) unpackAll() (*protocol.Task, []protocol.Event, error) {
	t, err := p.task()
	if err != nil {
		return nil, nil, err
	}
	evs, err := p.eventsFrom(0)
	return t, evs, err
}

type packer struct{ b []byte }

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
	w.str(m.ContextID)
	w.str(m.TaskID)
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
	w.str(t.ID)
	w.str(t.ContextID)
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
}

func (w *packer) event(e *protocol.Event) {
	w.bool(e.Task != nil)
	if e.Task != nil {
		w.task(e.Task)
	}
	w.messagePtr(e.Message)
	w.bool(e.Status != nil)
	if s := e.Status; s != nil {
		w.str(s.TaskID)
		w.str(s.ContextID)
		w.status(&s.Status)
		w.bool(s.Final)
		w.bytes(s.Metadata)
	}
	w.bool(e.Artifact != nil)
	if a := e.Artifact; a != nil {
		w.str(a.TaskID)
		w.str(a.ContextID)
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

func (r *unpacker) str() string { return string(r.take(r.uint())) }

// bytes returns a copy, so no value a reader gets aliases the packed
// slice (which would keep it alive and let a caller's write reach it).
func (r *unpacker) bytes() []byte {
	n := r.uint()
	if n == 0 {
		return nil
	}
	b := r.take(n - 1)
	if b == nil {
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
	out := make([]protocol.Part, n)
	for i := range out {
		r.part(&out[i])
	}
	return out
}

func (r *unpacker) message(m *protocol.Message) {
	m.ID = r.str()
	m.ContextID = r.str()
	m.TaskID = r.str()
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

func (r *unpacker) task() *protocol.Task {
	t := new(protocol.Task)
	t.ID = r.str()
	t.ContextID = r.str()
	r.status(&t.Status)
	if n := r.count(); n >= 0 {
		t.Artifacts = make([]protocol.Artifact, n)
		for i := range t.Artifacts {
			r.artifact(&t.Artifacts[i])
		}
	}
	if n := r.count(); n >= 0 {
		t.History = make([]protocol.Message, n)
		for i := range t.History {
			r.message(&t.History[i])
		}
	}
	t.Metadata = r.bytes()
	return t
}

func (r *unpacker) event(e *protocol.Event) {
	if r.bool() {
		e.Task = r.task()
	}
	e.Message = r.messagePtr()
	if r.bool() {
		s := new(protocol.StatusUpdate)
		s.TaskID = r.str()
		s.ContextID = r.str()
		r.status(&s.Status)
		s.Final = r.bool()
		s.Metadata = r.bytes()
		e.Status = s
	}
	if r.bool() {
		a := new(protocol.ArtifactUpdate)
		a.TaskID = r.str()
		a.ContextID = r.str()
		r.artifact(&a.Artifact)
		a.Append = r.bool()
		a.LastChunk = r.bool()
		a.Metadata = r.bytes()
		e.Artifact = a
	}
}

package redisstore

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// The snapshot and every event are kept in Redis in a compact binary form:
// varints for numbers and lengths, and a "nil or length+1" prefix for every
// slice and pointer, so that nil and empty survive the round trip and a
// decoded value compares reflect.DeepEqual to the one written. It is the
// memory store's packed form without the log framing. The first byte is
// the format's version, so that replicas of a later release can tell an
// older record from a corrupt one.

// codecVersion is the first byte of every encoded value.
const codecVersion = 1

var errCorrupt = errors.New("redisstore: corrupt record")

// encodeTask returns t encoded.
func encodeTask(dst []byte, t *protocol.Task) []byte {
	w := packer{b: append(dst, codecVersion), tid: t.ID}
	w.task(t)
	return w.b
}

// decodeTask decodes what encodeTask wrote for the task id, building only
// what v keeps.
func decodeTask(b []byte, id string, v store.View) (*protocol.Task, error) {
	r, err := newUnpacker(b, id)
	if err != nil {
		return nil, err
	}
	t := r.taskView(v)
	if err := r.done(); err != nil {
		return nil, err
	}
	return t, nil
}

// encodeEvent returns e, an event of task id, encoded.
func encodeEvent(dst []byte, id string, e *protocol.Event) []byte {
	w := packer{b: append(dst, codecVersion), tid: id}
	w.event(e)
	return w.b
}

// decodeEvent decodes what encodeEvent wrote for the task id.
func decodeEvent(b []byte, id string) (protocol.Event, error) {
	var e protocol.Event
	r, err := newUnpacker(b, id)
	if err != nil {
		return e, err
	}
	r.event(&e)
	return e, r.done()
}

func newUnpacker(b []byte, id string) (*unpacker, error) {
	if len(b) == 0 || b[0] != codecVersion {
		return nil, errCorrupt
	}
	return &unpacker{b: b[1:], tid: id}, nil
}

type packer struct {
	b []byte
	// tid is the task's id, cid always "" (see id): a task's context id
	// may change between updates, its id never does, and an event is
	// decoded without its snapshot.
	tid, cid string
}

// id writes a task or context id: 0 for the task's own id, 1 for the
// empty string, else the string's length+2 and its bytes.
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
	// tid is the task's id, cid always "" (see id): a task's context id
	// may change between updates, its id never does, and an event is
	// decoded without its snapshot.
	tid, cid string
}

// id reads what packer.id wrote.
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

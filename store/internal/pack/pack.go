// Package pack is the compact binary encoding of tasks and events that the
// stores keep: the memory store packs finished tasks in it, the Redis
// store writes every snapshot and event in it. Varints, length-prefixed
// strings, nil kept apart from empty, and the task's own ids written once.
// It is not a wire format: only a store of this module reads it back.
package pack

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// ErrCorrupt means an encoding did not decode: a bug or a damaged record,
// never user input.
var ErrCorrupt = errors.New("store: corrupt packed task")

type Writer struct {
	// B is the encoding so far.
	B []byte
	// tid and cid are the packed task's id and context id (see id).
	TID, CID string
}

// id writes a task or context id: 0 for the packed task's own id, 1 for
// its context id, else the string's length+2 and its bytes.
func (w *Writer) id(s string) {
	switch s {
	case w.TID:
		w.Uint(0)
	case w.CID:
		w.Uint(1)
	default:
		w.Uint(uint64(len(s)) + 2)
		w.B = append(w.B, s...)
	}
}

// Uint writes an unsigned varint.
func (w *Writer) Uint(v uint64) { w.B = binary.AppendUvarint(w.B, v) }
func (w *Writer) int(v int64)   { w.B = binary.AppendVarint(w.B, v) }

func (w *Writer) bool(v bool) {
	if v {
		w.B = append(w.B, 1)
	} else {
		w.B = append(w.B, 0)
	}
}

func (w *Writer) str(s string) {
	w.Uint(uint64(len(s)))
	w.B = append(w.B, s...)
}

// bytes writes nil as 0 and anything else as length+1.
func (w *Writer) bytes(b []byte) {
	if b == nil {
		w.Uint(0)
		return
	}
	w.Uint(uint64(len(b)) + 1)
	w.B = append(w.B, b...)
}

// count writes a slice's length the way bytes does, nil as 0.
func (w *Writer) count(isNil bool, n int) {
	if isNil {
		w.Uint(0)
	} else {
		w.Uint(uint64(n) + 1)
	}
}

func (w *Writer) strs(s []string) {
	w.count(s == nil, len(s))
	for _, v := range s {
		w.str(v)
	}
}

// when writes the zero time as 0, a UTC time (all the handler makes) as 1
// and its instant, any other as 2, its instant and its zone's name and
// offset at that instant: it comes back in a fixed zone of that name and
// offset, the same instant shown the same way.
func (w *Writer) when(t time.Time) {
	switch {
	case t == (time.Time{}):
		w.Uint(0)
	case t == t.UTC():
		w.Uint(1)
		w.int(t.Unix())
		w.Uint(uint64(t.Nanosecond()))
	default:
		name, offset := t.Zone()
		w.Uint(2)
		w.int(t.Unix())
		w.Uint(uint64(t.Nanosecond()))
		w.str(name)
		w.int(int64(offset))
	}
}

func (w *Writer) part(p *protocol.Part) {
	w.int(int64(p.Kind))
	w.str(p.Text)
	w.bytes(p.Data)
	w.str(p.URL)
	w.bytes(p.Raw)
	w.str(p.Filename)
	w.str(p.MediaType)
	w.bytes(p.Metadata)
}

func (w *Writer) parts(ps []protocol.Part) {
	w.count(ps == nil, len(ps))
	for i := range ps {
		w.part(&ps[i])
	}
}

func (w *Writer) message(m *protocol.Message) {
	w.str(m.ID)
	w.id(m.ContextID)
	w.id(m.TaskID)
	w.int(int64(m.Role))
	w.parts(m.Parts)
	w.bytes(m.Metadata)
	w.strs(m.Extensions)
	w.strs(m.ReferenceTaskIDs)
}

func (w *Writer) messagePtr(m *protocol.Message) {
	w.bool(m != nil)
	if m != nil {
		w.message(m)
	}
}

func (w *Writer) status(s *protocol.TaskStatus) {
	w.int(int64(s.State))
	w.messagePtr(s.Message)
	w.when(s.Timestamp)
}

func (w *Writer) artifact(a *protocol.Artifact) {
	w.str(a.ID)
	w.str(a.Name)
	w.str(a.Description)
	w.parts(a.Parts)
	w.bytes(a.Metadata)
	w.strs(a.Extensions)
}

// Task writes t.
func (w *Writer) Task(t *protocol.Task) {
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

// Event writes e.
func (w *Writer) Event(e *protocol.Event) {
	w.bool(e.Task != nil)
	if e.Task != nil {
		w.Task(e.Task)
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
type Reader struct {
	// B is what is left to read; Err the first failure.
	B   []byte
	Err error
	// skip reads past values without building them: strings, byte
	// slices, slices and pointers come back zero, and nothing is
	// allocated, so a reader pays for what it keeps.
	Skip bool
	// tid and cid are the packed task's id and context id (see id).
	TID, CID string
}

// id reads what Writer.id wrote; the task's own ids come back as the
// very strings the packed task holds.
func (r *Reader) id() string {
	switch n := r.Uint(); n {
	case 0:
		return r.TID
	case 1:
		return r.CID
	default:
		b := r.take(n - 2)
		if r.Skip {
			return ""
		}
		return string(b)
	}
}

// Done is the read's outcome: ErrCorrupt if anything failed or bytes are left.
func (r *Reader) Done() error {
	if r.Err == nil && len(r.B) != 0 {
		r.Err = ErrCorrupt
	}
	return r.Err
}

// Uint reads an unsigned varint.
func (r *Reader) Uint() uint64 { return varint(r, binary.Uvarint) }
func (r *Reader) int() int64   { return varint(r, binary.Varint) }

// varint reads one varint with read (binary.Uvarint or binary.Varint).
func varint[T uint64 | int64](r *Reader, read func([]byte) (T, int)) T {
	if r.Err != nil {
		return 0
	}
	v, n := read(r.B)
	if n <= 0 {
		r.Err = ErrCorrupt
		return 0
	}
	r.B = r.B[n:]
	return v
}

func (r *Reader) bool() bool {
	b := r.take(1)
	if b == nil {
		return false
	}
	if b[0] > 1 {
		r.Err = ErrCorrupt
	}
	return b[0] == 1
}

// take returns the next n bytes (nil after an error or past the end).
func (r *Reader) take(n uint64) []byte {
	if r.Err != nil {
		return nil
	}
	if n > uint64(len(r.B)) {
		r.Err = ErrCorrupt
		return nil
	}
	out := r.B[:n:n]
	r.B = r.B[n:]
	return out
}

func (r *Reader) str() string {
	b := r.take(r.Uint())
	if r.Skip {
		return ""
	}
	return string(b)
}

// bytes returns a copy, so no value a reader gets aliases the packed
// slice (which would keep it alive and let a caller's write reach it).
func (r *Reader) bytes() []byte {
	n := r.Uint()
	if n == 0 {
		return nil
	}
	b := r.take(n - 1)
	if b == nil || r.Skip {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

// count reads a slice length written by packer.count: -1 for nil.
func (r *Reader) count() int {
	n := r.Uint()
	if n == 0 || r.Err != nil {
		return -1
	}
	if n-1 > uint64(len(r.B)) { // every element takes at least a byte
		r.Err = ErrCorrupt
		return -1
	}
	return int(n - 1)
}

func (r *Reader) strs() []string {
	n := r.count()
	if n < 0 {
		return nil
	}
	if r.Skip {
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

func (r *Reader) when() time.Time {
	switch r.Uint() {
	case 0:
		return time.Time{}
	case 1:
		sec := r.int()
		nsec := r.Uint()
		return time.Unix(sec, int64(nsec)).UTC()
	case 2:
		sec := r.int()
		nsec := r.Uint()
		name := r.str()
		offset := r.int()
		if r.Skip {
			return time.Time{}
		}
		return time.Unix(sec, int64(nsec)).In(time.FixedZone(name, int(offset)))
	}
	r.Err = ErrCorrupt
	return time.Time{}
}

func (r *Reader) part(p *protocol.Part) {
	p.Kind = protocol.PartKind(r.int())
	p.Text = r.str()
	p.Data = r.bytes()
	p.URL = r.str()
	p.Raw = r.bytes()
	p.Filename = r.str()
	p.MediaType = r.str()
	p.Metadata = r.bytes()
}

func (r *Reader) parts() []protocol.Part {
	n := r.count()
	if n < 0 {
		return nil
	}
	if r.Skip {
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

func (r *Reader) message(m *protocol.Message) {
	m.ID = r.str()
	m.ContextID = r.id()
	m.TaskID = r.id()
	m.Role = protocol.Role(r.int())
	m.Parts = r.parts()
	m.Metadata = r.bytes()
	m.Extensions = r.strs()
	m.ReferenceTaskIDs = r.strs()
}

func (r *Reader) messagePtr() *protocol.Message {
	if !r.bool() {
		return nil
	}
	if r.Skip {
		var m protocol.Message
		r.message(&m)
		return nil
	}
	m := new(protocol.Message)
	r.message(m)
	return m
}

func (r *Reader) status(s *protocol.TaskStatus) {
	s.State = protocol.TaskState(r.int())
	s.Message = r.messagePtr()
	s.Timestamp = r.when()
}

func (r *Reader) artifact(a *protocol.Artifact) {
	a.ID = r.str()
	a.Name = r.str()
	a.Description = r.str()
	a.Parts = r.parts()
	a.Metadata = r.bytes()
	a.Extensions = r.strs()
}

// Task reads a whole task.
func (r *Reader) Task() *protocol.Task { return r.TaskView(store.View{}) }

// TaskView reads a task, building only what v keeps: artifacts are read
// past when v omits them, and history messages older than the ones v
// keeps.
func (r *Reader) TaskView(v store.View) *protocol.Task {
	if r.Skip {
		var t protocol.Task
		r.taskInto(&t, v)
		return nil
	}
	t := new(protocol.Task)
	r.taskInto(t, v)
	return t
}

func (r *Reader) taskInto(t *protocol.Task, v store.View) {
	t.ID = r.id()
	t.ContextID = r.id()
	r.status(&t.Status)
	if n := r.count(); n >= 0 {
		skip := r.Skip
		r.Skip = skip || v.OmitArtifacts
		if !r.Skip {
			t.Artifacts = make([]protocol.Artifact, n)
		}
		var a protocol.Artifact
		for i := range n {
			if r.Skip {
				r.artifact(&a)
			} else {
				r.artifact(&t.Artifacts[i])
			}
		}
		r.Skip = skip
	}
	if n := r.count(); n >= 0 {
		keep := n
		switch {
		case v.History < 0:
			keep = 0
		case v.History > 0:
			keep = min(n, v.History)
		}
		skip := r.Skip
		if !skip && (keep > 0 || v.History == 0) {
			t.History = make([]protocol.Message, keep)
		}
		var m protocol.Message
		for i := range n {
			if i < n-keep {
				r.Skip = true
				r.message(&m)
				r.Skip = skip
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

// Event reads an event into e.
func (r *Reader) Event(e *protocol.Event) {
	if r.bool() {
		e.Task = r.Task()
	}
	e.Message = r.messagePtr()
	if r.bool() {
		var s protocol.StatusUpdate
		s.TaskID = r.id()
		s.ContextID = r.id()
		r.status(&s.Status)
		s.Final = r.bool()
		s.Metadata = r.bytes()
		if !r.Skip {
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
		if !r.Skip {
			kept := a
			e.Artifact = &kept
		}
	}
}

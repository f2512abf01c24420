package pack

import (
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
)

// Records are a snapshot or one event encoded on its own, as the stores
// that persist them write them (Redis, the file store): the Writer's form
// after one byte of format version, so that a later release can tell an
// older record from a corrupt one. A record is an event of a known task,
// so the task's id is written once per record (0 for itself), not per
// message of it.

// RecordVersion is the first byte of every record.
const RecordVersion = 1

// EncodeTask appends t as a record to dst.
func EncodeTask(dst []byte, t *protocol.Task) []byte {
	w := Writer{B: append(dst, RecordVersion), TID: t.ID}
	w.Task(t)
	return w.B
}

// DecodeTask decodes what EncodeTask wrote for the task id, building only
// what v keeps.
func DecodeTask(b []byte, id string, v store.View) (*protocol.Task, error) {
	r, err := recordReader(b, id)
	if err != nil {
		return nil, err
	}
	t := r.TaskView(v)
	if err := r.Done(); err != nil {
		return nil, err
	}
	return t, nil
}

// EncodeEvent appends e, an event of task id, as a record to dst.
func EncodeEvent(dst []byte, id string, e *protocol.Event) []byte {
	w := Writer{B: append(dst, RecordVersion), TID: id}
	w.Event(e)
	return w.B
}

// DecodeEvent decodes what EncodeEvent wrote for the task id.
func DecodeEvent(b []byte, id string) (protocol.Event, error) {
	var e protocol.Event
	r, err := recordReader(b, id)
	if err != nil {
		return e, err
	}
	r.Event(&e)
	return e, r.Done()
}

func recordReader(b []byte, id string) (*Reader, error) {
	if len(b) == 0 || b[0] != RecordVersion {
		return nil, ErrCorrupt
	}
	return &Reader{B: b[1:], TID: id}, nil
}

package redisstore

import (
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/internal/pack"
)

// The snapshot and every event are kept in Redis in a compact binary form:
// varints for numbers and lengths, and a "nil or length+1" prefix for every
// slice and pointer, so that nil and empty survive the round trip and a
// decoded value compares reflect.DeepEqual to the one written. It is the
// memory store's packed form (package pack) without the log framing. The first byte is
// the format's version, so that replicas of a later release can tell an
// older record from a corrupt one.

// codecVersion is the first byte of every encoded value.
const codecVersion = 1

var errCorrupt = pack.ErrCorrupt

// encodeTask returns t encoded.
func encodeTask(dst []byte, t *protocol.Task) []byte {
	w := pack.Writer{B: append(dst, codecVersion), TID: t.ID}
	w.Task(t)
	return w.B
}

// decodeTask decodes what encodeTask wrote for the task id, building only
// what v keeps.
func decodeTask(b []byte, id string, v store.View) (*protocol.Task, error) {
	r, err := newUnpacker(b, id)
	if err != nil {
		return nil, err
	}
	t := r.TaskView(v)
	if err := r.Done(); err != nil {
		return nil, err
	}
	return t, nil
}

// encodeEvent returns e, an event of task id, encoded.
func encodeEvent(dst []byte, id string, e *protocol.Event) []byte {
	w := pack.Writer{B: append(dst, codecVersion), TID: id}
	w.Event(e)
	return w.B
}

// decodeEvent decodes what encodeEvent wrote for the task id.
func decodeEvent(b []byte, id string) (protocol.Event, error) {
	var e protocol.Event
	r, err := newUnpacker(b, id)
	if err != nil {
		return e, err
	}
	r.Event(&e)
	return e, r.Done()
}

func newUnpacker(b []byte, id string) (*pack.Reader, error) {
	if len(b) == 0 || b[0] != codecVersion {
		return nil, errCorrupt
	}
	return &pack.Reader{B: b[1:], TID: id}, nil
}

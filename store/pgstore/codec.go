package pgstore

import (
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/store/internal/pack"
)

// Snapshots and events are kept in bytea columns in the memory store's
// packed form (package pack), as redisstore keeps them: nil and empty
// survive the round trip, so a decoded value compares reflect.DeepEqual
// to the one written. The first byte is the format's version, so that
// replicas of a later release can tell an older row from a corrupt one.

// codecVersion is the first byte of every encoded value.
const codecVersion = 1

var errCorrupt = pack.ErrCorrupt

func encodeTask(t *protocol.Task) []byte {
	w := pack.Writer{B: []byte{codecVersion}, TID: t.ID}
	w.Task(t)
	return w.B
}

// decodeTask decodes what encodeTask wrote for the task id, building only
// what v keeps.
func decodeTask(b []byte, id string, v store.View) (*protocol.Task, error) {
	r, err := unpacker(b, id)
	if err != nil {
		return nil, err
	}
	t := r.TaskView(v)
	if err := r.Done(); err != nil {
		return nil, err
	}
	return t, nil
}

func encodeEvent(id string, e *protocol.Event) []byte {
	w := pack.Writer{B: []byte{codecVersion}, TID: id}
	w.Event(e)
	return w.B
}

func decodeEvent(b []byte, id string) (protocol.Event, error) {
	var e protocol.Event
	r, err := unpacker(b, id)
	if err != nil {
		return e, err
	}
	r.Event(&e)
	return e, r.Done()
}

func unpacker(b []byte, id string) (*pack.Reader, error) {
	if len(b) == 0 || b[0] != codecVersion {
		return nil, errCorrupt
	}
	return &pack.Reader{B: b[1:], TID: id}, nil
}

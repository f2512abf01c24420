package filestore

import (
	"encoding/binary"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store/internal/pack"
)

// header is what the store keeps of a task beside its snapshot: what
// every write checks and moves (version, indexes, bounds) without
// decoding the snapshot.
type header struct {
	owner   string
	version uint64
	state   protocol.TaskState
	ts      int64 // the status timestamp's sort key (tsKey)
	ctxID   string
	updated int64 // store-clock unix ns of the last write: the lot's order and the TTL's start
	last    uint64
	// snap, events and push are the bytes of the snapshot record, of
	// the event records and of the push configs and claims, each record
	// counted with recordOverhead: what the task is charged (charge).
	snap, events, push int64
}

// Overheads of the charge: a task's header and index entries, and the
// key of each of its other records, which are bytes in the file too.
const (
	taskOverhead   = 128
	recordOverhead = 16
)

// charge is what h's task counts against Options.MaxBytes.
func (h *header) charge() int64 { return taskOverhead + h.snap + h.events + h.push }

// headerVersion is the first byte of a header, as pack.RecordVersion is
// of a snapshot.
const headerVersion = 1

func (h *header) encode() []byte {
	b := make([]byte, 0, 48+len(h.owner)+len(h.ctxID))
	b = append(b, headerVersion)
	b = binary.AppendUvarint(b, h.version)
	b = appendStr(b, h.owner)
	b = binary.AppendUvarint(b, uint64(h.state))
	b = binary.AppendVarint(b, h.ts)
	b = appendStr(b, h.ctxID)
	b = binary.AppendVarint(b, h.updated)
	b = binary.AppendUvarint(b, h.last)
	b = binary.AppendVarint(b, h.snap)
	b = binary.AppendVarint(b, h.events)
	return binary.AppendVarint(b, h.push)
}

func decodeHeader(b []byte) (*header, error) {
	if len(b) == 0 || b[0] != headerVersion {
		return nil, pack.ErrCorrupt
	}
	d := decoder{b: b[1:]}
	h := &header{}
	h.version = d.uint()
	h.owner = d.str()
	h.state = protocol.TaskState(d.uint())
	h.ts = d.int()
	h.ctxID = d.str()
	h.updated = d.int()
	h.last = d.uint()
	h.snap = d.int()
	h.events = d.int()
	h.push = d.int()
	if d.bad || len(d.b) != 0 {
		return nil, pack.ErrCorrupt
	}
	return h, nil
}

// ownerEntry is a task's value in its owner's index: what List filters
// on and the expiry it checks, without reading the header.
func (h *header) ownerEntry() []byte {
	b := binary.AppendUvarint(make([]byte, 0, 16+len(h.ctxID)), uint64(h.state))
	b = binary.AppendVarint(b, h.updated)
	return append(b, h.ctxID...)
}

// decodeOwnerEntry reads an owner index value; ctxID aliases b (List
// compares it and keeps nothing).
func decodeOwnerEntry(b []byte) (st protocol.TaskState, updated int64, ctxID []byte, err error) {
	d := decoder{b: b}
	st = protocol.TaskState(d.uint())
	updated = d.int()
	if d.bad {
		return 0, 0, nil, pack.ErrCorrupt
	}
	return st, updated, d.b, nil
}

func appendStr(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// decoder reads varints and strings; bad is set at the first that does
// not decode, and later reads return zeros.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) uint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) int() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string {
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.bad, d.b = true, nil
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

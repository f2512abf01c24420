package protocol

import (
	"encoding/json"
	"strconv"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
)

// dialect is everything that differs between the two wire versions. The
// codec logic (dialectCodec below, decode_shared.go, encode_shared.go) is
// written once against it; codec_v03.go and codec_v10.go only fill in a
// dialect: names, enum spellings, the part shapes and the error data.
type dialect struct {
	version Version
	// tagged: 0.3 JSON-RPC puts a "kind" discriminator on tasks, messages,
	// parts and events, and returns bare results; 1.0 ProtoJSON wraps
	// results instead ({"task":…}).
	tagged bool
	// final: status updates carry "final" (both 0.3 flavours).
	final bool
	// messageParts is the member holding a message's parts: "parts", or
	// "content" in the 0.3 proto.
	messageParts string
	// unsetBlocking is what a send whose configuration says nothing about
	// blocking does: 0.3 JSON-RPC waits (as the SDKs read it), the 0.3
	// proto's bool defaults to false.
	unsetBlocking bool
	// methods maps wire method names to operations.
	methods map[string]Method
	// stateNames and roleNames are the wire spellings, indexed by value.
	stateNames [StateAuthRequired + 1]string
	roleNames  [RoleAgent + 1]string

	// numericEnums: ProtoJSON also accepts an enum's integer value.
	numericEnums bool
	// appendPart and decodePart handle the version's part shape.
	appendPart func(dst []byte, p *Part) []byte
	decodePart func(d *dialect, v []byte, field string) (Part, *Error)
	// appendError appends the whole JSON-RPC error object for e.
	appendError func(dst []byte, e *Error) []byte

	// Send configuration member names that exist in only one version,
	// as [camelCase, snake_case]; "" where the version has none.
	blockingKey  string    // 0.3 "blocking" (true = wait)
	immediateKey [2]string // 1.0 "returnImmediately" (true = do not wait)
	pushKey      [2]string // the inline push notification config
	// tenants: requests name a tenant (1.0); 0.3 has none to write.
	tenants bool

	// lim bounds what a request may carry; a codec made by NewCodec has
	// its own copy of the dialect with its limits.
	lim Limits
}

// stateName spells s; an out-of-range value spells as unspecified.
func (d *dialect) stateName(s TaskState) string {
	if s < 0 || int(s) >= len(d.stateNames) {
		return d.stateNames[StateUnspecified]
	}
	return d.stateNames[s]
}

// roleName spells r; an out-of-range value spells as unspecified.
func (d *dialect) roleName(r Role) string {
	if r < 0 || int(r) >= len(d.roleNames) {
		return d.roleNames[RoleUnspecified]
	}
	return d.roleNames[r]
}

// parseState reads a task state: its name, or (1.0) its integer value.
func (d *dialect) parseState(v []byte) (TaskState, bool) {
	i, ok := d.parseEnum(v, d.stateNames[:], true)
	return TaskState(i), ok
}

// parseRole reads a role; the unspecified role is not accepted.
func (d *dialect) parseRole(v []byte) (Role, bool) {
	i, ok := d.parseEnum(v, d.roleNames[:], false)
	return Role(i), ok
}

func (d *dialect) parseEnum(v []byte, names []string, allowZero bool) (int, bool) {
	if d.numericEnums && jsonwire.KindOf(v) == jsonwire.Number {
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 0 || n >= len(names) || (n == 0 && !allowZero) {
			return 0, false
		}
		return n, true
	}
	return lookupName(v, names, allowZero)
}

// lookupName finds v (a JSON string) among names; index 0 is never a
// match unless allowZero.
func lookupName(v []byte, names []string, allowZero bool) (int, bool) {
	if jsonwire.KindOf(v) != jsonwire.String {
		return 0, false
	}
	s, ok := jsonwire.UnquoteBytes(v)
	if !ok {
		return 0, false
	}
	for i, n := range names {
		if n == string(s) && (i > 0 || allowZero) {
			return i, true
		}
	}
	return 0, false
}

// dialectCodec implements Codec for any dialect; codecV03 and codecV10 are
// its two instances.
type dialectCodec struct{ d *dialect }

// codecV03 is the A2A 0.3 JSON-RPC codec.
var codecV03 Codec = dialectCodec{d: &v03}

// codecV10 is the A2A 1.0 (ProtoJSON) JSON-RPC codec.
var codecV10 Codec = dialectCodec{d: &v10}

func (c dialectCodec) Version() Version { return c.d.version }

func (c dialectCodec) Method(name string) (Method, bool) {
	m, ok := c.d.methods[name]
	return m, ok
}

func (c dialectCodec) DecodeSend(params json.RawMessage) (*SendParams, error) {
	p, e := decodeSend(c.d, params)
	return p, asError(e)
}

func (c dialectCodec) DecodeGetTask(params json.RawMessage) (*GetTaskParams, error) {
	p, e := decodeGetTask(c.d, params)
	return p, asError(e)
}

func (c dialectCodec) DecodeTaskID(params json.RawMessage) (*TaskIDParams, error) {
	p, e := decodeTaskID(c.d, params)
	return p, asError(e)
}

func (c dialectCodec) DecodeListTasks(params json.RawMessage) (*ListTasksParams, error) {
	if c.d.version != V10 {
		// 0.3 JSON-RPC has no list method; nothing maps to this call.
		return nil, ErrMethodNotFound("")
	}
	p, e := decodeListTasks(c.d, params)
	return p, asError(e)
}

func (c dialectCodec) AppendTask(dst []byte, t *Task) []byte {
	return appendTask(c.d, dst, t)
}

func (c dialectCodec) AppendSendResult(dst []byte, ev *Event) []byte {
	return appendEvent(c.d, dst, ev)
}

func (c dialectCodec) AppendStreamResult(dst []byte, ev *Event) []byte {
	return appendEvent(c.d, dst, ev)
}

func (c dialectCodec) AppendListTasks(dst []byte, r *ListTasksResult) []byte {
	return appendListTasks(c.d, dst, r)
}

func (c dialectCodec) AppendError(dst []byte, e *Error) []byte {
	return c.d.appendError(dst, e)
}

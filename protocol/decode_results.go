package protocol

import (
	"strings"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
)

// The result decoders of both versions: what an A2A agent answers the
// module. They use the params decoders' readers, so the agent's output is
// held to the limits and checks a caller's input is (part counts and
// sizes, metadata sizes, identifier sizes, duplicate members), and add
// what a client may take from a part (CheckOutputPart). They report
// -32602-shaped errors like the params decoders; the codec methods turn
// them into -32006 (agentError). Member names are matched in camelCase and
// snake_case; unknown members are ignored; null reads as absent.

// agentError turns a decoder's error into -32006, keeping what names the
// problem: the field violations, and the limit's name and value.
func agentError(e *Error) *Error {
	if e == nil {
		return nil
	}
	a := ErrInvalidAgentResponse()
	a.Metadata = e.Metadata
	for _, v := range e.Violations {
		// A field path holds the agent's own member name when the agent
		// repeated one, so it is bounded before it reaches a log or an
		// error: a name is no reason to carry megabytes.
		if len(v.Field) > maxFieldBytes {
			v.Field = strings.ToValidUTF8(v.Field[:maxFieldBytes], "") + "…"
		}
		a.Violations = append(a.Violations, v)
	}
	if len(a.Violations) > 0 {
		a.Message += ": " + a.Violations[0].Field + ": " + a.Violations[0].Description
	}
	return a
}

// maxFieldBytes bounds a field path in an agent error.
const maxFieldBytes = 256

// resultField roots the paths of every result decoder's errors.
const resultField = "result"

// checkResult validates a raw result: present, well-formed JSON, an
// object (every result of the methods decoded here is one). The scanners
// assume validated input, and a result may reach a codec without
// DecodeResponseLimit in front of it.
func checkResult(raw []byte) ([]byte, *Error) {
	r := jsonwire.TrimSpace(raw)
	if len(r) == 0 {
		return nil, invalidField(resultField, "is required")
	}
	if _, ok := jsonwire.Valid(r); !ok {
		return nil, invalidField(resultField, "must be valid JSON")
	}
	if jsonwire.KindOf(r) != jsonwire.Object {
		return nil, invalidField(resultField, "must be an object")
	}
	return r, nil
}

// checkKind refuses a 0.3 "kind" other than want; 1.0 has no kind and
// ignores the member as unknown.
func checkKind(d *dialect, v []byte, field, want string) *Error {
	if !d.tagged {
		return nil
	}
	if s, _ := readString(v, "", ""); s != want {
		return invalidField(join(field, "kind"), `must be "`+want+`"`)
	}
	return nil
}

// checkOutputParts holds each part to what a client may take from it.
func checkOutputParts(parts []Part, field string) *Error {
	for i := range parts {
		if e := CheckOutputPart(&parts[i], indexPath(field, i)); e != nil {
			return e
		}
	}
	return nil
}

// decodeAgentMessage reads a message an agent sent (a result, a status
// message, history): decodeMessage, plus the members every message has
// (id and role) and the output part checks.
func decodeAgentMessage(d *dialect, v []byte, field string) (Message, *Error) {
	m, e := decodeMessage(d, v, field)
	switch {
	case e != nil:
	case m.ID == "":
		e = invalidField(join(field, "messageId"), "is required")
	case m.Role == RoleUnspecified:
		e = invalidField(join(field, "role"), "is required")
	default:
		e = checkOutputParts(m.Parts, join(field, "parts"))
	}
	return m, e
}

// decodeMessages reads an array of messages (a task's history).
func decodeMessages(d *dialect, v []byte, field string) ([]Message, *Error) {
	if jsonwire.KindOf(v) != jsonwire.Array {
		return nil, invalidField(field, "must be an array")
	}
	var out []Message
	it := jsonwire.NewArrIter(v)
	for i := 0; ; i++ {
		el, ok := it.Next()
		if !ok {
			return out, nil
		}
		m, e := decodeAgentMessage(d, el, indexPath(field, i))
		if e != nil {
			return nil, e
		}
		out = append(out, m)
	}
}

// decodeStatus reads a TaskStatus; the state is required and must be a
// real one (0.3 "unknown" and 1.0 UNSPECIFIED are not a task's state).
func decodeStatus(d *dialect, v []byte, field string, s *TaskStatus) *Error {
	if jsonwire.KindOf(v) != jsonwire.Object {
		return invalidField(field, "must be an object")
	}
	if e := eachMember(v, field, func(key, val []byte) (e *Error) {
		switch string(key) {
		case "state":
			st, ok := d.parseState(val)
			if !ok || st == StateUnspecified {
				return invalidField(join(field, "state"), "must be a task state")
			}
			s.State = st
		case "message":
			var m Message
			m, e = decodeAgentMessage(d, val, join(field, "message"))
			s.Message = &m
		case "timestamp":
			var ts string
			if ts, e = readString(val, field, "timestamp"); e == nil {
				t, ok := parseTimestamp(ts)
				if !ok || t.Year() > 9999 || t.Year() < 0 {
					// A year the encoders cannot write back as RFC 3339
					// (an offset can carry year 0 into year -1) is refused
					// here, not relayed as a timestamp no client can read.
					return invalidField(join(field, "timestamp"), "must be an RFC 3339 timestamp")
				}
				s.Timestamp = t
			}
		}
		return e
	}); e != nil {
		return e
	}
	if s.State == StateUnspecified {
		return invalidField(join(field, "state"), "is required")
	}
	return nil
}

// decodeArtifact reads an Artifact; artifactId is required.
func decodeArtifact(d *dialect, v []byte, field string) (Artifact, *Error) {
	var a Artifact
	if jsonwire.KindOf(v) != jsonwire.Object {
		return a, invalidField(field, "must be an object")
	}
	if e := eachMember(v, field, func(key, val []byte) (e *Error) {
		switch string(key) {
		case "artifactId", "artifact_id":
			a.ID, e = readID(val, field, "artifactId")
		case "name":
			a.Name, e = d.readText(val, field, "name")
		case "description":
			a.Description, e = d.readText(val, field, "description")
		case "parts":
			a.Parts, e = decodeParts(d, val, join(field, "parts"))
		case "metadata":
			a.Metadata, e = d.readMetadata(val, field, "metadata")
		case "extensions":
			a.Extensions, e = readIDs(val, field, "extensions")
		}
		return e
	}); e != nil {
		return a, e
	}
	if a.ID == "" {
		return a, invalidField(join(field, "artifactId"), "is required")
	}
	return a, checkOutputParts(a.Parts, join(field, "parts"))
}

// decodeArtifacts reads an array of artifacts.
func decodeArtifacts(d *dialect, v []byte, field string) ([]Artifact, *Error) {
	if jsonwire.KindOf(v) != jsonwire.Array {
		return nil, invalidField(field, "must be an array")
	}
	var out []Artifact
	it := jsonwire.NewArrIter(v)
	for i := 0; ; i++ {
		el, ok := it.Next()
		if !ok {
			return out, nil
		}
		a, e := decodeArtifact(d, el, indexPath(field, i))
		if e != nil {
			return nil, e
		}
		out = append(out, a)
	}
}

// decodeTask reads a Task; id and status are required.
func decodeTask(d *dialect, v []byte, field string) (*Task, *Error) {
	if jsonwire.KindOf(v) != jsonwire.Object {
		return nil, invalidField(field, "must be an object")
	}
	t := &Task{}
	hasStatus := false
	if e := eachMember(v, field, func(key, val []byte) (e *Error) {
		switch string(key) {
		case "id":
			t.ID, e = readID(val, field, "id")
		case "contextId", "context_id":
			t.ContextID, e = readID(val, field, "contextId")
		case "status":
			hasStatus = true
			e = decodeStatus(d, val, join(field, "status"), &t.Status)
		case "artifacts":
			t.Artifacts, e = decodeArtifacts(d, val, join(field, "artifacts"))
		case "history":
			t.History, e = decodeMessages(d, val, join(field, "history"))
		case "metadata":
			t.Metadata, e = d.readMetadata(val, field, "metadata")
		case "kind":
			e = checkKind(d, val, field, "task")
		}
		return e
	}); e != nil {
		return nil, e
	}
	switch {
	case t.ID == "":
		return nil, invalidField(join(field, "id"), "is required")
	case !hasStatus:
		return nil, invalidField(join(field, "status"), "is required")
	}
	return t, nil
}

// decodeStatusUpdate reads a TaskStatusUpdateEvent; taskId and status are
// required. final is 0.3's; 1.0 has none and ends the stream instead.
func decodeStatusUpdate(d *dialect, v []byte, field string) (*StatusUpdate, *Error) {
	if jsonwire.KindOf(v) != jsonwire.Object {
		return nil, invalidField(field, "must be an object")
	}
	u := &StatusUpdate{}
	hasStatus := false
	if e := eachMember(v, field, func(key, val []byte) (e *Error) {
		switch string(key) {
		case "taskId", "task_id":
			u.TaskID, e = readID(val, field, "taskId")
		case "contextId", "context_id":
			u.ContextID, e = readID(val, field, "contextId")
		case "status":
			hasStatus = true
			e = decodeStatus(d, val, join(field, "status"), &u.Status)
		case "final":
			if d.final {
				u.Final, e = readBool(val, field, "final")
			}
		case "metadata":
			u.Metadata, e = d.readMetadata(val, field, "metadata")
		case "kind":
			e = checkKind(d, val, field, "status-update")
		}
		return e
	}); e != nil {
		return nil, e
	}
	switch {
	case u.TaskID == "":
		return nil, invalidField(join(field, "taskId"), "is required")
	case !hasStatus:
		return nil, invalidField(join(field, "status"), "is required")
	}
	return u, nil
}

// decodeArtifactUpdate reads a TaskArtifactUpdateEvent; taskId and
// artifact are required.
func decodeArtifactUpdate(d *dialect, v []byte, field string) (*ArtifactUpdate, *Error) {
	if jsonwire.KindOf(v) != jsonwire.Object {
		return nil, invalidField(field, "must be an object")
	}
	u := &ArtifactUpdate{}
	hasArtifact := false
	if e := eachMember(v, field, func(key, val []byte) (e *Error) {
		switch string(key) {
		case "taskId", "task_id":
			u.TaskID, e = readID(val, field, "taskId")
		case "contextId", "context_id":
			u.ContextID, e = readID(val, field, "contextId")
		case "artifact":
			hasArtifact = true
			u.Artifact, e = decodeArtifact(d, val, join(field, "artifact"))
		case "append":
			u.Append, e = readBool(val, field, "append")
		case "lastChunk", "last_chunk":
			u.LastChunk, e = readBool(val, field, "lastChunk")
		case "metadata":
			u.Metadata, e = d.readMetadata(val, field, "metadata")
		case "kind":
			e = checkKind(d, val, field, "artifact-update")
		}
		return e
	}); e != nil {
		return nil, e
	}
	switch {
	case u.TaskID == "":
		return nil, invalidField(join(field, "taskId"), "is required")
	case !hasArtifact:
		return nil, invalidField(join(field, "artifact"), "is required")
	}
	return u, nil
}

// The event kinds a result may hold, by their 0.3 kind and their 1.0
// wrapper member (camelCase and snake_case).
var eventKinds = [...]struct{ kind, member, snake string }{
	{"task", "task", "task"},
	{"message", "message", "message"},
	{"status-update", "statusUpdate", "status_update"},
	{"artifact-update", "artifactUpdate", "artifact_update"},
}

// decodeEvent reads a send result (stream false: a Task or a Message) or
// a stream frame's result (any of the four). 0.3 tells them apart by kind,
// which is then required; 1.0 by the one member of its SendMessageResponse
// or StreamResponse wrapper, a proto oneof: none, or more than one, is an
// error.
func decodeEvent(d *dialect, raw []byte, stream bool) (*Event, *Error) {
	r, e := checkResult(raw)
	if e != nil {
		return nil, e
	}
	n := 2
	if stream {
		n = len(eventKinds)
	}
	if d.tagged {
		return decodeTaggedEvent(d, r, n)
	}
	ev := &Event{}
	found := -1
	if e := eachMember(r, resultField, func(key, val []byte) *Error {
		for i, k := range eventKinds[:n] {
			if string(key) != k.member && string(key) != k.snake {
				continue
			}
			if found >= 0 {
				return invalidField(resultField, "must have only one of "+eventMembers(n))
			}
			found = i
			return decodeEventAs(d, ev, i, val, join(resultField, k.member))
		}
		return nil
	}); e != nil {
		return nil, e
	}
	if found < 0 {
		return nil, invalidField(resultField, "must have one of "+eventMembers(n))
	}
	return ev, nil
}

// decodeTaggedEvent reads a 0.3 result by its kind, one of the first n
// event kinds.
func decodeTaggedEvent(d *dialect, r []byte, n int) (*Event, *Error) {
	var kind string
	if e := eachMember(r, resultField, func(key, val []byte) (e *Error) {
		if string(key) == "kind" {
			kind, e = readString(val, resultField, "kind")
		}
		return e
	}); e != nil {
		return nil, e
	}
	for i, k := range eventKinds[:n] {
		if k.kind == kind {
			ev := &Event{}
			if e := decodeEventAs(d, ev, i, r, resultField); e != nil {
				return nil, e
			}
			return ev, nil
		}
	}
	names := make([]string, n)
	for i := range names {
		names[i] = eventKinds[i].kind
	}
	if kind == "" {
		return nil, invalidField(join(resultField, "kind"), "is required")
	}
	return nil, invalidField(join(resultField, "kind"), "must be "+quoteList(names))
}

// decodeEventAs decodes v as event kind i into ev.
func decodeEventAs(d *dialect, ev *Event, i int, v []byte, field string) (e *Error) {
	switch i {
	case 0:
		ev.Task, e = decodeTask(d, v, field)
	case 1:
		var m Message
		if m, e = decodeAgentMessage(d, v, field); e == nil {
			ev.Message = &m
		}
	case 2:
		ev.Status, e = decodeStatusUpdate(d, v, field)
	default:
		ev.Artifact, e = decodeArtifactUpdate(d, v, field)
	}
	return e
}

// eventMembers names the 1.0 wrapper members of the first n event kinds.
func eventMembers(n int) string {
	names := make([]string, n)
	for i := range names {
		names[i] = eventKinds[i].member
	}
	return quoteList(names)
}

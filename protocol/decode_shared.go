package protocol

import "github.com/caddy-a2a/caddy-a2a/internal/jsonwire"

// The params decoders of both versions. Member names are matched exactly in
// their camelCase form and, in both versions, in the snake_case form that
// ProtoJSON parsers must accept (a 0.3 client never sends it, so accepting
// it there costs nothing). Unknown members are ignored; a null member reads
// as absent.

// decodeMessage reads a Message object at field (e.g. "message"). It checks
// shape and types only; what a send requires is validateSendMessage's job.
func decodeMessage(d *dialect, v []byte, field string) (Message, *Error) {
	var m Message
	if jsonwire.KindOf(v) != jsonwire.Object {
		return m, invalidField(field, "must be an object")
	}
	if e := eachMember(v, field, func(key, val []byte) (e *Error) {
		switch string(key) {
		case "messageId", "message_id":
			m.ID, e = readID(val, field, "messageId")
		case "contextId", "context_id":
			m.ContextID, e = readID(val, field, "contextId")
		case "taskId", "task_id":
			m.TaskID, e = readID(val, field, "taskId")
		case "role":
			r, ok := d.parseRole(val)
			if !ok {
				e = invalidField(join(field, "role"), "must be "+quoteList(d.roleNames[1:]))
			}
			m.Role = r
		case d.messageParts:
			m.Parts, e = decodeParts(d, val, join(field, d.messageParts))
		case "metadata":
			m.Metadata, e = d.readMetadata(val, field, "metadata")
		case "extensions":
			m.Extensions, e = readIDs(val, field, "extensions")
		case "referenceTaskIds", "reference_task_ids":
			m.ReferenceTaskIDs, e = readIDs(val, field, "referenceTaskIds")
		case "kind":
			if d.tagged {
				if s, _ := readString(val, "", ""); s != "message" {
					e = invalidField(join(field, "kind"), `must be "message"`)
				}
			}
		}
		return e
	}); e != nil {
		return m, e
	}
	return m, nil
}

// decodeParts reads an array of parts.
func decodeParts(d *dialect, v []byte, field string) ([]Part, *Error) {
	if jsonwire.KindOf(v) != jsonwire.Array {
		return nil, invalidField(field, "must be an array")
	}
	var parts []Part
	it := jsonwire.NewArrIter(v)
	for i := 0; ; i++ {
		el, ok := it.Next()
		if !ok {
			break
		}
		if i == d.lim.MaxParts {
			// Refused before the part over the limit is decoded.
			return nil, d.tooManyParts(field)
		}
		p, e := d.decodePart(d, el, indexPath(field, i))
		if e != nil {
			return nil, e
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// validateSendMessage checks what every version requires of a message a
// client sends: an id, at least one part, and the user role. All problems
// are reported at once.
func validateSendMessage(d *dialect, m *Message, field string) *Error {
	var v []FieldViolation
	if m.ID == "" {
		v = append(v, FieldViolation{Field: join(field, "messageId"), Description: "is required"})
	}
	switch m.Role {
	case RoleUser:
	case RoleUnspecified:
		v = append(v, FieldViolation{Field: join(field, "role"), Description: "is required"})
	default:
		v = append(v, FieldViolation{Field: join(field, "role"), Description: "must be " + quoteList(d.roleNames[RoleUser:RoleUser+1])})
	}
	if len(m.Parts) == 0 {
		v = append(v, FieldViolation{Field: join(field, d.messageParts), Description: "must contain at least one part"})
	}
	if len(v) == 0 {
		return nil
	}
	return ErrInvalidParams("Invalid parameters: "+v[0].Field+": "+v[0].Description, v...)
}

// decodeSend reads message/send, message/stream, SendMessage and
// SendStreamingMessage params.
func decodeSend(d *dialect, params []byte) (*SendParams, *Error) {
	p, e := checkParams(params)
	if e != nil {
		return nil, e
	}
	sp := &SendParams{Blocking: d.unsetBlocking}
	var hasMessage bool
	if e := eachMember(p, "", func(key, val []byte) (e *Error) {
		switch string(key) {
		case "message":
			sp.Message, e = decodeMessage(d, val, "message")
			hasMessage = true
		case "configuration":
			e = decodeSendConfig(d, val, sp)
		case "metadata":
			sp.Metadata, e = d.readMetadata(val, "", "metadata")
		case "tenant":
			sp.Tenant, e = readID(val, "", "tenant")
		}
		return e
	}); e != nil {
		return nil, e
	}
	if !hasMessage {
		return nil, invalidField("message", "is required")
	}
	if e := validateSendMessage(d, &sp.Message, "message"); e != nil {
		return nil, e
	}
	return sp, nil
}

// decodeSendConfig reads the send configuration into sp. 0.3 says
// "blocking" (unset = true, as the SDKs read it); 1.0 says the opposite,
// "returnImmediately" (unset = false), so both default to a blocking call.
func decodeSendConfig(d *dialect, v []byte, sp *SendParams) *Error {
	const field = "configuration"
	if jsonwire.KindOf(v) != jsonwire.Object {
		return invalidField(field, "must be an object")
	}
	if e := eachMember(v, field, func(key, val []byte) (e *Error) {
		switch k := string(key); k {
		case "acceptedOutputModes", "accepted_output_modes":
			sp.AcceptedOutputModes, e = readIDs(val, field, "acceptedOutputModes")
		case "historyLength", "history_length":
			sp.HistoryLength, e = readNonNegative(val, field, "historyLength")
		default:
			switch {
			case k == "":
			case k == d.blockingKey:
				sp.Blocking, e = readBool(val, field, d.blockingKey)
			case k == d.immediateKey[0] || k == d.immediateKey[1]:
				var imm bool
				imm, e = readBool(val, field, d.immediateKey[0])
				sp.Blocking = !imm
			case k == d.pushKey[0] || k == d.pushKey[1]:
				sp.Push, e = decodeInlinePush(d, val, join(field, d.pushKey[0]))
			}
		}
		return e
	}); e != nil {
		return e
	}
	return nil
}

// decodeGetTask reads tasks/get and GetTask params.
func decodeGetTask(d *dialect, params []byte) (*GetTaskParams, *Error) {
	p, e := checkParams(params)
	if e != nil {
		return nil, e
	}
	gp := &GetTaskParams{}
	if e := eachMember(p, "", func(key, val []byte) (e *Error) {
		switch string(key) {
		case "id":
			gp.ID, e = readID(val, "", "id")
		case "historyLength", "history_length":
			gp.HistoryLength, e = readNonNegative(val, "", "historyLength")
		case "tenant":
			gp.Tenant, e = readID(val, "", "tenant")
		}
		return e
	}); e != nil {
		return nil, e
	}
	if gp.ID == "" {
		return nil, invalidField("id", "is required")
	}
	return gp, nil
}

// decodeTaskID reads cancel and subscribe params.
func decodeTaskID(d *dialect, params []byte) (*TaskIDParams, *Error) {
	p, e := checkParams(params)
	if e != nil {
		return nil, e
	}
	tp := &TaskIDParams{}
	if e := eachMember(p, "", func(key, val []byte) (e *Error) {
		switch string(key) {
		case "id":
			tp.ID, e = readID(val, "", "id")
		case "metadata":
			tp.Metadata, e = d.readMetadata(val, "", "metadata")
		case "tenant":
			tp.Tenant, e = readID(val, "", "tenant")
		}
		return e
	}); e != nil {
		return nil, e
	}
	if tp.ID == "" {
		return nil, invalidField("id", "is required")
	}
	return tp, nil
}

// The ListTasks page size bounds (1.0 §3): default 50, 1..100.
const (
	defaultPageSize = 50
	maxPageSize     = 100
)

// decodeListTasks reads ListTasks params. page_size is a proto3 optional
// field, so presence counts: absent (or null) gets the default of 50, and
// any given value outside 1..100, 0 included, is -32602.
func decodeListTasks(d *dialect, params []byte) (*ListTasksParams, *Error) {
	p, e := checkParams(params)
	if e != nil {
		return nil, e
	}
	lp := &ListTasksParams{PageSize: defaultPageSize}
	if e := eachMember(p, "", func(key, val []byte) (e *Error) {
		switch string(key) {
		case "tenant":
			lp.Tenant, e = readID(val, "", "tenant")
		case "contextId", "context_id":
			lp.ContextID, e = readID(val, "", "contextId")
		case "status":
			s, ok := d.parseState(val)
			if !ok {
				e = invalidField("status", "must be a task state")
			}
			lp.Status = s
		case "pageSize", "page_size":
			lp.PageSize, e = readInt32(val, "", "pageSize")
			if e == nil && (lp.PageSize < 1 || lp.PageSize > maxPageSize) {
				e = invalidField("pageSize", "must be between 1 and 100")
			}
		case "pageToken", "page_token":
			lp.PageToken, e = readID(val, "", "pageToken")
		case "historyLength", "history_length":
			lp.HistoryLength, e = readNonNegative(val, "", "historyLength")
		case "statusTimestampAfter", "status_timestamp_after":
			var s string
			s, e = readString(val, "", "statusTimestampAfter")
			if e == nil {
				t, ok := parseTimestamp(s)
				if !ok {
					e = invalidField("statusTimestampAfter", "must be an RFC 3339 timestamp")
				}
				lp.StatusTimestampAfter = &t
			}
		case "includeArtifacts", "include_artifacts":
			lp.IncludeArtifacts, e = readBool(val, "", "includeArtifacts")
		}
		return e
	}); e != nil {
		return nil, e
	}
	return lp, nil
}

// quoteList renders names as `"a" or "b"` for error descriptions.
func quoteList(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += " or "
		}
		out += `"` + n + `"`
	}
	return out
}

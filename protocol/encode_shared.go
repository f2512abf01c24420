package protocol

import (
	"strconv"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
)

// The encoders of both versions. Field order follows the 1.0 proto field
// numbers in both, so output is deterministic; 0.3 adds its "kind" last
// (and "final" on status updates). Empty optional members are omitted, as
// ProtoJSON omits proto3 defaults and as 0.3's optional fields allow;
// required members are always written.

func appendKind(d *dialect, dst []byte, kind string) []byte {
	if !d.tagged {
		return dst
	}
	dst = append(dst, `,"kind":"`...)
	dst = append(dst, kind...)
	return append(dst, '"')
}

// appendOptString appends `,"key":"s"` when s is not empty. key carries
// its quotes and colon.
func appendOptString(dst []byte, key, s string) []byte {
	if s == "" {
		return dst
	}
	dst = append(dst, key...)
	return jsonwire.AppendString(dst, s)
}

func appendOptStrings(dst []byte, key string, ss []string) []byte {
	if len(ss) == 0 {
		return dst
	}
	dst = append(dst, key...)
	return jsonwire.AppendStringArray(dst, ss)
}

func appendOptRaw(dst []byte, key string, raw []byte) []byte {
	if !jsonwire.HasValue(raw) {
		return dst
	}
	dst = append(dst, key...)
	return jsonwire.AppendRaw(dst, raw)
}

func appendParts(d *dialect, dst []byte, key string, parts []Part) []byte {
	dst = append(dst, `,"`...)
	dst = append(dst, key...)
	dst = append(dst, `":[`...)
	for i := range parts {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = d.appendPart(dst, &parts[i])
	}
	return append(dst, ']')
}

func appendMessage(d *dialect, dst []byte, m *Message) []byte {
	dst = append(dst, `{"messageId":`...)
	dst = jsonwire.AppendString(dst, m.ID)
	dst = appendOptString(dst, `,"contextId":`, m.ContextID)
	dst = appendOptString(dst, `,"taskId":`, m.TaskID)
	dst = append(dst, `,"role":"`...)
	dst = append(dst, d.roleName(m.Role)...)
	dst = append(dst, '"')
	dst = appendParts(d, dst, d.messageParts, m.Parts)
	dst = appendOptRaw(dst, `,"metadata":`, m.Metadata)
	dst = appendOptStrings(dst, `,"extensions":`, m.Extensions)
	dst = appendOptStrings(dst, `,"referenceTaskIds":`, m.ReferenceTaskIDs)
	dst = appendKind(d, dst, "message")
	return append(dst, '}')
}

func appendStatus(d *dialect, dst []byte, s *TaskStatus) []byte {
	dst = append(dst, `{"state":"`...)
	dst = append(dst, d.stateName(s.State)...)
	dst = append(dst, '"')
	if s.Message != nil {
		dst = append(dst, `,"message":`...)
		dst = appendMessage(d, dst, s.Message)
	}
	if !s.Timestamp.IsZero() {
		dst = append(dst, `,"timestamp":`...)
		dst = appendTimestamp(dst, s.Timestamp)
	}
	return append(dst, '}')
}

func appendArtifact(d *dialect, dst []byte, a *Artifact) []byte {
	dst = append(dst, `{"artifactId":`...)
	dst = jsonwire.AppendString(dst, a.ID)
	dst = appendOptString(dst, `,"name":`, a.Name)
	dst = appendOptString(dst, `,"description":`, a.Description)
	dst = appendParts(d, dst, "parts", a.Parts)
	dst = appendOptRaw(dst, `,"metadata":`, a.Metadata)
	dst = appendOptStrings(dst, `,"extensions":`, a.Extensions)
	return append(dst, '}')
}

func appendTask(d *dialect, dst []byte, t *Task) []byte {
	dst = append(dst, `{"id":`...)
	dst = jsonwire.AppendString(dst, t.ID)
	if t.ContextID != "" || d.tagged {
		// Required in 0.3 even when empty; 1.0 omits the proto3 default.
		dst = append(dst, `,"contextId":`...)
		dst = jsonwire.AppendString(dst, t.ContextID)
	}
	dst = append(dst, `,"status":`...)
	dst = appendStatus(d, dst, &t.Status)
	if len(t.Artifacts) > 0 {
		dst = append(dst, `,"artifacts":[`...)
		for i := range t.Artifacts {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendArtifact(d, dst, &t.Artifacts[i])
		}
		dst = append(dst, ']')
	}
	if len(t.History) > 0 {
		dst = append(dst, `,"history":[`...)
		for i := range t.History {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendMessage(d, dst, &t.History[i])
		}
		dst = append(dst, ']')
	}
	dst = appendOptRaw(dst, `,"metadata":`, t.Metadata)
	dst = appendKind(d, dst, "task")
	return append(dst, '}')
}

func appendStatusUpdate(d *dialect, dst []byte, u *StatusUpdate) []byte {
	dst = append(dst, `{"taskId":`...)
	dst = jsonwire.AppendString(dst, u.TaskID)
	dst = append(dst, `,"contextId":`...)
	dst = jsonwire.AppendString(dst, u.ContextID)
	dst = append(dst, `,"status":`...)
	dst = appendStatus(d, dst, &u.Status)
	if d.final {
		// 0.3 only: final is required there; 1.0 ends the stream instead.
		dst = append(dst, `,"final":`...)
		dst = strconv.AppendBool(dst, u.Final)
	}
	dst = appendOptRaw(dst, `,"metadata":`, u.Metadata)
	dst = appendKind(d, dst, "status-update")
	return append(dst, '}')
}

func appendArtifactUpdate(d *dialect, dst []byte, u *ArtifactUpdate) []byte {
	dst = append(dst, `{"taskId":`...)
	dst = jsonwire.AppendString(dst, u.TaskID)
	dst = append(dst, `,"contextId":`...)
	dst = jsonwire.AppendString(dst, u.ContextID)
	dst = append(dst, `,"artifact":`...)
	dst = appendArtifact(d, dst, &u.Artifact)
	if u.Append {
		dst = append(dst, `,"append":true`...)
	}
	if u.LastChunk {
		dst = append(dst, `,"lastChunk":true`...)
	}
	dst = appendOptRaw(dst, `,"metadata":`, u.Metadata)
	dst = appendKind(d, dst, "artifact-update")
	return append(dst, '}')
}

// appendEvent appends the result for one event: 0.3 the bare object (told
// apart by kind), 1.0 the StreamResponse / SendMessageResponse wrapper.
// An empty event (which the handler never sends) is null.
func appendEvent(d *dialect, dst []byte, ev *Event) []byte {
	var key string
	switch {
	case ev == nil:
		return append(dst, "null"...)
	case ev.Task != nil:
		key = `{"task":`
	case ev.Message != nil:
		key = `{"message":`
	case ev.Status != nil:
		key = `{"statusUpdate":`
	case ev.Artifact != nil:
		key = `{"artifactUpdate":`
	default:
		return append(dst, "null"...)
	}
	if !d.tagged {
		dst = append(dst, key...)
	}
	switch {
	case ev.Task != nil:
		dst = appendTask(d, dst, ev.Task)
	case ev.Message != nil:
		dst = appendMessage(d, dst, ev.Message)
	case ev.Status != nil:
		dst = appendStatusUpdate(d, dst, ev.Status)
	default:
		dst = appendArtifactUpdate(d, dst, ev.Artifact)
	}
	if !d.tagged {
		dst = append(dst, '}')
	}
	return dst
}

// appendListTasks appends a ListTasksResponse. Unlike other 1.0 messages
// every member is written even at its default: the spec requires
// nextPageToken (even "") and pageSize, totalSize and tasks.
func appendListTasks(d *dialect, dst []byte, r *ListTasksResult) []byte {
	dst = append(dst, `{"tasks":[`...)
	for i := range r.Tasks {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendTask(d, dst, &r.Tasks[i])
	}
	dst = append(dst, `],"nextPageToken":`...)
	dst = jsonwire.AppendString(dst, r.NextPageToken)
	dst = append(dst, `,"pageSize":`...)
	dst = strconv.AppendInt(dst, int64(r.PageSize), 10)
	dst = append(dst, `,"totalSize":`...)
	dst = strconv.AppendInt(dst, int64(r.TotalSize), 10)
	return append(dst, '}')
}

// appendViolations appends [{"field":…,"description":…},…].
func appendViolations(dst []byte, vs []FieldViolation) []byte {
	dst = append(dst, '[')
	for i, v := range vs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"field":`...)
		dst = jsonwire.AppendString(dst, v.Field)
		dst = append(dst, `,"description":`...)
		dst = jsonwire.AppendString(dst, v.Description)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

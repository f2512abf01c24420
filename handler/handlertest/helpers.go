package handlertest

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// userMessage is a user message with one text part.
func userMessage(id, s string) protocol.Message {
	return protocol.Message{ID: id, Role: protocol.RoleUser, Parts: []protocol.Part{{Kind: protocol.PartText, Text: s}}}
}

// sendParams is a send of message m.
func sendParams(m protocol.Message, blocking bool) *protocol.SendParams {
	return &protocol.SendParams{Message: m, Blocking: blocking}
}

// continueMessage is a user message continuing task taskID.
func continueMessage(id, s, taskID string) protocol.Message {
	m := userMessage(id, s)
	m.TaskID = taskID
	return m
}

// sendTask sends p as owner and returns the Task it answers.
func (e *env) sendTask(owner string, p *protocol.SendParams) *protocol.Task {
	e.t.Helper()
	ev, perr := e.c.Send(e.ctx(), owner, p)
	if perr != nil {
		e.t.Fatalf("send %s: %v", p.Message.ID, perr)
	}
	if ev.Task == nil || ev.Message != nil {
		e.t.Fatalf("send %s answered %+v, want a Task", p.Message.ID, ev)
	}
	return ev.Task
}

// getTask reads owner's task id.
func (e *env) getTask(owner, id string) *protocol.Task {
	e.t.Helper()
	task, perr := e.c.GetTask(e.ctx(), owner, &protocol.GetTaskParams{ID: id})
	if perr != nil {
		e.t.Fatalf("GetTask %s: %v", id, perr)
	}
	return task
}

// waitTask polls owner's task id until cond holds of it; the wire offers
// nothing to wait on but a stream, which would change what is tested.
func (e *env) waitTask(owner, id, what string, cond func(*protocol.Task) bool) *protocol.Task {
	e.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		task := e.getTask(owner, id)
		if cond(task) {
			return task
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("task %s (%s) is not %s", id, task.Status.State, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitState waits until owner's task id is in state want.
func (e *env) waitState(owner, id string, want protocol.TaskState) *protocol.Task {
	e.t.Helper()
	return e.waitTask(owner, id, want.String(), func(task *protocol.Task) bool { return task.Status.State == want })
}

// waitIdle waits until no run is going: a run that lost to a cancel has
// had its chance to write.
func (e *env) waitIdle() {
	e.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for e.runner.Running() != 0 {
		if time.Now().After(deadline) {
			e.t.Fatalf("%d runs still going", e.runner.Running())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// wantError fails t unless perr is the error code.
func wantError(t *testing.T, what string, perr *protocol.Error, code int) {
	t.Helper()
	if perr == nil {
		t.Fatalf("%s: no error, want %d", what, code)
	}
	if perr.Code != code {
		t.Fatalf("%s: error %d %q, want %d", what, perr.Code, perr.Message, code)
	}
}

// stream opens a streaming send as owner, failing the scenario on the
// error it answers.
func (e *env) stream(owner string, p *protocol.SendParams) Events {
	e.t.Helper()
	evs, perr := e.c.Stream(e.ctx(), owner, p)
	if perr != nil {
		e.t.Fatalf("stream %s: %v", p.Message.ID, perr)
	}
	return evs
}

// subscribe subscribes owner to task id, failing the scenario on the
// error it answers.
func (e *env) subscribe(owner, id, lastEventID string) Events {
	e.t.Helper()
	evs, perr := e.c.Subscribe(e.ctx(), owner, id, lastEventID)
	if perr != nil {
		e.t.Fatalf("subscribe to %s: %v", id, perr)
	}
	return evs
}

// next reads one event of evs.
func next(t *testing.T, evs Events) protocol.Event {
	t.Helper()
	ev, err := evs.Next()
	if err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	return ev
}

// rest reads evs to its end: the events, and nil when the server ended
// the stream cleanly, else how it ended.
func rest(evs Events) ([]protocol.Event, error) {
	var out []protocol.Event
	for {
		ev, err := evs.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

// restClean reads evs to its clean end and checks that a status marked
// final (0.3's end of stream) is the last event; it returns the events
// in shape.
func restClean(t *testing.T, evs Events) ([]protocol.Event, string) {
	t.Helper()
	got, err := rest(evs)
	if err != nil {
		t.Fatalf("the stream ended with %v after %s", err, shape(got...))
	}
	for i, ev := range got {
		if ev.Status != nil && ev.Status.Final && i != len(got)-1 {
			t.Fatalf("event %d of %d is final: %s", i, len(got), shape(got...))
		}
	}
	return got, shape(got...)
}

// shape is events as kinds, states and texts, without ids and
// timestamps: "task(submitted) status(working) artifact("Hel",append=false,last=false)".
func shape(evs ...protocol.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		switch {
		case ev.Task != nil:
			fmt.Fprintf(&b, "task(%s)", ev.Task.Status.State)
		case ev.Status != nil:
			fmt.Fprintf(&b, "status(%s)", ev.Status.Status.State)
		case ev.Artifact != nil:
			fmt.Fprintf(&b, "artifact(%q,append=%v,last=%v)", partsText(ev.Artifact.Artifact.Parts), ev.Artifact.Append, ev.Artifact.LastChunk)
		case ev.Message != nil:
			fmt.Fprintf(&b, "message(%q)", partsText(ev.Message.Parts))
		default:
			b.WriteString("empty")
		}
	}
	return b.String()
}

// partsText is the parts' texts joined by "|" (a data part as its JSON).
func partsText(ps []protocol.Part) string {
	var s []string
	for _, p := range ps {
		if p.Kind == protocol.PartData {
			s = append(s, compactJSON(p.Data))
			continue
		}
		s = append(s, p.Text)
	}
	return strings.Join(s, "|")
}

// compactJSON is js without insignificant space: a binding may respace a
// data part (ProtoJSON does, on purpose) without changing it.
func compactJSON(js []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, js); err != nil {
		return string(js)
	}
	return b.String()
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// ids are the ids of tasks.
func ids(tasks []protocol.Task) []string {
	out := make([]string, len(tasks))
	for i := range tasks {
		out[i] = tasks[i].ID
	}
	return out
}

// roles are the roles of msgs, as "user,agent,…".
func roles(msgs []protocol.Message) string {
	var s []string
	for _, m := range msgs {
		switch m.Role {
		case protocol.RoleUser:
			s = append(s, "user")
		case protocol.RoleAgent:
			s = append(s, "agent")
		default:
			s = append(s, "unspecified")
		}
	}
	return strings.Join(s, ",")
}

// AgentContextID is the context id the agent is told for owner's context
// contextID under key, derived here on its own as the service documents
// it (handler/contexts.go): the first 128 bits of SHA-256 over the key,
// the owner's length (8 bytes, big-endian), the owner and contextID, as a
// version 8 UUID.
func AgentContextID(key []byte, owner, contextID string) string {
	b := append([]byte(nil), key...)
	b = binary.BigEndian.AppendUint64(b, uint64(len(owner)))
	b = append(b, owner...)
	b = append(b, contextID...)
	sum := sha256.Sum256(b)
	sum[6] = sum[6]&0x0f | 0x80
	sum[8] = sum[8]&0x3f | 0x80
	h := hex.EncodeToString(sum[:16])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// isUUID reports whether s has the shape of the ids the service makes.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdef", c) {
				return false
			}
		}
	}
	return true
}

package protocol

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// onWire is what a value looks like after a trip through version v's
// wire: 0.3 drops media types on text and data parts and wraps non-object
// data; 1.0 has no status-update final; timestamps keep milliseconds.
type onWire struct{ v Version }

func (w onWire) message(m Message) Message {
	if w.v == V03 {
		m = forV03(m)
	}
	return m
}

func (w onWire) status(s TaskStatus) TaskStatus {
	s.Timestamp = s.Timestamp.Truncate(time.Millisecond)
	if s.Message != nil {
		m := w.message(*s.Message)
		s.Message = &m
	}
	return s
}

func (w onWire) artifact(a Artifact) Artifact {
	a.Parts = w.message(Message{Parts: a.Parts}).Parts
	return a
}

func (w onWire) task(t Task) Task {
	t.Status = w.status(t.Status)
	var arts []Artifact
	for _, a := range t.Artifacts {
		arts = append(arts, w.artifact(a))
	}
	t.Artifacts = arts
	var hist []Message
	for _, m := range t.History {
		hist = append(hist, w.message(m))
	}
	t.History = hist
	return t
}

func (w onWire) event(ev Event) Event {
	switch {
	case ev.Task != nil:
		t := w.task(*ev.Task)
		ev.Task = &t
	case ev.Message != nil:
		m := w.message(*ev.Message)
		ev.Message = &m
	case ev.Status != nil:
		s := *ev.Status
		s.Status = w.status(s.Status)
		if w.v == V10 {
			s.Final = false
		}
		ev.Status = &s
	case ev.Artifact != nil:
		a := *ev.Artifact
		a.Artifact = w.artifact(a.Artifact)
		ev.Artifact = &a
	}
	return ev
}

// fixtureEvents is one event of each kind, with every part kind among
// them.
func fixtureEvents() []Event {
	task, agent := fixtureTask(), fixtureAgentMessage()
	working, final := fixtureStatusWorking(), fixtureStatusFinal()
	first, last := fixtureArtifactFirst(), fixtureArtifactLast()
	every := fixtureArtifactFirst()
	every.Artifact.Parts = fixtureParts()
	every.Artifact.Metadata = json.RawMessage(`{"k":"v"}`)
	every.Artifact.Extensions = []string{"urn:x"}
	return []Event{{Task: &task}, {Message: &agent}, {Status: &working}, {Status: &final},
		{Artifact: &first}, {Artifact: &last}, {Artifact: &every}}
}

// TestClientResultRoundTrip checks client-decode(server-encode(x)) == x
// for tasks, messages and status and artifact events in both versions.
func TestClientResultRoundTrip(t *testing.T) {
	for _, c := range []Codec{codecV03, codecV10} {
		w := onWire{c.Version()}
		task := fixtureTask()
		bare := Task{ID: "task-2", Status: TaskStatus{State: StateSubmitted}}
		for i, tk := range []Task{task, bare} {
			enc := c.AppendTask(nil, &tk)
			got, err := c.DecodeTask(enc)
			if err != nil {
				t.Fatalf("%v task #%d: %v\n%s", c.Version(), i, err, enc)
			}
			if want := w.task(tk); !reflect.DeepEqual(*got, want) {
				t.Errorf("%v task #%d:\n got %+v\nwant %+v", c.Version(), i, *got, want)
			}
		}
		for i, ev := range fixtureEvents() {
			enc := c.AppendStreamResult(nil, &ev)
			got, err := c.DecodeStreamResult(enc)
			if err != nil {
				t.Fatalf("%v event #%d: %v\n%s", c.Version(), i, err, enc)
			}
			if want := w.event(ev); !reflect.DeepEqual(*got, want) {
				t.Errorf("%v event #%d:\n got %s\nwant %s", c.Version(), i, dump(*got), dump(want))
			}
			if ev.Task == nil && ev.Message == nil {
				continue
			}
			enc = c.AppendSendResult(nil, &ev)
			got, err = c.DecodeSendResult(enc)
			if err != nil {
				t.Fatalf("%v send result #%d: %v\n%s", c.Version(), i, err, enc)
			}
			if want := w.event(ev); !reflect.DeepEqual(*got, want) {
				t.Errorf("%v send result #%d:\n got %s\nwant %s", c.Version(), i, dump(*got), dump(want))
			}
		}
	}
}

func dump(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// wantAgentError checks err is -32006 naming field (its first violation,
// and in the message).
func wantAgentError(t *testing.T, name string, err error, field string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: got %v, want -32006 naming %q", name, err, field)
	}
	if e.Code != CodeInvalidAgentResponse || e.Reason != "INVALID_AGENT_RESPONSE" {
		t.Fatalf("%s: code %d reason %q", name, e.Code, e.Reason)
	}
	if len(e.Violations) == 0 || e.Violations[0].Field != field {
		t.Fatalf("%s: violations %+v, want field %q", name, e.Violations, field)
	}
	if !strings.Contains(e.Message, field+": ") {
		t.Fatalf("%s: message %q does not name %q", name, e.Message, field)
	}
	return e
}

// TestClientDecodeGarbage: whatever an agent sends that is not a result of
// the version is -32006 naming the field.
func TestClientDecodeGarbage(t *testing.T) {
	const (
		taskOnly = 1 << iota
		sendOnly
		streamOnly
		all = taskOnly | sendOnly | streamOnly
	)
	manyParts := `[` + strings.Repeat(`{"kind":"text","text":"x","text2":1},`, DefaultMaxParts) + `{"kind":"text","text":"x"}]`
	manyParts10 := `[` + strings.Repeat(`{"text":"x"},`, DefaultMaxParts) + `{"text":"x"}]`
	longID := strings.Repeat("i", maxIdentifierBytes+1)
	bigMeta := `{"k":"` + strings.Repeat("m", DefaultMaxMetadataBytes) + `"}`
	tests := []struct {
		name    string
		v       Version // 0: both
		in      string
		methods int
		field   string
		limit   string // the limit named in the metadata, if any
	}{
		{"empty", 0, ``, all, "result", ""},
		{"not json", 0, `{"id":`, all, "result", ""},
		{"bad utf8", 0, "{\"id\":\"\xff\"}", all, "result", ""},
		{"array", 0, `[{"kind":"task"}]`, all, "result", ""},
		{"null", 0, `null`, all, "result", ""},
		{"string", 0, `"task"`, all, "result", ""},

		{"no kind", V03, `{"id":"t","contextId":"c","status":{"state":"working"}}`, sendOnly | streamOnly, "result.kind", ""},
		{"unknown kind", V03, `{"kind":"tasks","id":"t"}`, sendOnly | streamOnly, "result.kind", ""},
		{"kind not string", V03, `{"kind":1}`, sendOnly | streamOnly, "result.kind", ""},
		{"event in send", V03, `{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"working"},"final":false}`, sendOnly, "result.kind", ""},
		{"task kind wrong", V03, `{"kind":"message","id":"t","status":{"state":"working"}}`, taskOnly, "result.kind", ""},
		{"nested kind wrong", V03, `{"kind":"task","id":"t","status":{"state":"working","message":{"kind":"task","messageId":"m","role":"agent","parts":[]}}}`, all, "result.status.message.kind", ""},
		{"kind twice", V03, `{"kind":"task","kind":"message"}`, sendOnly | streamOnly, "result.kind", ""},
		{"final not bool", V03, `{"kind":"status-update","taskId":"t","status":{"state":"working"},"final":"yes"}`, streamOnly, "result.final", ""},
		{"v03 state spelling", V03, `{"kind":"task","id":"t","status":{"state":"TASK_STATE_WORKING"}}`, all, "result.status.state", ""},
		{"v03 parts over limit", V03, `{"kind":"task","id":"t","status":{"state":"working"},"artifacts":[{"artifactId":"a","parts":` + manyParts + `}]}`, all, "result.artifacts[0].parts", LimitMaxParts},
		{"v03 file uri unsafe", V03, `{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"file","file":{"uri":"javascript:alert(1)"}}]}`, sendOnly | streamOnly, "result.parts[0].url", ""},
		{"v03 bad base64", V03, `{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"file","file":{"bytes":"!!"}}]}`, sendOnly | streamOnly, "result.parts[0].file.bytes", ""},

		{"no member", V10, `{}`, sendOnly | streamOnly, "result", ""},
		{"two members", V10, `{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[]},"task":{"id":"t","status":{"state":"TASK_STATE_WORKING"}}}`, sendOnly | streamOnly, "result", ""},
		{"same member twice", V10, `{"statusUpdate":{"taskId":"t","status":{"state":"TASK_STATE_WORKING"}},"status_update":{}}`, streamOnly, "result.status_update", ""},
		{"event in send", V10, `{"statusUpdate":{"taskId":"t","status":{"state":"TASK_STATE_WORKING"}}}`, sendOnly, "result", ""},
		{"bare task as send", V10, `{"id":"t","status":{"state":"TASK_STATE_WORKING"}}`, sendOnly | streamOnly, "result", ""},
		{"wrapped task as task", V10, `{"task":{"id":"t","status":{"state":"TASK_STATE_WORKING"}}}`, taskOnly, "result.id", ""},
		{"wrapper not object", V10, `{"task":[]}`, sendOnly | streamOnly, "result.task", ""},
		{"v10 state spelling", V10, `{"task":{"id":"t","status":{"state":"working"}}}`, sendOnly | streamOnly, "result.task.status.state", ""},
		{"v10 unspecified state", V10, `{"task":{"id":"t","status":{"state":0}}}`, sendOnly | streamOnly, "result.task.status.state", ""},
		{"v10 parts over limit", V10, `{"artifactUpdate":{"taskId":"t","artifact":{"artifactId":"a","parts":` + manyParts10 + `}}}`, streamOnly, "result.artifactUpdate.artifact.parts", LimitMaxParts},
		{"v10 two part members", V10, `{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"a","url":"https://x.example/"}]}}`, sendOnly | streamOnly, "result.message.parts[0]", ""},
		{"v10 metadata over limit", V10, `{"statusUpdate":{"taskId":"t","status":{"state":"TASK_STATE_WORKING"},"metadata":` + bigMeta + `}}`, streamOnly, "result.statusUpdate.metadata", LimitMaxMetadataBytes},
		{"v10 id over limit", V10, `{"task":{"id":"` + longID + `","status":{"state":"TASK_STATE_WORKING"}}}`, sendOnly | streamOnly, "result.task.id", limitMaxIdentifierBytes},
		{"v10 filename unsafe", V10, `{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"raw":"","filename":"../x"}]}}`, sendOnly | streamOnly, "result.message.parts[0].filename", ""},
		{"v10 artifact no id", V10, `{"artifactUpdate":{"taskId":"t","artifact":{"parts":[]}}}`, streamOnly, "result.artifactUpdate.artifact.artifactId", ""},
		{"v10 artifact missing", V10, `{"artifactUpdate":{"taskId":"t","append":true}}`, streamOnly, "result.artifactUpdate.artifact", ""},
		{"v10 lastChunk not bool", V10, `{"artifactUpdate":{"taskId":"t","artifact":{"artifactId":"a"},"lastChunk":1}}`, streamOnly, "result.artifactUpdate.lastChunk", ""},
		{"v10 status update no task", V10, `{"statusUpdate":{"contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`, streamOnly, "result.statusUpdate.taskId", ""},
		{"v10 message no id", V10, `{"message":{"role":"ROLE_AGENT","parts":[]}}`, sendOnly | streamOnly, "result.message.messageId", ""},
		{"v10 message no role", V10, `{"message":{"messageId":"m","parts":[]}}`, sendOnly | streamOnly, "result.message.role", ""},
		{"v10 history entry", V10, `{"task":{"id":"t","status":{"state":"TASK_STATE_WORKING"},"history":[{"messageId":"m","role":"ROLE_USER","parts":[]},{"messageId":"m2","role":"ROLE_BOT","parts":[]}]}}`, sendOnly | streamOnly, "result.task.history[1].role", ""},
	}
	// Cases that read the same in both versions, as a bare task.
	for _, v := range []Version{V03, V10} {
		kind := ""
		if v == V03 {
			kind = `"kind":"task",`
		}
		state := v03.stateNames[StateWorking]
		if v == V10 {
			state = v10.stateNames[StateWorking]
		}
		st := `"status":{"state":"` + state + `"}`
		for _, tc := range []struct{ name, in, field string }{
			{"task no id", `{` + kind + st + `}`, "result.id"},
			{"task empty id", `{` + kind + `"id":"",` + st + `}`, "result.id"},
			{"task id not string", `{` + kind + `"id":7,` + st + `}`, "result.id"},
			{"task no status", `{` + kind + `"id":"t"}`, "result.status"},
			{"task status no state", `{` + kind + `"id":"t","status":{}}`, "result.status.state"},
			{"task bad timestamp", `{` + kind + `"id":"t","status":{"state":"` + state + `","timestamp":"yesterday"}}`, "result.status.timestamp"},
			{"task year 0 shifted", `{` + kind + `"id":"t","status":{"state":"` + state + `","timestamp":"0000-01-01T00:00:00+01:00"}}`, "result.status.timestamp"},
			{"task id twice", `{` + kind + `"id":"t","id":"u",` + st + `}`, "result.id"},
			{"task context snake twice", `{` + kind + `"id":"t","contextId":"c","context_id":"d",` + st + `}`, "result.context_id"},
			{"task artifacts not array", `{` + kind + `"id":"t",` + st + `,"artifacts":{}}`, "result.artifacts"},
			{"task metadata not object", `{` + kind + `"id":"t",` + st + `,"metadata":[1]}`, "result.metadata"},
		} {
			tests = append(tests, struct {
				name    string
				v       Version
				in      string
				methods int
				field   string
				limit   string
			}{tc.name, v, tc.in, taskOnly, tc.field, ""})
		}
	}
	for _, tt := range tests {
		for _, c := range []Codec{codecV03, codecV10} {
			if tt.v != 0 && tt.v != c.Version() {
				continue
			}
			name := c.Version().String() + " " + tt.name
			check := func(what string, err error) {
				e := wantAgentError(t, name+" "+what, err, tt.field)
				if tt.limit != "" && e.Metadata["limit"] != tt.limit {
					t.Errorf("%s %s: metadata %v, want limit %s", name, what, e.Metadata, tt.limit)
				}
			}
			if tt.methods&taskOnly != 0 {
				got, err := c.DecodeTask(json.RawMessage(tt.in))
				if got != nil {
					t.Errorf("%s: task %+v with error", name, got)
				}
				check("DecodeTask", err)
			}
			if tt.methods&sendOnly != 0 {
				ev, err := c.DecodeSendResult(json.RawMessage(tt.in))
				if ev != nil {
					t.Errorf("%s: event %+v with error", name, ev)
				}
				check("DecodeSendResult", err)
			}
			if tt.methods&streamOnly != 0 {
				ev, err := c.DecodeStreamResult(json.RawMessage(tt.in))
				if ev != nil {
					t.Errorf("%s: event %+v with error", name, ev)
				}
				check("DecodeStreamResult", err)
			}
		}
	}
}

// TestAgentErrorFieldBounded: a repeated member's name, the agent's own
// text, is cut short in the field it names.
func TestAgentErrorFieldBounded(t *testing.T) {
	key := strings.Repeat("é", 300)
	_, err := codecV10.DecodeTask(json.RawMessage(`{"id":"t","` + key + `":1,"` + key + `":2}`))
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInvalidAgentResponse {
		t.Fatalf("%v", err)
	}
	f := e.Violations[0].Field
	if !strings.HasPrefix(f, "result.éé") || !strings.HasSuffix(f, "…") || len(f) > maxFieldBytes+len("…") || !utf8.ValidString(f) {
		t.Fatalf("field %q", f)
	}
}

// TestClientDecodeLimits: a codec made with limits holds the agent to
// them, as it holds callers.
func TestClientDecodeLimits(t *testing.T) {
	lim := Limits{MaxParts: 2, MaxTextBytes: 4, MaxFileBytes: 3, MaxMetadataBytes: 10}
	tests := []struct {
		v     Version
		in    string
		field string
		limit string
	}{
		{V03, `{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"text","text":"12345"}]}`, "result.parts[0].text", LimitMaxTextBytes},
		{V03, `{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"file","file":{"bytes":"AAAAAA=="}}]}`, "result.parts[0].file.bytes", LimitMaxFileBytes},
		{V03, `{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"text","text":"a"},{"kind":"text","text":"b"},{"kind":"text","text":"c"}]}`, "result.parts", LimitMaxParts},
		{V10, `{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"12345"}]}}`, "result.message.parts[0].text", LimitMaxTextBytes},
		{V10, `{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"raw":"AAAAAA=="}]}}`, "result.message.parts[0].raw", LimitMaxFileBytes},
		{V10, `{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"a","metadata":{"k":"0123456789"}}]}}`, "result.message.parts[0].metadata", LimitMaxMetadataBytes},
		{V10, `{"artifactUpdate":{"taskId":"t","artifact":{"artifactId":"a","name":"12345","parts":[]}}}`, "result.artifactUpdate.artifact.name", LimitMaxTextBytes},
	}
	for i, tt := range tests {
		c := NewCodec(tt.v, lim)
		_, err := c.DecodeStreamResult(json.RawMessage(tt.in))
		e := wantAgentError(t, strconv.Itoa(i), err, tt.field)
		if e.Metadata["limit"] != tt.limit {
			t.Errorf("#%d: metadata %v, want %s", i, e.Metadata, tt.limit)
		}
		// Within the defaults, the same result decodes.
		if _, err := codecFor(tt.v).DecodeStreamResult(json.RawMessage(tt.in)); err != nil {
			t.Errorf("#%d: default limits: %v", i, err)
		}
	}
}

// TestClientDecodeLenient: what real agents send that is not this
// server's own rendering still decodes: snake_case members, numeric
// enums (1.0), 0.3 timestamps without a zone, unknown members, nulls.
func TestClientDecodeLenient(t *testing.T) {
	ev, err := codecV10.DecodeStreamResult(json.RawMessage(`{"artifact_update":{"task_id":"t","context_id":"c","artifact":{"artifact_id":"a","parts":[{"text":"x","media_type":"text/plain"}]},"last_chunk":true,"append":false,"extra":{"x":1},"metadata":null}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := ArtifactUpdate{TaskID: "t", ContextID: "c", LastChunk: true,
		Artifact: Artifact{ID: "a", Parts: []Part{{Kind: PartText, Text: "x", MediaType: "text/plain"}}}}
	if !reflect.DeepEqual(*ev.Artifact, want) {
		t.Fatalf("got %+v", *ev.Artifact)
	}
	tk, err := codecV10.DecodeTask(json.RawMessage(`{"id":"t","status":{"state":3,"timestamp":"2026-03-12T10:30:00.5+02:00"}}`))
	if err != nil || tk.Status.State != StateCompleted || !tk.Status.Timestamp.Equal(time.Date(2026, 3, 12, 8, 30, 0, 5e8, time.UTC)) {
		t.Fatalf("%v %+v", err, tk)
	}
	tk, err = codecV03.DecodeTask(json.RawMessage(`{"kind":"task","id":"t","contextId":"c","status":{"state":"input-required","timestamp":"2026-03-12T10:30:00"},"history":[]}`))
	if err != nil || tk.Status.State != StateInputRequired || tk.Status.Timestamp.Hour() != 10 || tk.History != nil {
		t.Fatalf("%v %+v", err, tk)
	}
	// 0.3: a bare task with no kind is still a task where a task is all
	// the method returns.
	if _, err := codecV03.DecodeTask(json.RawMessage(`{"id":"t","status":{"state":"completed"}}`)); err != nil {
		t.Fatal(err)
	}
}

// TestStreamResultFinalRoundTrip: a status update's final, which both 0.3
// flavours carry (JSON-RPC and the 0.3 proto's HTTP+JSON and gRPC), is
// read back as written; 1.0 has none.
func TestStreamResultFinalRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		name  string
		codec Codec
		final bool
	}{
		{"0.3 JSON-RPC", NewCodec(V03, Limits{}), true},
		{"0.3 HTTP+JSON", NewRESTCodecV03(Limits{}), true},
		{"0.3 gRPC", NewGRPCCodecV03(Limits{}), true},
		{"1.0", NewCodec(V10, Limits{}), false},
	} {
		ev := Event{Status: &StatusUpdate{TaskID: "t1", ContextID: "c1", Status: TaskStatus{State: StateCompleted}, Final: true}}
		raw := tt.codec.AppendStreamResult(nil, &ev)
		got, err := tt.codec.DecodeStreamResult(raw)
		if err != nil {
			t.Fatalf("%s: %v (%s)", tt.name, err, raw)
		}
		if got.Status == nil || got.Status.Final != tt.final {
			t.Errorf("%s: %s read back as %+v, want final %v", tt.name, raw, got.Status, tt.final)
		}
	}
}

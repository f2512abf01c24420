package protocol

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonwire"
)

// TestMessageRoundTrip checks decode(encode(m)) == m for each version, over
// messages that use every member and part kind the version can carry.
func TestMessageRoundTrip(t *testing.T) {
	full := fixtureUserMessage()
	full.Parts = fixtureParts()
	for _, c := range []dialectCodec{codecV03.(dialectCodec), codecV10.(dialectCodec)} {
		msgs := []Message{fixtureUserMessage(), fixtureAgentMessage(), full,
			{ID: "m", Role: RoleUser, Parts: []Part{{Kind: PartText, Text: ""}}}}
		for i, m := range msgs {
			if c.d.tagged {
				m = forV03(m)
			}
			enc := appendMessage(c.d, nil, &m)
			if !json.Valid(enc) {
				t.Fatalf("invalid JSON %s", enc)
			}
			got, e := decodeMessage(c.d, enc, "message")
			if e != nil {
				t.Fatalf("%v #%d: %v\n%s", c.Version(), i, e, enc)
			}
			if !reflect.DeepEqual(got, m) {
				t.Errorf("%v #%d round trip:\n got %+v\nwant %+v\n json %s", c.Version(), i, got, m, enc)
			}
			// Through the public API too, for user messages.
			if m.Role == RoleUser {
				p, err := c.DecodeSend(json.RawMessage(`{"message":` + string(enc) + `}`))
				if err != nil || !reflect.DeepEqual(p.Message, m) {
					t.Errorf("%v #%d DecodeSend: %v %+v", c.Version(), i, err, p)
				}
			}
		}
	}
}

// forV03 drops what 0.3 cannot carry: media types on text and data parts,
// and non-object data (which it wraps as {"value": …}).
func forV03(m Message) Message {
	var parts []Part
	for _, p := range m.Parts {
		switch p.Kind {
		case PartText:
			p.MediaType = ""
		case PartData:
			p.MediaType = ""
			if !jsonwire.IsObject(p.Data) {
				p.Data = json.RawMessage(`{"value":` + string(p.Data) + `}`)
			}
		}
		parts = append(parts, p)
	}
	m.Parts = parts
	return m
}

// TestStateAndRoleSpellings checks every enum value encodes to the
// version's spelling and parses back.
func TestStateAndRoleSpellings(t *testing.T) {
	want03 := []string{"unknown", "submitted", "working", "completed", "failed", "canceled", "input-required", "rejected", "auth-required"}
	want10 := []string{"TASK_STATE_UNSPECIFIED", "TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_REJECTED", "TASK_STATE_AUTH_REQUIRED"}
	for s := StateUnspecified; s <= StateAuthRequired; s++ {
		if v03.stateName(s) != want03[s] || v10.stateName(s) != want10[s] {
			t.Errorf("state %d: %s %s", s, v03.stateName(s), v10.stateName(s))
		}
		if got, ok := v03.parseState([]byte(`"` + want03[s] + `"`)); !ok || got != s {
			t.Errorf("v03 parse %s", want03[s])
		}
		if got, ok := v10.parseState([]byte(`"` + want10[s] + `"`)); !ok || got != s {
			t.Errorf("v10 parse %s", want10[s])
		}
		if got, ok := v10.parseState([]byte{byte('0' + s)}); !ok || got != s {
			t.Errorf("v10 parse int %d", s)
		}
		if _, ok := v03.parseState([]byte{byte('0' + s)}); ok {
			t.Errorf("v03 accepts int state %d", s)
		}
	}
	if v03.stateName(TaskState(42)) != "unknown" || v10.stateName(-1) != "TASK_STATE_UNSPECIFIED" {
		t.Error("out of range state")
	}
	if v03.roleName(RoleUser) != "user" || v03.roleName(RoleAgent) != "agent" || v10.roleName(RoleUser) != "ROLE_USER" || v10.roleName(RoleAgent) != "ROLE_AGENT" {
		t.Error("role names")
	}
}

// The 0.3 spelling is the logs' and the agent contract's: String writes
// it and ParseTaskState reads it back, for every state but unspecified.
func TestTaskStateNames(t *testing.T) {
	for s := StateSubmitted; s <= StateAuthRequired; s++ {
		if got, ok := ParseTaskState(s.String()); !ok || got != s {
			t.Errorf("%d: %q reads back as %d, %v", s, s.String(), got, ok)
		}
	}
	if StateInputRequired.String() != "input-required" || TaskState(42).String() != "unknown" {
		t.Errorf("spellings %q %q", StateInputRequired.String(), TaskState(42).String())
	}
	for _, bad := range []string{"unknown", "", "Completed", "TASK_STATE_COMPLETED"} {
		if s, ok := ParseTaskState(bad); ok {
			t.Errorf("%q read as %d", bad, s)
		}
	}
}

package protocol

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDuplicateMembers: a member given twice in any protocol object below
// the envelope is -32602 naming it (under either spelling, null or not),
// in both versions; the caller's own JSON (metadata, data) passes as it
// is, repeated keys and all.
func TestDuplicateMembers(t *testing.T) {
	msg10 := func(extra string) string {
		return `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]` + extra + `}}`
	}
	msg03 := func(extra string) string {
		return `{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]` + extra + `}}`
	}
	for _, c := range []struct {
		name   string
		v      Version
		method string
		params string
		field  string // "": accepted
	}{
		{"taskId twice", V10, "send", msg10(`,"taskId":"","taskId":"nope"`), "message.taskId"},
		{"taskId null then set", V03, "send", msg03(`,"taskId":null,"taskId":"nope"`), "message.taskId"},
		{"messageId under both names", V10, "send", msg10(`,"message_id":"m2"`), "message.message_id"},
		{"parts twice", V03, "send", msg03(`,"parts":[{"kind":"text","text":"other"}]`), "message.parts"},
		{"message twice", V10, "send", `{"message":{"messageId":"a","role":"ROLE_USER","parts":[{"text":"a"}]},"message":{"messageId":"b","role":"ROLE_USER","parts":[{"text":"b"}]}}`, "message"},
		{"text of a part twice", V10, "send", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"a","text":"b"}]}}`, "message.parts[0].text"},
		{"kind of a 0.3 part twice", V03, "send", `{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","kind":"data","text":"a"}]}}`, "message.parts[0].kind"},
		{"uri of a 0.3 file twice", V03, "send", `{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"file","file":{"uri":"https://a/x","uri":"https://b/y"}}]}}`, "message.parts[0].file.uri"},
		{"configuration member twice", V10, "send", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"returnImmediately":true,"return_immediately":false}}`, "configuration.return_immediately"},
		{"an unknown member twice", V10, "send", msg10(`,"x-future":1,"x-future":2`), "message.x-future"},
		{"get id twice", V10, "get", `{"id":"a","id":"b"}`, "id"},
		{"cancel id twice", V03, "cancel", `{"id":"a","id":"b"}`, "id"},
		{"list pageSize twice", V10, "list", `{"pageSize":5,"page_size":100}`, "page_size"},
		{"metadata keys repeat: the caller's JSON", V10, "send", msg10(`,"metadata":{"k":1,"k":2}`), ""},
		{"data keys repeat: the caller's JSON", V10, "send", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"k":1,"k":2}}]}}`, ""},
		{"distinct names that differ only in case", V10, "send", msg10(`,"messageid":"x"`), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := decodeParams(codecFor(c.v), c.method, c.params)
			if c.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			wantInvalid(t, err, c.field)
		})
	}
	// An object of more members than any protocol object has is refused
	// (the duplicate check compares each member with those before it).
	many := `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]`
	for i := range maxMembers {
		many += `,"x` + strings.Repeat("y", i) + `":0`
	}
	if _, err := codecV10.DecodeSend(json.RawMessage(many + `}}`)); err == nil {
		t.Error("a message of more than 64 members decoded")
	}
}

// decodeParams decodes params with the codec's decoder for method (send,
// get, cancel, list) and returns its error.
func decodeParams(codec Codec, method, params string) error {
	raw := json.RawMessage(params)
	var err error
	switch method {
	case "send":
		_, err = codec.DecodeSend(raw)
	case "get":
		_, err = codec.DecodeGetTask(raw)
	case "cancel":
		_, err = codec.DecodeTaskID(raw)
	case "list":
		_, err = codec.DecodeListTasks(raw)
	}
	return err
}

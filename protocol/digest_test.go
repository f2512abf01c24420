package protocol

import (
	"encoding/json"
	"testing"
)

// A message's digest is what it says: the same send carried by either
// version, in any member order and spacing, digests alike; any change of
// what it says digests otherwise; its id does not count.
func TestMessageDigest(t *testing.T) {
	decode := func(c Codec, params string) *Message {
		t.Helper()
		p, err := c.DecodeSend(json.RawMessage(params))
		if err != nil {
			t.Fatalf("decode %s: %v", params, err)
		}
		return &p.Message
	}
	base := decode(codecV10, `{"message":{"messageId":"m1","role":"ROLE_USER","contextId":"c1",
		"parts":[{"text":"hello"},{"data":{"b":[1,2],"a":"x"}},{"raw":"cmF3","filename":"f.bin","mediaType":"application/octet-stream"}],
		"metadata":{"k":{"y":1,"x":2}},"extensions":["urn:e"],"referenceTaskIds":["t0"]}}`)
	want := MessageDigest(base)
	for name, m := range map[string]*Message{
		"members reordered, spaced": decode(codecV10, `{"message":{ "referenceTaskIds":["t0"], "extensions":["urn:e"],
			"metadata":{"k":{"x":2, "y":1}}, "parts":[{"text":"hello"},{"data":{"a":"x","b":[1, 2]}},
			{"mediaType":"application/octet-stream","filename":"f.bin","raw":"cmF3"}], "contextId":"c1", "role":"ROLE_USER", "messageId":"m1"}}`),
		"another id": decode(codecV10, `{"message":{"messageId":"m2","role":"ROLE_USER","contextId":"c1",
			"parts":[{"text":"hello"},{"data":{"b":[1,2],"a":"x"}},{"raw":"cmF3","filename":"f.bin","mediaType":"application/octet-stream"}],
			"metadata":{"k":{"y":1,"x":2}},"extensions":["urn:e"],"referenceTaskIds":["t0"]}}`),
		"over 0.3": decode(codecV03, `{"message":{"kind":"message","messageId":"m1","role":"user","contextId":"c1",
			"parts":[{"kind":"text","text":"hello"},{"kind":"data","data":{"a":"x","b":[1,2]}},
			{"kind":"file","file":{"bytes":"cmF3","name":"f.bin","mimeType":"application/octet-stream"}}],
			"metadata":{"k":{"x":2,"y":1}},"extensions":["urn:e"],"referenceTaskIds":["t0"]}}`),
	} {
		if got := MessageDigest(m); got != want {
			t.Errorf("%s: digest %s, want %s", name, got, want)
		}
	}
	changes := map[string]func(m *Message){
		"text":           func(m *Message) { m.Parts[0].Text = "hello!" },
		"data":           func(m *Message) { m.Parts[1].Data = json.RawMessage(`{"a":"x","b":[2,1]}`) },
		"raw":            func(m *Message) { m.Parts[2].Raw = []byte("raX") },
		"filename":       func(m *Message) { m.Parts[2].Filename = "g.bin" },
		"media type":     func(m *Message) { m.Parts[2].MediaType = "text/plain" },
		"part metadata":  func(m *Message) { m.Parts[0].Metadata = json.RawMessage(`{}`) },
		"a part more":    func(m *Message) { m.Parts = append(m.Parts, Part{Kind: PartText, Text: ""}) },
		"parts split":    func(m *Message) { m.Parts[0].Text = "hel"; m.Parts = append(m.Parts, Part{Kind: PartText, Text: "lo"}) },
		"context":        func(m *Message) { m.ContextID = "c2" },
		"task":           func(m *Message) { m.TaskID = "t1" },
		"role":           func(m *Message) { m.Role = RoleAgent },
		"metadata":       func(m *Message) { m.Metadata = json.RawMessage(`{"k":{"y":1,"x":3}}`) },
		"extensions":     func(m *Message) { m.Extensions = nil },
		"reference":      func(m *Message) { m.ReferenceTaskIDs = []string{"t9"} },
		"text and kind":  func(m *Message) { m.Parts[0].Kind = PartData },
		"file as url":    func(m *Message) { m.Parts[2].Raw, m.Parts[2].URL = nil, "cmF3" },
		"metadata moved": func(m *Message) { m.Metadata, m.Parts[0].Metadata = nil, m.Metadata },
	}
	for name, change := range changes {
		m := *base
		m.Parts = append([]Part(nil), base.Parts...)
		change(&m)
		if MessageDigest(&m) == want {
			t.Errorf("%s changed: the digest is the same", name)
		}
	}
	// Absent and null metadata say the same.
	m := *base
	m.Metadata = nil
	n := *base
	n.Metadata = json.RawMessage(`null`)
	if MessageDigest(&m) != MessageDigest(&n) {
		t.Error("absent and null metadata digest differently")
	}
}

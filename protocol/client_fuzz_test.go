package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// FuzzDecodeStreamResult feeds one stream frame's result to both codecs:
// no input panics; every error is -32006 with a violation naming a field
// under "result"; every event decoded has exactly one member, and
// re-encodes to valid JSON that decodes back to the same event and
// encodes to the same bytes (the encoding is a fixed point after one
// trip, which is what relaying an agent's events relies on).
func FuzzDecodeStreamResult(f *testing.F) {
	for _, c := range []Codec{codecV03, codecV10} {
		for _, ev := range fixtureEvents() {
			f.Add(uint8(c.Version()), c.AppendStreamResult(nil, &ev))
		}
	}
	f.Add(uint8(V10), []byte(`{"artifact_update":{"task_id":"t","artifact":{"artifact_id":"a","parts":[{"data":5}]},"last_chunk":true}}`))
	f.Add(uint8(V10), []byte(`{"task":{"id":"t","status":{"state":3,"timestamp":"0000-01-01T00:30:00-01:00"}}}`))
	f.Add(uint8(V03), []byte(`{"kind":"status-update","taskId":"t","status":{"state":"working","message":{"kind":"message","messageId":"m","role":"agent","parts":[{"text":"\ud800"}]}},"final":true}`))
	f.Fuzz(func(t *testing.T, v uint8, raw []byte) {
		c := codecFor(Version(v%2 + 1))
		ev, err := c.DecodeStreamResult(raw)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeInvalidAgentResponse || len(e.Violations) == 0 {
				t.Fatalf("error %v", err)
			}
			if f := e.Violations[0].Field; f != "result" && !bytes.HasPrefix([]byte(f), []byte("result.")) && !bytes.HasPrefix([]byte(f), []byte("result[")) {
				t.Fatalf("field %q", f)
			}
			if ev != nil {
				t.Fatal("event with error")
			}
			return
		}
		n := 0
		for _, set := range []bool{ev.Task != nil, ev.Message != nil, ev.Status != nil, ev.Artifact != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d members set", n)
		}
		enc := c.AppendStreamResult(nil, ev)
		if !json.Valid(enc) {
			t.Fatalf("invalid re-encoding %s", enc)
		}
		again, err := c.DecodeStreamResult(enc)
		if err != nil {
			t.Fatalf("re-encoding refused: %v\n%s", err, enc)
		}
		if enc2 := c.AppendStreamResult(nil, again); !bytes.Equal(enc, enc2) {
			t.Fatalf("not a fixed point:\n%s\n%s", enc, enc2)
		}
		if !reflect.DeepEqual(again, mustDecode(t, c, enc)) {
			t.Fatal("decoding is not deterministic")
		}
	})
}

func mustDecode(t *testing.T, c Codec, b []byte) *Event {
	ev, err := c.DecodeStreamResult(b)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

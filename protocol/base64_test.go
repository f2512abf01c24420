package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol/protocoltest"
)

func TestDecodeBase64(t *testing.T) {
	for _, tc := range protocoltest.Base64 {
		got, ok := DecodeBase64(tc.In)
		if ok != tc.OK || ok && !bytes.Equal(got, tc.Want) {
			t.Errorf("%s: DecodeBase64(%q) = %v %v, want %v %v", tc.Name, tc.In, got, ok, tc.Want, tc.OK)
		}
	}
	want := []byte{0xfb, 0xff, 0xfe, 'a'}
	if got := string(appendBase64(nil, want)); got != `"+//+YQ=="` {
		t.Errorf("appendBase64 = %s", got)
	}
}

// TestBase64InCallerParts: a caller's file part holds its bytes to the one
// rule in both versions, with the field named when it is refused.
func TestBase64InCallerParts(t *testing.T) {
	for _, tc := range protocoltest.Base64 {
		in, _ := json.Marshal(tc.In)
		for _, c := range []struct {
			codec  Codec
			params string
			field  string
		}{
			{codecV03, paramsV03(`{"kind":"file","file":{"bytes":`+string(in)+`}}`, ""), "message.parts[0].file.bytes"},
			{codecV10, paramsV10(`{"raw":`+string(in)+`}`, ""), "message.parts[0].raw"},
		} {
			p, err := c.codec.DecodeSend(json.RawMessage(c.params))
			if !tc.OK {
				var e *Error
				if !errors.As(err, &e) || e.Code != CodeInvalidParams || len(e.Violations) != 1 ||
					e.Violations[0].Field != c.field || e.Violations[0].Description != "must be base64" {
					t.Errorf("%s, %v: %q gave %v, want -32602 %s must be base64", tc.Name, c.codec.Version(), tc.In, err, c.field)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s, %v: %q refused: %v", tc.Name, c.codec.Version(), tc.In, err)
				continue
			}
			if got := p.Message.Parts[0]; got.Kind != PartFile || !bytes.Equal(got.Raw, tc.Want) || got.Raw == nil {
				t.Errorf("%s, %v: %q decoded to %+v, want bytes %v", tc.Name, c.codec.Version(), tc.In, got, tc.Want)
			}
		}
	}
}

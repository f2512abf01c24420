package httpagent

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/protocol/protocoltest"
)

// TestFileBytesBase64: an agent's file bytes are held to the rule a
// caller's are (protocol.DecodeBase64), case by case, so that one text
// means the same bytes on either side of the gateway.
func TestFileBytesBase64(t *testing.T) {
	for _, tc := range protocoltest.Base64 {
		in, _ := json.Marshal(tc.In)
		ev, _, err := parseEvent([]byte(`{"file":{"bytes":`+string(in)+`}}`), defaultRules)
		if !tc.OK {
			if err == nil || err.Error() != "upstream: file bytes are not base64" {
				t.Errorf("%s: %q gave %+v, %v; want the bytes refused", tc.Name, tc.In, ev, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %q refused: %v", tc.Name, tc.In, err)
			continue
		}
		if len(ev.Parts) != 1 || ev.Parts[0].Kind != protocol.PartFile || !bytes.Equal(ev.Parts[0].Raw, tc.Want) || ev.Parts[0].Raw == nil {
			t.Errorf("%s: %q decoded to %+v, want bytes %v", tc.Name, tc.In, ev, tc.Want)
		}
	}
}

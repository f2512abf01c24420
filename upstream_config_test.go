package caddya2a

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTransportDefaults: the transport config gets compression off and
// the upstream's response header cap (64KiB by default) where it sets
// neither; the transport's own cap counts when only it is set; both set,
// a cap no answer fits under, or a cap with HTTP/3 (which Caddy's
// transport does not pass on) are refused.
func TestTransportDefaults(t *testing.T) {
	for _, tc := range []struct {
		in      string
		cap     int64
		want    string
		wantErr string
	}{
		{`{}`, 0, `{"compression":false,"max_response_header_size":65536}`, ""},
		{`{"protocol":"http"}`, 0, `{"compression":false,"max_response_header_size":65536,"protocol":"http"}`, ""},
		{`{"protocol":"http","compression":true}`, 0, `{"compression":true,"max_response_header_size":65536,"protocol":"http"}`, ""},
		{`{"protocol":"http","compression":false}`, 1 << 20, `{"compression":false,"max_response_header_size":1048576,"protocol":"http"}`, ""},
		{`{"protocol":"http","max_response_header_size":4096}`, 0, `{"compression":false,"max_response_header_size":4096,"protocol":"http"}`, ""},
		{`{"protocol":"http","versions":["h2c"]}`, 2048, `{"compression":false,"max_response_header_size":2048,"protocol":"http","versions":["h2c"]}`, ""},
		{`{"protocol":"http","versions":["3"]}`, 0, `{"compression":false,"protocol":"http","versions":["3"]}`, ""},
		{`{"protocol":"http","max_response_header_size":4096}`, 8192, "", "set both in the upstream block and in its transport"},
		{`{"protocol":"http","max_response_header_size":10}`, 0, "", "transport max_response_header: want a size from 1KiB to 1GiB"},
		{`{"protocol":"http","max_response_header_size":-1}`, 0, "", "transport max_response_header: want a size"},
		{`{"protocol":"http","versions":["3"]}`, 8192, "", "not applied by Caddy's HTTP/3 transport"},
		{`{"protocol":"http","versions":["3"],"max_response_header_size":8192}`, 0, "", "not applied by Caddy's HTTP/3 transport"},
	} {
		u := &Upstream{MaxResponseHeaderSize: tc.cap}
		got, err := u.transportDefaults(json.RawMessage(tc.in))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s (cap %d): err %v, want %q", tc.in, tc.cap, err, tc.wantErr)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("%s (cap %d) = %s %v, want %s", tc.in, tc.cap, got, err, tc.want)
		}
	}
}

// TestMaxResponseHeaderChecked: the JSON config path refuses what the
// Caddyfile refuses.
func TestMaxResponseHeaderChecked(t *testing.T) {
	for _, tc := range []struct {
		n  int64
		ok bool
	}{{0, true}, {1 << 10, true}, {1 << 30, true}, {1<<10 - 1, false}, {1<<30 + 1, false}, {-1, false}} {
		err := (&Upstream{URL: "http://127.0.0.1:9000", MaxResponseHeaderSize: tc.n}).applyDefaults()
		if (err == nil) != tc.ok {
			t.Errorf("max_response_header_size %d: err %v", tc.n, err)
		}
	}
}

package caddya2a

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
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
		{``, 0, `{"compression":false,"max_response_header_size":65536}`, ""}, // no transport configured
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
		{`{"protocol":"fastcgi"}`, 0, "", `transport "fastcgi" is not supported; use transport http`},
		{`{"versions":["h2c"]}`, 0, "", `transport: "protocol" is required`},
	} {
		got, err := transportWithDefaults(json.RawMessage(tc.in), tc.cap)
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

// transportWithDefaults is the transport config Provision loads for raw
// and an upstream cap, or the error Validate gives for them.
func transportWithDefaults(raw json.RawMessage, capSize int64) (json.RawMessage, error) {
	if len(raw) == 0 {
		raw = nil
	}
	tc, err := readTransport(raw)
	if err != nil {
		return nil, err
	}
	if err := tc.check(capSize, caddy.NewReplacer()); err != nil {
		return nil, err
	}
	return tc.withDefaults(capSize), nil
}

// TestMaxResponseHeaderChecked: the bounds of max_response_header.
func TestMaxResponseHeaderChecked(t *testing.T) {
	for _, tc := range []struct {
		n  int64
		ok bool
	}{{0, true}, {1 << 10, true}, {1 << 30, true}, {1<<10 - 1, false}, {1<<30 + 1, false}, {-1, false}} {
		u := &HTTPUpstream{URL: "http://127.0.0.1:9000", MaxResponseHeaderSize: tc.n}
		if err := u.fill(caddy.NewReplacer()); err != nil {
			t.Fatal(err)
		}
		err := u.check(caddy.NewReplacer())
		if (err == nil) != tc.ok {
			t.Errorf("max_response_header_size %d: err %v", tc.n, err)
		}
	}
}

// TestCheckTransport: what a run cannot honour is refused naming the
// setting; global placeholders and everything else pass.
func TestCheckTransport(t *testing.T) {
	tests := []struct {
		raw, want string // want "": accepted
	}{
		{`{"protocol":"http"}`, ""},
		{`{"protocol":"http","tls":{"server_name":"{env.SNI}"}}`, ""},
		{`{"protocol":"http","tls":{"server_name":"agent.internal"}}`, ""},
		{`{"protocol":"http","network_proxy":{"from":"url","url":"http://{env.PROXY_HOST}:3128"}}`, ""},
		{`{"protocol":"http","network_proxy":{"from":"none"}}`, ""},
		{`{"protocol":"http","resolver":{"addresses":["127.0.0.1"]}}`, ""},
		{`{"protocol":"http","proxy_protocol":"v1"}`, "transport proxy_protocol: not supported"},
		{`{"protocol":"http","proxy_protocol":"v2"}`, "transport proxy_protocol: not supported"},
		{`{"protocol":"http","tls":{"server_name":"{http.request.host}"}}`,
			"transport tls_server_name: unrecognized placeholder {http.request.host}"},
		{`{"protocol":"http","network_proxy":{"from":"url","url":"http://{http.request.header.X}:1"}}`,
			"transport network_proxy url: unrecognized placeholder {http.request.header.X}"},
		{`{"protocol":"http","forward_proxy_url":"http://{http.vars.p}:1"}`,
			"transport forward_proxy_url: unrecognized placeholder {http.vars.p}"},
		{`{"protocol":"http","resolver":{}}`, "transport resolver: at least one address is required"},
		{`{"protocol":"http","resolver":{"addresses":[]}}`, "transport resolver: at least one address is required"},
	}
	for _, tt := range tests {
		err := checkTransportSettings(json.RawMessage(tt.raw), caddy.NewReplacer())
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.raw, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want one containing %q", tt.raw, err, tt.want)
		}
	}
}

// TestTransportContext: an upstream request's context holds the mount's
// replacer and a vars table of its own, in place of any the run's context
// had, and passes everything else through.
func TestTransportContext(t *testing.T) {
	type key struct{}
	repl := caddy.NewReplacer()
	client := caddy.NewReplacer()
	clientVars := map[string]any{"client": true}
	parent := context.WithValue(context.Background(), key{}, "kept")
	parent = context.WithValue(parent, caddy.ReplacerCtxKey, client)
	parent = context.WithValue(parent, caddyhttp.VarsCtxKey, clientVars)

	hook := transportContext(repl)
	a, b := hook(parent), hook(parent)
	if got, _ := a.Value(caddy.ReplacerCtxKey).(*caddy.Replacer); got != repl {
		t.Errorf("replacer %p, want the mount's %p", got, repl)
	}
	if a.Value(key{}) != "kept" {
		t.Errorf("other value: %v", a.Value(key{}))
	}
	caddyhttp.SetVar(a, "reverse_proxy.proxy", "x")
	if len(clientVars) != 1 || caddyhttp.GetVar(b, "reverse_proxy.proxy") != nil || caddyhttp.GetVar(a, "reverse_proxy.proxy") != "x" {
		t.Errorf("vars are shared: client %v, other request %v", clientVars, caddyhttp.GetVar(b, "reverse_proxy.proxy"))
	}
	ctx, cancel := context.WithCancel(parent)
	c := hook(ctx)
	cancel()
	if c.Err() == nil {
		t.Error("the run's cancellation does not reach the request")
	}
}

// TestHeaderUpEmptyEnvWarns: a header_up value whose {env.*} resolves to
// empty is logged at load, naming the header and the variable, and is
// still sent (empty); a set variable and a literal are not.
func TestHeaderUpEmptyEnvWarns(t *testing.T) {
	t.Setenv("A2A_TEST_SET", "k")
	t.Setenv("A2A_TEST_EMPTY", "")
	u := &HTTPUpstream{URL: "http://127.0.0.1:9", HeaderUp: http.Header{
		"Authorization": {"Bearer {env.A2A_TEST_UNSET_VAR}"},
		"X-Empty":       {"{env.A2A_TEST_EMPTY}"},
		"X-Set":         {"{env.A2A_TEST_SET}"},
		"X-Literal":     {"v"},
	}}
	globals := caddy.NewReplacer()
	if err := u.fill(globals); err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.InfoLevel)
	u.warnEmptyEnv(zap.New(core), globals)
	got := map[string]string{}
	for _, e := range logs.All() {
		if e.Level != zap.WarnLevel || !strings.Contains(e.Message, "header_up") {
			t.Errorf("unexpected entry %v %q", e.Level, e.Message)
		}
		f := e.ContextMap()
		got[f["header"].(string)] = f["variable"].(string)
	}
	want := map[string]string{"Authorization": "A2A_TEST_UNSET_VAR", "X-Empty": "A2A_TEST_EMPTY"}
	if !maps.Equal(got, want) {
		t.Errorf("warned about %v, want %v", got, want)
	}
	if v := u.headers.Get("Authorization"); v != "Bearer " {
		t.Errorf("the header is still sent as resolved: %q", v)
	}
}

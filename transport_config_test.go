package caddya2a

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

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
		err := checkTransport(json.RawMessage(tt.raw), caddy.NewReplacer())
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

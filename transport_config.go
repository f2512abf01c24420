package caddya2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// Caddy's reverse_proxy HTTP transport is made for requests that came
// through Caddy's server, and reads from the context of the request it
// sends (v2.11.9, httptransport.go and the network proxy module):
//
//   - caddy.ReplacerCtxKey: the replacer, asserted without a check when
//     tls_server_name holds a placeholder (in the dial goroutine of
//     net/http, or of quic-go with `versions 3`), and checked by
//     `network_proxy url` (and the older forward_proxy_url) with a
//     placeholder, which fails the request without one;
//   - caddyhttp.VarsCtxKey: the vars table; it reads
//     reverse_proxy.proxy_protocol_info (the client's address, set by
//     reverse_proxy; without it every dial fails when proxy_protocol is
//     set), reverse_proxy.tls_h1_only (in its own TLS dialer; absent:
//     HTTP/2 may be negotiated) and reverse_proxy.proxy (only with a dial
//     info), and writes reverse_proxy.proxy when a network proxy is used;
//   - reverse_proxy's dial info (an unexported key): absent, the address
//     of the request's URL is dialed, which is the agent's.
//
// A run's context has none of them: it is not a request's (a run
// outlives the request that started it), so transportContext gives each
// upstream request a replacer of the global placeholders and a vars table
// of its own, and checkTransport refuses at provision what still cannot
// work.

// transportCtx is a run's context with what Caddy's transport reads: one
// value for both keys keeps it to one allocation beside the table.
type transportCtx struct {
	context.Context
	repl *caddy.Replacer
	vars map[string]any
}

// Value answers the replacer and the vars table, and asks the run's
// context for anything else.
func (c *transportCtx) Value(key any) any {
	switch key {
	case caddy.ReplacerCtxKey:
		return c.repl
	case caddyhttp.VarsCtxKey:
		return c.vars
	}
	return c.Context.Value(key)
}

// transportContext returns the httpagent.Config.RequestContext hook:
// every request to the agent gets repl (global placeholders only; it is
// only read, so runs share it) and an empty vars table of its own, which
// the transport may write to. Both replace what the context may already
// hold: a message reply runs under the client's request, whose
// placeholders must not reach the transport (they are refused at
// provision, so both kinds of run resolve alike) and whose vars table
// the transport must not write to from its own goroutines.
func transportContext(repl *caddy.Replacer) func(context.Context) context.Context {
	return func(ctx context.Context) context.Context {
		return &transportCtx{Context: ctx, repl: repl, vars: make(map[string]any)}
	}
}

// transportSettings are the settings of Caddy's HTTP transport that a run
// cannot always honour (the JSON field names of
// http.reverse_proxy.transport.http).
type transportSettings struct {
	ProxyProtocol   string          `json:"proxy_protocol"`
	ForwardProxyURL string          `json:"forward_proxy_url"`
	NetworkProxy    json.RawMessage `json:"network_proxy"`
	TLS             *struct {
		ServerName string `json:"server_name"`
	} `json:"tls"`
	Resolver *struct {
		Addresses []string `json:"addresses"`
	} `json:"resolver"`
}

// checkTransport refuses the transport settings a run cannot honour,
// naming the setting and why, before the transport is loaded:
//
//   - proxy_protocol: the PROXY header tells the agent which client a
//     connection serves, and a run has no client connection (it outlives
//     the request that started it, and connections to the agent are
//     pooled across runs of different callers);
//   - a placeholder other than a global one in what the transport
//     resolves per connection or request (tls_server_name, network_proxy
//     url, forward_proxy_url): a request placeholder has no value in a
//     run and would resolve to "";
//   - a resolver without addresses, which makes every name lookup panic
//     (in the resolver's goroutine, taking the process down).
func checkTransport(raw json.RawMessage, globals *caddy.Replacer) error {
	var t transportSettings
	if err := json.Unmarshal(raw, &t); err != nil {
		return fmt.Errorf("transport: %w", err)
	}
	if t.ProxyProtocol != "" {
		return errors.New("transport proxy_protocol: not supported: a PROXY header carries the address of the client " +
			"a request came from, and an agent run has none (it outlives the request that started it, and its " +
			"connections to the agent are shared by runs of different callers)")
	}
	if t.Resolver != nil && len(t.Resolver.Addresses) == 0 {
		return errors.New("transport resolver: at least one address is required")
	}
	perRequest := []struct{ name, value string }{{"forward_proxy_url", t.ForwardProxyURL}}
	if t.TLS != nil {
		perRequest = append(perRequest, struct{ name, value string }{"tls_server_name", t.TLS.ServerName})
	}
	if len(t.NetworkProxy) > 0 {
		var np struct {
			From string `json:"from"`
			URL  string `json:"url"`
		}
		if err := json.Unmarshal(t.NetworkProxy, &np); err != nil {
			return fmt.Errorf("transport network_proxy: %w", err)
		}
		if np.From == "url" {
			perRequest = append(perRequest, struct{ name, value string }{"network_proxy url", np.URL})
		}
	}
	for _, s := range perRequest {
		if !strings.Contains(s.value, "{") {
			continue
		}
		if _, err := globals.ReplaceOrErr(s.value, false, true); err != nil {
			return fmt.Errorf("transport %s: %w (it is resolved for each request to the agent, where only global "+
				"placeholders such as {env.NAME} have a value: a run is not a client request)", s.name, err)
		}
	}
	return nil
}

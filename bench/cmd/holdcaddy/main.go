// Command holdcaddy is a stock Caddy (the standard modules, as ./cmd/caddy
// has them) plus bench_hold, the least a Caddy handler can do to hold a
// stream open. The idle-stream step of bench/run.sh measures it next to
// the a2a module: whatever an idle stream costs here (the connection's
// goroutine and buffers in net/http, Caddy's request setup) any handler
// holding a request open pays, so it is the floor the module's cost per
// stream is taken from. Caddy's reverse_proxy is no floor: it holds a copy
// buffer and a goroutine more per stream.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	// The standard Caddy modules, as a stock binary has them.
	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

func main() {
	caddycmd.Main()
}

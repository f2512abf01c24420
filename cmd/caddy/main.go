// Command caddy is a Caddy binary with the a2a handler compiled in, so that
// `go run ./cmd/caddy run --config Caddyfile.example` works without xcaddy.
// Its first build (an empty build cache, the modules downloaded) peaked at
// about 1.25 GiB of memory and took 4 to 5.5 minutes on 2 cores, against
// 1.05 GiB and 3.5 to 5 minutes for stock Caddy (bench/build.sh,
// BENCHMARKS.md).
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	// The standard Caddy modules, as a stock binary has them.
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	// The a2a handler (http.handlers.a2a and the a2a directive).
	_ "github.com/caddy-a2a/caddy-a2a"

	// Rate limits (http.handlers.rate_limit and the rate_limit directive):
	// the documentation's gated endpoints limit their RPC with it, so every
	// complete example runs on this binary as written.
	_ "github.com/mholt/caddy-ratelimit"
)

func main() {
	caddycmd.Main()
}

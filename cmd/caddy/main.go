// Command caddy is a Caddy binary with the a2a handler compiled in, so that
// `go run ./cmd/caddy run --config Caddyfile.example` works without xcaddy.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	// The standard Caddy modules, as a stock binary has them.
	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

func main() {
	caddycmd.Main()
}

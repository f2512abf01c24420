package main

import (
	"io"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	caddy.RegisterModule(Hold{})
	httpcaddyfile.RegisterHandlerDirective("bench_hold", parseHold)
	// A terminal handler: ordered where respond is, so that a site of
	// just "bench_hold" needs no order option or route block.
	httpcaddyfile.RegisterDirectiveOrder("bench_hold", httpcaddyfile.Before, "respond")
}

// holdComment is the whole body a hold stream sends before it is held; the
// load generator checks it (bench/cmd/loadgen, kind hold).
const holdComment = ": hold\n\n"

// Hold is the http.handlers.bench_hold handler: it answers every request
// with a text/event-stream of one SSE comment, flushed, then holds the
// response until the client goes. It keeps nothing of its own per stream
// (no timer, no buffer, no goroutine), so what a held stream costs with it
// is what Caddy and net/http cost, the floor of any handler holding one.
type Hold struct{}

// CaddyModule returns the module's information.
func (Hold) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.handlers.bench_hold", New: func() caddy.Module { return new(Hold) }}
}

// ServeHTTP reads the request body to the end and closes it, as a handler
// that takes a POST must (and as the a2a module does, so that HTTP/2 drops
// the stream's receive buffer), then writes and flushes the comment and
// waits for the client to go.
func (Hold) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	_, _ = io.Copy(io.Discard, r.Body)
	_ = r.Body.Close()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	if _, err := io.WriteString(w, holdComment); err != nil {
		return nil // the client is gone
	}
	if err := http.NewResponseController(w).Flush(); err != nil {
		return nil
	}
	<-r.Context().Done()
	return nil
}

// parseHold reads the bench_hold directive, which takes no arguments.
func parseHold(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	h.Next() // the directive's name
	if h.NextArg() || h.NextBlock(0) {
		return nil, h.ArgErr()
	}
	return Hold{}, nil
}

// Interface guards.
var _ caddyhttp.MiddlewareHandler = Hold{}

// Command a2aagent is the A2A 1.0 JSON-RPC agent of the gateway benchmark:
// the module's `upstream a2a` kind and Caddy's reverse_proxy both front it,
// so the difference between them is what the gateway costs. It answers
// from canned bytes (no task store, no SDK), so that it is never the
// bottleneck of either.
//
// One process serves several agents, each under its own base path (its
// card at <base>/.well-known/agent-card.json, its JSON-RPC endpoint at
// <base>/rpc):
//
//	/echo          streams (capabilities.streaming true). SendMessage answers
//	               a completed Task whose one artifact is the message's text;
//	               SendStreamingMessage the same as SSE frames: the Task
//	               (submitted), one artifact update, the completed status.
//	/echo-blocking the same agent with a card that says it does not stream.
//	/chunks/<n>/<pause>
//	               streams: SendStreamingMessage answers the Task
//	               (submitted), n artifact updates of one text part each, a
//	               pause (a Go duration) apart, each text the unix ns time
//	               taken just before it is written, then the completed
//	               status. SendMessage answers the completed Task with the
//	               n chunks as one artifact.
//
// Every answer is A2A 1.0: tasks with id, contextId (the message's, else
// one of the agent's) and a TASK_STATE_* status, artifacts with an
// artifactId, events with taskId and contextId, the JSON-RPC id of the
// request. A request without A2A-Version: 1.0, a method other than the two
// sends, or a message without messageId, ROLE_USER role or parts is
// answered with a JSON-RPC error.
package main

import (
	"flag"
	"log"
	"net"
	"net/http"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("a2a agent listening on %s", ln.Addr())
	log.Fatal((&http.Server{Handler: newMux(), ReadHeaderTimeout: 10 * time.Second}).Serve(ln))
}

// newMux routes the agents' cards and endpoints.
func newMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /echo/.well-known/agent-card.json", serveCard(true))
	mux.HandleFunc("GET /echo-blocking/.well-known/agent-card.json", serveCard(false))
	mux.HandleFunc("GET /chunks/{n}/{pause}/.well-known/agent-card.json", serveCard(true))
	mux.HandleFunc("POST /echo/rpc", serveRPC(echoPlan))
	mux.HandleFunc("POST /echo-blocking/rpc", serveRPC(echoPlan))
	mux.HandleFunc("POST /chunks/{n}/{pause}/rpc", serveRPC(chunksPlan))
	return mux
}

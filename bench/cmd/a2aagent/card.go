package main

import (
	"net/http"
	"strconv"
	"strings"
)

// cardSuffix is where each agent's card is under its base path.
const cardSuffix = "/.well-known/agent-card.json"

// serveCard answers the card of the agent whose base path the request's
// path starts with: its one interface is that base's /rpc on the host the
// request named, JSON-RPC 1.0.
func serveCard(streams bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		base := strings.TrimSuffix(r.URL.Path, cardSuffix)
		b := appendCard(make([]byte, 0, 768), "http://"+r.Host+base+"/rpc", streams)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		_, _ = w.Write(b)
	}
}

// appendCard appends a 1.0 agent card with rpcURL as its one interface.
func appendCard(b []byte, rpcURL string, streams bool) []byte {
	b = append(b, `{"name":"Bench agent","description":"Canned A2A 1.0 agent of the caddy-a2a gateway benchmark",`...)
	b = append(b, `"version":"1.0.0","supportedInterfaces":[{"url":`...)
	b = appendString(b, rpcURL)
	b = append(b, `,"protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"streaming":`...)
	b = strconv.AppendBool(b, streams)
	b = append(b, `},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],`...)
	b = append(b, `"skills":[{"id":"echo","name":"Echo","description":"Answers the text it was sent","tags":["echo","bench"]}]}`...)
	return b
}

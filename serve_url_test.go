package caddya2a

import (
	"crypto/tls"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func TestRPCURL(t *testing.T) {
	tests := []struct {
		name      string
		configURL string
		rpcPath   string
		target    string // request URL as the client sent it
		stripped  string // r.URL.Path after a handle_path strip ("" = none)
		tls       bool
		trusted   bool
		headers   map[string]string
		want      string
		wantErr   bool
	}{
		{name: "plain http", target: "http://agents.example:8080/.well-known/agent-card.json", want: "http://agents.example:8080/a2a"},
		{name: "tls", target: "https://agents.example/.well-known/agent-card.json", tls: true, want: "https://agents.example/a2a"},
		{name: "root rpc path", rpcPath: "/", target: "http://h/.well-known/agent-card.json", want: "http://h/"},
		{name: "configured url wins", configURL: "https://api.example.com/a2a", target: "http://internal:8080/.well-known/agent-card.json", want: "https://api.example.com/a2a"},
		{
			name: "forwarded headers from an untrusted peer are ignored", target: "http://h/.well-known/agent-card.json",
			headers: map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example"},
			want:    "http://h/a2a",
		},
		{
			name: "forwarded headers from a trusted proxy", target: "http://h/.well-known/agent-card.json", trusted: true,
			headers: map[string]string{"X-Forwarded-Proto": "https, http", "X-Forwarded-Host": "public.example, inner"},
			want:    "https://public.example/a2a",
		},
		{
			name: "trusted proxy with a bogus proto and host", target: "http://h/.well-known/agent-card.json", trusted: true,
			headers: map[string]string{"X-Forwarded-Proto": "gopher", "X-Forwarded-Host": "a/b@c"},
			want:    "http://h/a2a",
		},
		{name: "handle_path prefix", target: "http://h/agent/.well-known/agent-card.json", stripped: "/.well-known/agent-card.json", want: "http://h/agent/a2a"},
		{name: "nested prefix and root rpc", rpcPath: "/", target: "http://h/x/y/.well-known/agent-card.json", stripped: "/.well-known/agent-card.json", want: "http://h/x/y/"},
		{name: "rewrite is not a strip", target: "http://h/card.json", stripped: "/.well-known/agent-card.json", want: "http://h/a2a"},
		{name: "ipv6 host", target: "http://[::1]:8080/.well-known/agent-card.json", want: "http://[::1]:8080/a2a"},
		{name: "empty host", target: "http:///.well-known/agent-card.json", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &Handler{RPCPath: tt.rpcPath, publicURL: tt.configURL}
			if h.RPCPath == "" {
				h.RPCPath = DefaultRPCPath
			}
			r := httptest.NewRequest("GET", tt.target, nil)
			if tt.target == "http:///.well-known/agent-card.json" {
				r.Host = ""
			}
			if tt.tls {
				r.TLS = &tls.ConnectionState{}
			}
			for k, v := range tt.headers {
				r.Header.Set(k, v)
			}
			r = caddyhttp.PrepareRequest(r, caddy.NewReplacer(), httptest.NewRecorder(), nil)
			caddyhttp.SetVar(r.Context(), caddyhttp.TrustedProxyVarKey, tt.trusted)
			if tt.stripped != "" {
				r.URL.Path = tt.stripped
			}
			got, err := h.rpcURL(r)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("rpcURL = %q, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("rpcURL = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCheckURLs(t *testing.T) {
	tests := []struct {
		in         string
		upstreamOK bool
		publicOK   bool
	}{
		{in: "http://127.0.0.1:9000/agent", upstreamOK: true, publicOK: true},
		{in: "https://agent.example/run?k=v", upstreamOK: true, publicOK: false},
		{in: "https://agent.example/run#frag", upstreamOK: false, publicOK: false},
		{in: "localhost:9000", upstreamOK: false, publicOK: false},
		{in: "/a2a", upstreamOK: false, publicOK: false},
		{in: "ftp://agent.example/", upstreamOK: false, publicOK: false},
		{in: "http://user:pw@agent.example/", upstreamOK: false, publicOK: false},
		{in: "http:///nohost", upstreamOK: false, publicOK: false},
	}
	for _, tt := range tests {
		if err := checkUpstreamURL(tt.in); (err == nil) != tt.upstreamOK {
			t.Errorf("checkUpstreamURL(%q) = %v, want ok=%v", tt.in, err, tt.upstreamOK)
		}
		if err := checkPublicURL(tt.in); (err == nil) != tt.publicOK {
			t.Errorf("checkPublicURL(%q) = %v, want ok=%v", tt.in, err, tt.publicOK)
		}
	}
}

package integration

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// sniAgent is a TLS agent answering the server name the client sent.
func sniAgent(t *testing.T) *agent {
	return serveAgent(t, httptest.NewTLSServer, func(w http.ResponseWriter, r *http.Request, _ agentCall) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "sni=%s", r.TLS.ServerName)
	})
}

// TestTransportServerNamePlaceholder: a global placeholder in
// tls_server_name is resolved by Caddy's transport on each connection,
// which reads a replacer from the request's context. A run's context is
// not a request's: without one given to it, the dial goroutine panicked
// and took the process down. Runs of both sends and a message reply
// reach the agent with the resolved name.
func TestTransportServerNamePlaceholder(t *testing.T) {
	a := sniAgent(t)
	t.Setenv("A2A_TEST_SNI", "agent.internal")
	load(t, `
http://:9080 {
	a2a {
		upstream {{.Agent}} {
			transport http {
				tls_insecure_skip_verify
				tls_server_name {env.A2A_TEST_SNI}
			}
		}`+skillBlock+`
	}
	a2a {
		upstream {{.Agent}} {
			transport http {
				tls_insecure_skip_verify
				tls_server_name {env.A2A_TEST_SNI}
			}
		}
		rpc_path /reply
		card_path /reply/.well-known/agent-card.json
		reply message`+skillBlock+`
	}
}
`, map[string]any{"Agent": a.URL()})

	if task := send10(t, base+"/a2a", msg10("hi", "", "")); task.Status.State != "TASK_STATE_COMPLETED" ||
		task.text() != "sni=agent.internal" {
		t.Errorf("SendMessage: %s %q", task.Status.State, task.text())
	}
	s := openStream(t, base+"/a2a", "", "message/stream", map[string]any{"message": msg03("hi", "")})
	if rest, _ := readUntil(t, s, "status:completed(final)"); !contains(rest, "artifact:sni=agent.internal") {
		t.Errorf("message/stream: %q", rest)
	}
	var r struct {
		Message *wireMessage `json:"message"`
	}
	call(t, base+"/reply", "1.0", "SendMessage", map[string]any{"message": msg10("hi", "", "")}).ok(t, &r)
	if r.Message == nil || len(r.Message.Parts) != 1 || r.Message.Parts[0].Text != "sni=agent.internal" {
		t.Errorf("message reply: %+v", r.Message)
	}
}

// TestTransportHTTP3ServerNamePlaceholder: HTTP/3 to the agent with a
// placeholder in tls_server_name reads the replacer in quic-go's dial
// goroutine (a panic there, too, ended the process). Nothing answers
// here, so the run fails within its timeout, and Caddy keeps serving.
func TestTransportHTTP3ServerNamePlaceholder(t *testing.T) {
	t.Setenv("A2A_TEST_SNI", "agent.internal")
	l, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.LocalAddr().String()
	l.Close()
	load(t, `
http://:9080 {
	a2a {
		upstream https://`+addr+`/agent {
			timeout 1s
			transport http {
				versions 3
				tls_insecure_skip_verify
				tls_server_name {env.A2A_TEST_SNI}
			}
		}`+skillBlock+`
	}
}
`, nil)
	if task := send10(t, base+"/a2a", msg10("hi", "", "")); task.Status.State != "TASK_STATE_FAILED" {
		t.Errorf("run to a silent HTTP/3 agent: %s", task.Status.State)
	}
	if resp, _ := get(t, "GET", base+"/.well-known/agent-card.json"); resp.StatusCode != 200 {
		t.Errorf("card after the run: %d", resp.StatusCode)
	}
}

// TestTransportNetworkProxyPlaceholder: network_proxy url with a global
// placeholder is resolved per request from the request context's
// replacer; without one every run failed ("failed to obtain replacer").
func TestTransportNetworkProxyPlaceholder(t *testing.T) {
	a := textAgent(t)
	proxied := make(chan string, 4)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied <- r.URL.String()
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "via proxy")
	}))
	t.Cleanup(proxy.Close)
	t.Setenv("A2A_TEST_PROXY", proxy.URL)
	load(t, `
http://:9080 {
	a2a {
		upstream {{.Agent}} {
			transport http {
				network_proxy url {env.A2A_TEST_PROXY}
			}
		}`+skillBlock+`
	}
}
`, map[string]any{"Agent": a.URL()})
	if task := send10(t, base+"/a2a", msg10("hi", "", "")); task.text() != "via proxy" {
		t.Errorf("run through the proxy: %s %q", task.Status.State, task.text())
	}
	select {
	case u := <-proxied:
		if u != a.URL() {
			t.Errorf("proxy asked for %q, want %q", u, a.URL())
		}
	default:
		t.Error("the proxy was not asked")
	}
}

// TestTransportRefusals: transport settings a run cannot honour are
// refused at load, naming the setting and why, instead of failing every
// run or taking the process down; the running config is left alone.
func TestTransportRefusals(t *testing.T) {
	a := textAgent(t)
	load(t, minimal(), map[string]any{"Agent": a.URL()})
	mount := func(upstream, transport string) string {
		return "http://:9080 {\n\ta2a {\n\t\tupstream " + upstream + " {\n\t\t\ttransport http {\n\t\t\t\t" +
			transport + "\n\t\t\t}\n\t\t}" + skillBlock + "\n\t}\n}\n"
	}
	tls := strings.Replace(a.URL(), "http://", "https://", 1)
	tests := []struct {
		name, cfg, want string
	}{
		{
			name: "proxy_protocol",
			cfg:  mount(a.URL(), "proxy_protocol v2"),
			want: "transport proxy_protocol: not supported: a PROXY header carries the address of the client a request came from",
		},
		{
			name: "request placeholder in tls_server_name",
			cfg:  mount(tls, "tls_server_name {http.request.host}"),
			want: "transport tls_server_name: unrecognized placeholder {http.request.host}",
		},
		{
			name: "request placeholder in network_proxy",
			cfg:  mount(a.URL(), "network_proxy url {http.request.header.X-Proxy}"),
			want: "transport network_proxy url: unrecognized placeholder {http.request.header.X-Proxy}",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := loadError(t, tt.cfg); !strings.Contains(got, tt.want) {
				t.Errorf("load error %q does not contain %q", got, tt.want)
			}
		})
	}

	// Settings the Caddyfile cannot write: a resolver without addresses
	// made every name lookup of a run panic in the resolver's goroutine.
	json := func(transport string) string {
		return fmt.Sprintf(`{
	"admin": {"listen": "localhost:%d", "config": {"persist": false}},
	"apps": {"http": {"servers": {"srv0": {
		"listen": [":9080"],
		"automatic_https": {"disable": true},
		"routes": [{"handle": [{
			"handler": "a2a",
			"upstream": {"url": "http://agent.invalid:9/agent", "transport": {"protocol": "http", %s}},
			"name": "N", "description": "D",
			"skills": [{"id": "s", "name": "S", "description": "S.", "tags": ["t"]}]
		}]}]
	}}}}
}`, adminPort, transport)
	}
	for _, tt := range []struct{ name, transport, want string }{
		{"resolver without addresses", `"resolver": {}`, "transport resolver: at least one address is required"},
		{"request placeholder in forward_proxy_url", `"forward_proxy_url": "http://{http.request.host}:3128"`,
			"transport forward_proxy_url: unrecognized placeholder {http.request.host}"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := loadErrorAs(t, "application/json", json(tt.transport)); !strings.Contains(got, tt.want) {
				t.Errorf("load error %q does not contain %q", got, tt.want)
			}
		})
	}

	if task := send10(t, base+"/a2a", msg10("still here", "", "")); task.text() != "Hello, still here" {
		t.Errorf("after failed loads: %q", task.text())
	}
}

// TestHeaderUpRequestPlaceholders: a header_up value with a request
// placeholder is resolved with the request that starts the run, per
// caller; the caller's own Authorization never reaches the agent.
func TestHeaderUpRequestPlaceholders(t *testing.T) {
	a := textAgent(t)
	load(t, `http://:9080 {
	a2a {
		upstream {{.Agent}} {
			header_up X-Who "caller {http.request.header.X-Caller}"
			header_up X-Static fixed
		}`+skillBlock+`
	}
}
`, map[string]any{"Agent": a.URL()})
	for _, who := range []string{"ann", "ben"} {
		send10(t, base+"/a2a", msg10("hi", "", ""), withHeader("X-Caller", who), withHeader("Authorization", "Bearer s3cret"))
		c := a.next(t)
		if got := c.Header.Get("X-Who"); got != "caller "+who {
			t.Fatalf("X-Who %q, want %q", got, "caller "+who)
		}
		if c.Header.Get("X-Static") != "fixed" || c.Header.Get("Authorization") != "" {
			t.Fatalf("headers %v", c.Header)
		}
	}
}

package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"
)

// peerCardView is what a client reads from a card to pick an endpoint.
type peerCardView struct {
	// URL, PreferredTransport and ProtocolVersion are the 0.3 top-level
	// fields ("" when absent).
	URL                string `json:"url"`
	PreferredTransport string `json:"preferredTransport"`
	ProtocolVersion    string `json:"protocolVersion"`
	// Interfaces renders 1.0 supportedInterfaces as "version binding url".
	Interfaces []string
	Streaming  bool
}

func fetchPeerCard(t *testing.T, base, version string) peerCardView {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/.well-known/agent-card.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("card GET: status %d", resp.StatusCode)
	}
	var raw struct {
		peerCardView
		SupportedInterfaces []struct {
			URL             string `json:"url"`
			ProtocolBinding string `json:"protocolBinding"`
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"supportedInterfaces"`
		Capabilities struct {
			Streaming bool `json:"streaming"`
		} `json:"capabilities"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	v := raw.peerCardView
	for _, i := range raw.SupportedInterfaces {
		v.Interfaces = append(v.Interfaces, fmt.Sprintf("%s %s %s", i.ProtocolVersion, i.ProtocolBinding, i.URL))
	}
	v.Streaming = raw.Capabilities.Streaming
	return v
}

// TestPeerCards pins each agent's card as a client gets it without an
// A2A-Version header (a2a-go v2 and v0.3 clients) and with 1.0 (the JS
// client): the a2a-go hybrid serves one union card; the JS hybrid picks the
// card's shape by the header; the JS 1.0-only agent has no 0.3 fields.
func TestPeerCards(t *testing.T) {
	cases := []struct {
		name  string
		start func(t *testing.T) *peer
		// want renders the expected card from the peer's endpoints.
		want func(p *peer, version string) peerCardView
	}{
		{"a2a-go-v2", func(t *testing.T) *peer { return startV2Agent(t, localListener(t)) }, func(p *peer, _ string) peerCardView {
			return peerCardView{Interfaces: []string{"1.0 JSONRPC " + p.RPC}, Streaming: true}
		}},
		{"a2a-go-v2-hybrid", func(t *testing.T) *peer { return startV2HybridAgent(t, localListener(t)) }, func(p *peer, _ string) peerCardView {
			return peerCardView{URL: p.RPC03, PreferredTransport: "JSONRPC", ProtocolVersion: "0.3",
				Interfaces: []string{"1.0 JSONRPC " + p.RPC, "0.3 JSONRPC " + p.RPC03}, Streaming: true}
		}},
		{"a2a-go-v0.3", func(t *testing.T) *peer { return startV03Agent(t, localListener(t)) }, func(p *peer, _ string) peerCardView {
			return peerCardView{URL: p.RPC, PreferredTransport: "JSONRPC", ProtocolVersion: "0.3.0", Streaming: true}
		}},
		{"a2a-js", func(t *testing.T) *peer { return startJSAgent(t, 0) }, func(p *peer, _ string) peerCardView {
			return peerCardView{Interfaces: []string{"1.0 JSONRPC " + p.RPC}, Streaming: true}
		}},
		{"a2a-js-hybrid", func(t *testing.T) *peer { return startJSHybridAgent(t, 0) }, func(p *peer, version string) peerCardView {
			v := peerCardView{Interfaces: []string{"1.0 JSONRPC " + p.RPC, "0.3 JSONRPC " + p.RPC03}, Streaming: true}
			if version == "" {
				v.URL, v.PreferredTransport, v.ProtocolVersion = p.RPC03, "JSONRPC", "0.3"
			}
			return v
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.start(t)
			for _, version := range []string{"", "1.0"} {
				got, want := fetchPeerCard(t, p.URL, version), c.want(p, version)
				if got.URL != want.URL || got.PreferredTransport != want.PreferredTransport || got.ProtocolVersion != want.ProtocolVersion ||
					!slices.Equal(got.Interfaces, want.Interfaces) || got.Streaming != want.Streaming {
					t.Errorf("card with A2A-Version %q:\n got %+v\nwant %+v", version, got, want)
				}
			}
			// The card GETs are recorded like any call.
			calls := p.Calls()
			if len(calls) != 2 || calls[0].HTTPMethod != http.MethodGet || calls[0].Path != "/.well-known/agent-card.json" ||
				calls[0].A2AVersion != "" || calls[1].A2AVersion != "1.0" || calls[0].Method != "" {
				t.Errorf("recorded %+v, want the two card GETs", calls)
			}
		})
	}
}

package interop

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// cardDoc is the subset of the card (both shapes) the clients depend on.
type cardDoc struct {
	Name                string `json:"name"`
	ProtocolVersion     string `json:"protocolVersion"`
	URL                 string `json:"url"`
	PreferredTransport  string `json:"preferredTransport"`
	SupportedInterfaces []struct {
		URL             string `json:"url"`
		ProtocolBinding string `json:"protocolBinding"`
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"supportedInterfaces"`
	Capabilities struct {
		Streaming bool `json:"streaming"`
	} `json:"capabilities"`
	Skills []struct {
		ID          string   `json:"id"`
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Tags        []string `json:"tags"`
	} `json:"skills"`
}

func (c cardDoc) interfaces() []string {
	var out []string
	for _, i := range c.SupportedInterfaces {
		out = append(out, i.ProtocolBinding+"/"+i.ProtocolVersion+"@"+i.URL)
	}
	return out
}

// getCard fetches the card as a client would, with or without A2A-Version.
func getCard(t *testing.T, base, version string, extra http.Header) (*http.Response, []byte, cardDoc) {
	t.Helper()
	req, _ := http.NewRequestWithContext(testCtx(t), http.MethodGet, base+"/.well-known/agent-card.json", nil)
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	for k, v := range extra {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET card: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var doc cardDoc
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, &doc); err != nil {
			t.Fatalf("card is not JSON: %v\n%s", err, body)
		}
	}
	return resp, body, doc
}

// TestCard checks the card documents every client above starts from: the
// hybrid one (no header, what a2a-go v2 and v0.3 fetch) must keep the full
// supportedInterfaces list and the 0.3 fields; the 1.0 one (what @a2a-js/sdk
// fetches) must be pure 1.0; a 0.3-only mount must not advertise 1.0.
func TestCard(t *testing.T) {
	rpc := dualURL + rpcPath
	wantIfaces := []string{"JSONRPC/1.0@" + rpc, "JSONRPC/0.3@" + rpc}

	t.Run("hybrid", func(t *testing.T) {
		resp, body, doc := getCard(t, dualURL, "", nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("Content-Type %q, want application/json", ct)
		}
		if !strings.Contains(resp.Header.Get("Vary"), "A2A-Version") {
			t.Errorf("Vary %q does not name A2A-Version", resp.Header.Get("Vary"))
		}
		if doc.Name != "Interop Agent" || !doc.Capabilities.Streaming {
			t.Errorf("name %q streaming %v, want %q true", doc.Name, doc.Capabilities.Streaming, "Interop Agent")
		}
		if !strings.HasPrefix(doc.ProtocolVersion, "0.3") || doc.URL != rpc || doc.PreferredTransport != "JSONRPC" {
			t.Errorf("0.3 fields protocolVersion %q url %q preferredTransport %q, want 0.3.x %q JSONRPC",
				doc.ProtocolVersion, doc.URL, doc.PreferredTransport, rpc)
		}
		for _, w := range wantIfaces {
			if !slices.Contains(doc.interfaces(), w) {
				t.Errorf("supportedInterfaces %v lacks %s", doc.interfaces(), w)
			}
		}
		if len(doc.Skills) != 1 || doc.Skills[0].ID != "echo" || doc.Skills[0].Name != "Echo" ||
			doc.Skills[0].Description != "Echoes" || !slices.Equal(doc.Skills[0].Tags, []string{"echo"}) {
			t.Errorf("skills %+v, want one echo/Echo/Echoes/[echo]", doc.Skills)
		}
		if t.Failed() {
			t.Logf("card:\n%s", body)
		}
	})

	t.Run("v1.0", func(t *testing.T) {
		resp, body, doc := getCard(t, dualURL, "1.0", nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		var raw map[string]json.RawMessage
		_ = json.Unmarshal(body, &raw)
		for _, k := range []string{"url", "preferredTransport", "protocolVersion", "additionalInterfaces"} {
			if _, ok := raw[k]; ok {
				t.Errorf("1.0 card carries the 0.3 field %q", k)
			}
		}
		for _, w := range wantIfaces {
			if !slices.Contains(doc.interfaces(), w) {
				t.Errorf("supportedInterfaces %v lacks %s", doc.interfaces(), w)
			}
		}
		etag := resp.Header.Get("ETag")
		if etag == "" {
			t.Fatalf("no ETag on the 1.0 card")
		}
		again, _, _ := getCard(t, dualURL, "1.0", http.Header{"If-None-Match": {etag}})
		if again.StatusCode != http.StatusNotModified {
			t.Errorf("If-None-Match %s: status %d, want 304", etag, again.StatusCode)
		}
		if t.Failed() {
			t.Logf("card:\n%s", body)
		}
	})

	t.Run("legacy-mount", func(t *testing.T) {
		resp, body, doc := getCard(t, legacyURL, "", nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		if doc.URL != legacyURL+rpcPath || !strings.HasPrefix(doc.ProtocolVersion, "0.3") {
			t.Errorf("url %q protocolVersion %q, want %q 0.3.x", doc.URL, doc.ProtocolVersion, legacyURL+rpcPath)
		}
		for _, i := range doc.SupportedInterfaces {
			if i.ProtocolVersion != "0.3" {
				t.Errorf("0.3-only mount advertises %s/%s@%s", i.ProtocolBinding, i.ProtocolVersion, i.URL)
			}
		}
		if t.Failed() {
			t.Logf("card:\n%s", body)
		}
	})
}

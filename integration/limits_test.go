package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestHTTPEnvelope: body limit (413), method (405 with Allow), media type
// (415), and both JSON media types accepted.
func TestHTTPEnvelope(t *testing.T) {
	a := textAgent(t)
	load(t, minimal("max_request_body 2KiB"), map[string]any{"Agent": a.URL()})
	url := base + "/a2a"

	big := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":%q}]}}}`,
		strings.Repeat("x", 3000))
	if resp := rawPost(t, url, "application/json", strings.NewReader(big), withHeader("A2A-Version", "1.0")); resp.StatusCode != 413 {
		t.Errorf("over the limit: %d, want 413", resp.StatusCode)
	}
	// Without a Content-Length (chunked) the limit holds as well.
	if resp := rawPost(t, url, "application/json", io.MultiReader(strings.NewReader(big)), withHeader("A2A-Version", "1.0")); resp.StatusCode != 413 {
		t.Errorf("chunked over the limit: %d, want 413", resp.StatusCode)
	}
	if len(a.Calls()) != 0 {
		t.Errorf("an oversized request reached the agent")
	}
	// Just under the limit is fine.
	small := send10(t, url, msg10(strings.Repeat("y", 1500), "", ""))
	if small.Status.State != "TASK_STATE_COMPLETED" {
		t.Errorf("under the limit: %s", small.Status.State)
	}

	resp, _ := get(t, "GET", url)
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST, OPTIONS" {
		t.Errorf("GET on the RPC path: %d Allow=%q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	// A wrong or missing media type (curl -d sends a form's) is told what
	// to send, in one line.
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", ""} {
		req, _ := http.NewRequest("POST", url, strings.NewReader(`{}`))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		const want = "a2a: unsupported Content-Type: send application/json or application/a2a+json\n"
		if resp.StatusCode != 415 || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" || string(b) != want {
			t.Errorf("Content-Type %q: %d %q %q, want 415 text/plain %q", ct, resp.StatusCode, resp.Header.Get("Content-Type"), b, want)
		}
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"` + small.ID + `"}}`
	for _, ct := range []string{"application/a2a+json", "application/json; charset=utf-8"} {
		ans := post(t, url, "1.0", body, withHeader("Content-Type", ct))
		var got wireTask
		ans.ok(t, &got)
		if got.ID != small.ID {
			t.Errorf("%s: got task %q", ct, got.ID)
		}
	}
}

// loadError posts a Caddyfile to the admin API and returns its error text
// ("" if the config loaded).
func loadError(t *testing.T, cfg string) string {
	t.Helper()
	return loadErrorAs(t, "text/caddyfile", fmt.Sprintf(globals, "")+cfg)
}

// loadErrorAs is loadError for a whole config of the given Content-Type
// (its global options or admin settings included).
func loadErrorAs(t *testing.T, contentType, cfg string) string {
	t.Helper()
	// Every load, failed or not, restarts the admin server: a kept-alive
	// connection to the old one is reset, and the new one may not listen
	// yet. So each try gets a fresh connection, and a refused or reset one
	// is tried again for a bounded while.
	var resp *http.Response
	var err error
	for deadline := time.Now().Add(3 * time.Second); ; {
		req, _ := http.NewRequest("POST", fmt.Sprintf("http://localhost:%d/load", adminPort), strings.NewReader(cfg))
		req.Header.Set("Content-Type", contentType)
		req.Close = true
		if resp, err = client.Do(req); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == 200 {
		return ""
	}
	var e struct {
		Error string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatalf("admin error answer: %v", err)
	}
	return e.Error
}

// TestProvisionErrors: configs that must not run fail the load (and
// `caddy validate`) with a message saying why, the Caddyfile's with the
// line of the a2a block; the running config is left alone.
func TestProvisionErrors(t *testing.T) {
	a := textAgent(t)
	load(t, minimal(), map[string]any{"Agent": a.URL()})

	tests := []struct {
		name, cfg, want string
	}{
		{
			name: "no skill",
			cfg:  "http://:9080 {\n\ta2a {\n\t\tupstream " + a.URL() + "\n\t\tname N\n\t\tdescription D\n\t}\n}\n",
			want: "at least one skill is required (the agent card's skills, each with an id, a name, a description and tags), at Caddyfile:8",
		},
		{
			name: "skill without tags",
			cfg:  "http://:9080 {\n\ta2a {\n\t\tupstream " + a.URL() + "\n\t\tname N\n\t\tdescription D\n\t\tskill s {\n\t\t\tname S\n\t\t\tdescription S\n\t\t}\n\t}\n}\n",
			want: `skill "s": at least one tag is required (tags), at Caddyfile:8`,
		},
		{
			name: "no name",
			cfg:  "http://:9080 {\n\ta2a {\n\t\tupstream " + a.URL() + "\n\t\tdescription D\n\t\tskill s {\n\t\t\tname S\n\t\t\tdescription S\n\t\t\ttags t\n\t\t}\n\t}\n}\n",
			want: "name is required (the agent card's name), at Caddyfile:8",
		},
		{
			name: "bad media type",
			cfg:  strings.Replace(minimal("input_modes text"), "{{.Agent}}", a.URL(), 1),
			want: `defaultInputModes[0]: "text" is not a media type`,
		},
		{
			name: "unknown placeholder in header_up",
			cfg: "http://:9080 {\n\ta2a {\n\t\tupstream " + a.URL() + " {\n\t\t\theader_up X-Who {nothing.known}\n\t\t}" +
				skillBlock + "\n\t}\n}\n",
			want: "unrecognized placeholder {nothing.known}",
		},
		{
			name: "TLS transport to an http:// upstream",
			cfg: "http://:9080 {\n\ta2a {\n\t\tupstream " + a.URL() + " {\n\t\t\ttransport http {\n\t\t\t\ttls\n\t\t\t}\n\t\t}" +
				skillBlock + "\n\t}\n}\n",
			want: "but the transport enables TLS",
		},
		{
			name: "same card and rpc path",
			cfg:  strings.Replace(minimal("rpc_path /.well-known/agent-card.json"), "{{.Agent}}", a.URL(), 1),
			want: "card_path and rpc_path are both /.well-known/agent-card.json",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := loadError(t, tt.cfg)
			if !strings.Contains(got, tt.want) {
				t.Errorf("load error %q does not contain %q", got, tt.want)
			}
		})
	}
	// The config that was running still runs.
	if task := send10(t, base+"/a2a", msg10("still here", "", "")); task.text() != "Hello, still here" {
		t.Errorf("after failed loads: %q", task.text())
	}
}

package browser

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// page is a tab showing url.
type page struct {
	t   *testing.T
	ctx context.Context

	mu sync.Mutex
	// statuses are the HTTP statuses the browser received, by URL (what
	// the network saw, even where the page may not read it).
	statuses map[string][]int64
}

// open opens a new tab on url.
func open(t *testing.T, url string) *page {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browserCtx)
	t.Cleanup(cancel)
	ctx, cancelT := context.WithTimeout(ctx, 30*time.Second)
	t.Cleanup(cancelT)
	p := &page{t: t, ctx: ctx, statuses: map[string][]int64{}}
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventResponseReceived); ok && e.Response != nil {
			p.mu.Lock()
			p.statuses[e.Response.URL] = append(p.statuses[e.Response.URL], e.Response.Status)
			p.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("navigate to %s: %v", url, err)
	}
	return p
}

// seen is what the network answered for url, once it has answered at
// least once (or 5s have passed): Chromium reports a response to the
// listener asynchronously, and on a loaded machine after the page's fetch
// has already settled.
func (p *page) seen(url string) []int64 {
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		p.mu.Lock()
		got := append([]int64(nil), p.statuses[url]...)
		p.mu.Unlock()
		if len(got) > 0 || time.Now().After(deadline) {
			return got
		}
	}
}

// fetched is what a page's fetch got: the response as the page may read
// it, or the error fetch rejected with.
type fetched struct {
	Error   string            `json:"error"`
	Type    string            `json:"type"`
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

// fetch runs fetch(url, init) in the page, reading the whole body (an
// SSE stream to its end). init is a JavaScript object literal.
func (p *page) fetch(url, init string) fetched {
	p.t.Helper()
	js := fmt.Sprintf(`(async () => {
	try {
		const r = await fetch(%q, %s);
		const headers = {};
		for (const k of ["content-type", "a2a-extensions", "x-a2a-extensions", "a2a-version", "retry-after"]) {
			const v = r.headers.get(k);
			if (v !== null) headers[k] = v;
		}
		let body = "";
		if (r.type !== "opaque") {
			const reader = r.body.getReader();
			const dec = new TextDecoder();
			for (;;) {
				const {done, value} = await reader.read();
				if (done) break;
				body += dec.decode(value, {stream: true});
			}
		}
		return {type: r.type, status: r.status, headers, body};
	} catch (e) {
		return {error: e.name + ": " + e.message};
	}
})()`, url, init)
	got, err := chromedp.Run(p.ctx, chromedp.Evaluate[fetched](js, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("fetch %s: %v", url, err)
	}
	return got
}

// rpcInit is a fetch init posting a JSON-RPC request with headers (a
// JavaScript object literal's members) and more init members.
func rpcInit(method string, params any, headers, more string) string {
	p, _ := json.Marshal(params)
	body, _ := json.Marshal(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, method, p))
	return fmt.Sprintf(`{method: "POST", headers: {"Content-Type": "application/json", %s}, body: %s, %s}`, headers, body, more)
}

func message10(text string) map[string]any {
	return map[string]any{"message": map[string]any{"messageId": fmt.Sprint(time.Now().UnixNano()), "role": "ROLE_USER",
		"parts": []map[string]any{{"text": text}}}}
}

func message03(text string) map[string]any {
	return map[string]any{"message": map[string]any{"kind": "message", "messageId": fmt.Sprint(time.Now().UnixNano()), "role": "user",
		"parts": []map[string]any{{"kind": "text", "text": text}}}}
}

// taskCount is how many tasks the open mount holds (every caller there
// is the owner "visitor"), asked by the test, not by a page.
func taskCount(t *testing.T) int {
	t.Helper()
	req, _ := http.NewRequest("POST", openURL+rpcPath, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":100}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ans struct {
		Result struct {
			Tasks []json.RawMessage `json:"tasks"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
		t.Fatal(err)
	}
	return len(ans.Result.Tasks)
}

// TestForgedNoCORSPostRefused is the attack of the issue: a page of
// another site runs fetch(agent, {mode: 'no-cors', credentials: 'include',
// body: new Blob([json])}), which Chromium sends without a preflight and
// without a Content-Type. The agent is never called, no task exists, and
// the network saw the module's 403. So does a page of the agent's own
// site on another port (same-site), and a page on plain http (no
// Sec-Fetch-Site: Origin against Host).
func TestForgedNoCORSPostRefused(t *testing.T) {
	for _, tc := range []struct {
		name, page, target string
	}{
		{name: "cross-site", page: crossSitePage, target: openURL + rpcPath},
		{name: "same-site", page: sameSitePage, target: openURL + rpcPath},
		{name: "plain http, no Sec-Fetch-Site", page: plainHTTPPage, target: testHost + rpcPath},
		// A listed origin is listed for CORS, not for no-cors posts: a
		// request the browser sent without a preflight is refused.
		{name: "listed origin, no-cors", page: listedPage, target: openURL + rpcPath},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := "forged-" + strings.ReplaceAll(tc.name, " ", "-")
			before := taskCount(t)
			p := open(t, tc.page)
			body, _ := json.Marshal(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":%q,"role":"user","parts":[{"kind":"text","text":%q}]}}}`, "m-"+marker, marker))
			got := p.fetch(tc.target, fmt.Sprintf(`{method: "POST", mode: "no-cors", credentials: "include", body: new Blob([%s], {type: "application/json"})}`, body))
			if got.Error != "" || got.Type != "opaque" {
				t.Fatalf("the page's no-cors fetch: %+v, want an opaque answer", got)
			}
			want := int64(http.StatusForbidden)
			if seen := p.seen(tc.target); len(seen) != 1 || seen[0] != want {
				t.Errorf("the network saw %v for %s, want [%d]", seen, tc.target, want)
			}
			if calls := theAgent.callsWith(marker); len(calls) != 0 {
				t.Errorf("the forged message reached the agent: %+v", calls)
			}
			if after := taskCount(t); after != before {
				t.Errorf("tasks: %d before, %d after the forged post", before, after)
			}
		})
	}
}

// TestOwnPageNeedsNoCORS: the agent's own origin is same-origin, with
// Sec-Fetch-Site or (plain http) by Origin matching Host.
func TestOwnPageNeedsNoCORS(t *testing.T) {
	for _, pageURL := range []string{ownPage, ownPageTH} {
		p := open(t, pageURL)
		target := strings.TrimSuffix(pageURL, "/page") + rpcPath
		got := p.fetch(target, rpcInit("SendMessage", message10("own page"), `"A2A-Version": "1.0"`, ""))
		if got.Error != "" || got.Status != 200 || !strings.Contains(got.Body, "Hello, own page") {
			t.Errorf("%s: %+v", pageURL, got)
		}
	}
}

// TestListedOriginReadsJSONAndSSE: the web app cors lists makes CORS
// fetches (a preflight, for the JSON media type and the A2A headers) and
// reads a JSON answer, an SSE stream, the exposed extension echo (1.0
// and 0.3 names) and the status of the HTTP errors.
func TestListedOriginReadsJSONAndSSE(t *testing.T) {
	p := open(t, listedPage)
	target := openURL + rpcPath

	got := p.fetch(target, rpcInit("SendMessage", message10("from the web app"), `"A2A-Version": "1.0", "A2A-Extensions": "urn:ext:cite"`, ""))
	if got.Error != "" || got.Type != "cors" || got.Status != 200 {
		t.Fatalf("JSON call: %+v", got)
	}
	if !strings.Contains(got.Body, "Hello, from the web app") || !strings.Contains(got.Body, "TASK_STATE_COMPLETED") {
		t.Errorf("JSON body: %s", got.Body)
	}
	if got.Headers["a2a-extensions"] != "urn:ext:cite" || !strings.HasPrefix(got.Headers["content-type"], "application/json") {
		t.Errorf("headers the page read: %v", got.Headers)
	}

	got = p.fetch(target, rpcInit("SendStreamingMessage", message10("stream please"), `"A2A-Version": "1.0", "Accept": "text/event-stream"`, ""))
	if got.Error != "" || got.Status != 200 || !strings.HasPrefix(got.Headers["content-type"], "text/event-stream") {
		t.Fatalf("SSE call: %+v", got)
	}
	var text strings.Builder
	frames, completed := 0, false
	sc := bufio.NewScanner(strings.NewReader(got.Body))
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		frames++
		var f struct {
			Result struct {
				ArtifactUpdate *struct {
					Artifact struct {
						Parts []struct{ Text string } `json:"parts"`
					} `json:"artifact"`
				} `json:"artifactUpdate"`
				StatusUpdate *struct {
					Status struct{ State string } `json:"status"`
				} `json:"statusUpdate"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(data), &f); err != nil {
			t.Fatalf("frame %q: %v", data, err)
		}
		if a := f.Result.ArtifactUpdate; a != nil {
			for _, part := range a.Artifact.Parts {
				text.WriteString(part.Text)
			}
		}
		if s := f.Result.StatusUpdate; s != nil && s.Status.State == "TASK_STATE_COMPLETED" {
			completed = true
		}
	}
	if text.String() != "one two" || !completed || frames < 4 {
		t.Errorf("the page read %d frames, text %q, completed %v:\n%s", frames, text.String(), completed, got.Body)
	}

	// 0.3, with its extension header, allowed and exposed too.
	got = p.fetch(target, rpcInit("message/stream", message03("stream on 0.3"), `"X-A2A-Extensions": "urn:ext:cite"`, ""))
	if got.Error != "" || got.Status != 200 || got.Headers["x-a2a-extensions"] != "urn:ext:cite" || !strings.Contains(got.Body, `"final":true`) {
		t.Errorf("0.3 stream: %+v", got)
	}

	// The HTTP errors Caddy renders carry the CORS headers: the page reads
	// their status instead of a network error. So does the 403 of a call
	// the browser sent without a preflight (text/plain is a form's type).
	got = p.fetch(target, `{method: "POST", headers: {"Content-Type": "text/plain"}, body: "{}"}`)
	if got.Error != "" || got.Status != http.StatusForbidden ||
		got.Body != "a2a: cross-origin request refused: a page's call must send Content-Type: application/json, so that the browser preflights it\n" {
		t.Errorf("403 as the page saw it: %+v", got)
	}
	got = p.fetch(target, `{method: "POST", headers: {"Content-Type": "application/xml"}, body: "{}"}`)
	if got.Error != "" || got.Status != http.StatusUnsupportedMediaType {
		t.Errorf("415 as the page saw it: %+v", got)
	}
	got = p.fetch(target, `{method: "GET"}`)
	if got.Error != "" || got.Status != http.StatusMethodNotAllowed {
		t.Errorf("405 as the page saw it: %+v", got)
	}
	got = p.fetch(target, `{method: "POST", headers: {"Content-Type": "application/json"}, body: "x".repeat(5 << 20)}`)
	if got.Error != "" || got.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("413 as the page saw it: %+v", got)
	}

	// A header A2A does not use is not allowed: the preflight refuses it.
	got = p.fetch(target, rpcInit("SendMessage", message10("custom header"), `"A2A-Version": "1.0", "X-Custom": "1"`, ""))
	if got.Error == "" {
		t.Errorf("a call with X-Custom passed the preflight: %+v", got)
	}
	// Credentials need `credentials on`, which this mount does not have.
	got = p.fetch(target, rpcInit("SendMessage", message10("with cookies"), `"A2A-Version": "1.0"`, `credentials: "include"`))
	if got.Error == "" {
		t.Errorf("a credentialed call passed a mount without credentials on: %+v", got)
	}
	if calls := theAgent.callsWith("custom header"); len(calls) != 0 {
		t.Errorf("a refused call reached the agent")
	}
}

// TestUnlistedOriginCORSFailure: pages of origins cors does not list get
// a CORS failure in the page (a TypeError), whether their call needs a
// preflight (JSON) or not (text/plain), and the agent hears nothing.
func TestUnlistedOriginCORSFailure(t *testing.T) {
	for _, pageURL := range []string{crossSitePage, sameSitePage} {
		p := open(t, pageURL)
		target := openURL + rpcPath
		got := p.fetch(target, rpcInit("SendMessage", message10("unlisted json"), `"A2A-Version": "1.0"`, ""))
		if !strings.HasPrefix(got.Error, "TypeError") {
			t.Errorf("%s, JSON: %+v, want a TypeError", pageURL, got)
		}
		// The preflight was answered (204), without CORS headers.
		if seen := p.seen(target); len(seen) != 1 || seen[0] != http.StatusNoContent {
			t.Errorf("%s: the network saw %v, want only the preflight's 204", pageURL, seen)
		}
		got = p.fetch(target, `{method: "POST", headers: {"Content-Type": "text/plain"}, body: "{}"}`)
		if !strings.HasPrefix(got.Error, "TypeError") {
			t.Errorf("%s, simple request: %+v, want a TypeError", pageURL, got)
		}
	}
	if calls := theAgent.callsWith("unlisted"); len(calls) != 0 {
		t.Errorf("unlisted pages reached the agent: %+v", calls)
	}
}

// TestAnyPageReadsTheCard: the public card answers every origin with *,
// a preflighted read (A2A-Version) too, cors or not; credentials are
// never allowed on it.
func TestAnyPageReadsTheCard(t *testing.T) {
	for _, pageURL := range []string{crossSitePage, listedPage, sameSitePage} {
		p := open(t, pageURL)
		for _, base := range []string{openURL, gatedURL} {
			got := p.fetch(base+cardPath, `{}`)
			// The hybrid document has the 0.3 fields; the 1.0 one not.
			if got.Error != "" || got.Status != 200 || !strings.Contains(got.Body, `"preferredTransport"`) {
				t.Errorf("%s reading %s: %+v", pageURL, base, got)
			}
			got = p.fetch(base+cardPath, `{headers: {"A2A-Version": "1.0"}}`)
			if got.Error != "" || got.Status != 200 || strings.Contains(got.Body, `"preferredTransport"`) ||
				!strings.Contains(got.Body, `"supportedInterfaces"`) {
				t.Errorf("%s reading the 1.0 card of %s: %+v", pageURL, base, got)
			}
			got = p.fetch(base+cardPath, `{credentials: "include"}`)
			if !strings.HasPrefix(got.Error, "TypeError") {
				t.Errorf("%s read the card of %s with credentials: %+v", pageURL, base, got)
			}
		}
	}
}

// TestWebAppCallsGatedAgent is the README's worked example: the web app
// sends the user's credentials itself (credentials: 'include' as well);
// the preflight passes basic_auth, which leaves OPTIONS out, and the
// agent hears who asked. Without credentials the page learns nothing
// (basic_auth's 401 carries no CORS headers), and another site's page
// is refused even with them.
func TestWebAppCallsGatedAgent(t *testing.T) {
	target := gatedURL + rpcPath
	auth := `"Authorization": "Basic " + btoa("alice:alice-pw"), "A2A-Version": "1.0"`
	p := open(t, listedPage)
	got := p.fetch(target, rpcInit("SendMessage", message10("gated hello"), auth, `credentials: "include"`))
	if got.Error != "" || got.Status != 200 || !strings.Contains(got.Body, "Hello, gated hello") {
		t.Fatalf("the web app's call: %+v", got)
	}
	if calls := theAgent.callsWith("gated hello"); len(calls) != 1 || calls[0].User != "alice" {
		t.Errorf("the agent heard %+v, want one call from alice", calls)
	}
	got = p.fetch(target, rpcInit("SendMessage", message10("gated anonymous"), `"A2A-Version": "1.0"`, `credentials: "include"`))
	if !strings.HasPrefix(got.Error, "TypeError") {
		t.Errorf("without credentials: %+v", got)
	}
	if calls := theAgent.callsWith("gated anonymous"); len(calls) != 0 {
		t.Errorf("a call without credentials reached the agent")
	}

	other := open(t, crossSitePage)
	got = other.fetch(target, rpcInit("SendMessage", message10("gated forged"), auth, `credentials: "include"`))
	if !strings.HasPrefix(got.Error, "TypeError") {
		t.Errorf("another site's page: %+v", got)
	}
	if calls := theAgent.callsWith("gated forged"); len(calls) != 0 {
		t.Errorf("another site's page reached the agent")
	}
}

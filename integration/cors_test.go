package integration

import (
	"net/http"
	"strings"
	"testing"
)

// Origins of the browser-caller tests: the web app cors lists, and a
// site nobody listed.
const (
	appOrigin  = "https://app.example.com"
	evilOrigin = "https://evil.example"
)

// gatedCORSSite is the README's worked example: basic_auth on the RPC
// path except its preflights (a browser sends those without
// credentials), and cors for the web app with credentials on.
const gatedCORSSite = `
http://:9080 {
	@rpc_gated {
		path /a2a
		not method OPTIONS
	}
	basic_auth @rpc_gated {
		alice {{.Alice}}
	}
	a2a {
		upstream {{.Agent}}` + skillBlock + `
		extension urn:ext:cite
		cors {
			origins ` + appOrigin + ` http://localhost:5173
			credentials on
			max_age 1h
		}
	}
{{.Errors}}}
`

// fromPage makes a request look like a page of origin sent it the way
// Chromium does (Sec-Fetch-Site says where from).
func fromPage(origin string) reqOpt {
	return func(r *http.Request) {
		r.Header.Set("Origin", origin)
		r.Header.Set("Sec-Fetch-Site", "cross-site")
		r.Header.Set("Sec-Fetch-Mode", "cors")
	}
}

func noContentType(r *http.Request) { r.Header.Del("Content-Type") }

// wantHeaders compares headers exactly ("" = absent).
func wantHeaders(t *testing.T, what string, h http.Header, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := strings.Join(h.Values(k), ", "); got != v {
			t.Errorf("%s: %s = %q, want %q", what, k, got, v)
		}
	}
}

// noCORS are the CORS headers an unlisted origin must not get.
var noCORS = map[string]string{
	"Access-Control-Allow-Origin": "", "Access-Control-Allow-Credentials": "", "Access-Control-Allow-Methods": "",
	"Access-Control-Allow-Headers": "", "Access-Control-Expose-Headers": "",
}

// TestCrossSiteForgeryRefused: a page of another site posting with the
// visitor's credentials (as a browser attaches cached basic_auth
// credentials or cookies) is refused with a one-line 403 whatever its
// media type: the agent is never called and no task exists. Requests
// without browser headers (SDKs, curl) are not affected, but must name
// their media type.
func TestCrossSiteForgeryRefused(t *testing.T) {
	a := textAgent(t)
	load(t, gatedCORSSite, map[string]any{"Agent": a.URL(), "Alice": aliceHash, "Errors": ""})
	url := base + "/a2a"
	alice := withAuth("alice", "alice-pw")
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"forged"}]}}}`

	for _, tc := range []struct {
		name string
		opts []reqOpt
	}{
		// What Chromium sends for fetch(url, {mode: 'no-cors', credentials:
		// 'include', body: new Blob([json])}): no Content-Type.
		{name: "no-cors fetch", opts: []reqOpt{fromPage(evilOrigin), noContentType, withHeader("Sec-Fetch-Mode", "no-cors")}},
		{name: "with a JSON media type", opts: []reqOpt{fromPage(evilOrigin)}},
		{name: "text/plain form", opts: []reqOpt{fromPage(evilOrigin), withHeader("Content-Type", "text/plain")}},
		{name: "same-site page", opts: []reqOpt{fromPage("http://other.localhost"), withHeader("Sec-Fetch-Site", "same-site")}},
		{name: "browser without Sec-Fetch-Site", opts: []reqOpt{withHeader("Origin", evilOrigin)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ans := post(t, url, "1.0", body, append([]reqOpt{alice}, tc.opts...)...)
			if ans.Status != http.StatusForbidden ||
				string(ans.Body) != "a2a: cross-origin request refused: list the page's origin in the a2a cors block to allow it\n" {
				t.Errorf("forged request: %d %q, want 403 and one line", ans.Status, ans.Body)
			}
			wantHeaders(t, "refusal", ans.Header, noCORS)
		})
	}
	if n := len(a.Calls()); n != 0 {
		t.Fatalf("forged requests reached the agent %d times", n)
	}
	if ids := listIDs(t, url, alice); len(ids) != 0 {
		t.Fatalf("forged requests left tasks %v", ids)
	}

	// A client that is not a browser: unaffected, but the media type is
	// required (missing → 415 like a wrong one).
	if task := send10(t, url, msg10("from an SDK", "", ""), alice); task.text() != "Hello, from an SDK" {
		t.Errorf("SDK call: %q", task.text())
	}
	if ans := post(t, url, "1.0", body, alice, noContentType); ans.Status != http.StatusUnsupportedMediaType {
		t.Errorf("no Content-Type: %d, want 415", ans.Status)
	}
	// The page of the agent's own origin needs no cors.
	ans := post(t, url, "1.0", body, alice, withHeader("Origin", "http://127.0.0.1:9080"), withHeader("Sec-Fetch-Site", "same-origin"))
	ans.ok(t, nil)
	wantHeaders(t, "same-origin", ans.Header, noCORS)
}

// TestCORSThroughCaddy: a listed origin's preflight and answers (JSON,
// SSE, and the HTTP errors Caddy renders, with and without handle_errors)
// carry the CORS headers; an unlisted origin gets none; the card answers
// every origin with *.
func TestCORSThroughCaddy(t *testing.T) {
	for _, errors := range []string{"", "\thandle_errors {\n\t\trespond \"{err.status_code} {err.status_text}\"\n\t}\n"} {
		name := "Caddy's error answers"
		if errors != "" {
			name = "handle_errors"
		}
		t.Run(name, func(t *testing.T) { corsThroughCaddy(t, errors) })
	}
}

func corsThroughCaddy(t *testing.T, errorsBlock string) {
	a := streamAgent(t, nil)
	load(t, gatedCORSSite, map[string]any{"Agent": a.URL(), "Alice": aliceHash, "Errors": errorsBlock})
	url := base + "/a2a"
	alice := withAuth("alice", "alice-pw")
	actual := map[string]string{
		"Access-Control-Allow-Origin":      appOrigin,
		"Access-Control-Allow-Credentials": "true",
		"Access-Control-Expose-Headers":    "A2A-Version, A2A-Extensions, X-A2A-Extensions, Retry-After",
		"Vary":                             "Origin",
		"Access-Control-Allow-Methods":     "",
	}

	// The preflight passes basic_auth (the matcher leaves OPTIONS out)
	// and is answered by the module, without credentials.
	preflight := func(origin string) *http.Response {
		resp, body := get(t, "OPTIONS", url, withHeader("Origin", origin), withHeader("Access-Control-Request-Method", "POST"),
			withHeader("Access-Control-Request-Headers", "authorization,content-type,a2a-version,a2a-extensions"))
		if resp.StatusCode != http.StatusNoContent || len(body) != 0 {
			t.Fatalf("preflight from %s: %d %q", origin, resp.StatusCode, body)
		}
		return resp
	}
	wantHeaders(t, "listed preflight", preflight(appOrigin).Header, map[string]string{
		"Access-Control-Allow-Origin":      appOrigin,
		"Access-Control-Allow-Credentials": "true",
		"Access-Control-Allow-Methods":     "POST",
		"Access-Control-Allow-Headers":     "Content-Type, Authorization, A2A-Version, A2A-Extensions, X-A2A-Extensions, Last-Event-ID",
		"Access-Control-Max-Age":           "3600",
		"Access-Control-Expose-Headers":    "",
		"Vary":                             "Origin",
		"Allow":                            "POST, OPTIONS",
	})
	unlisted := preflight(evilOrigin)
	wantHeaders(t, "unlisted preflight", unlisted.Header, noCORS)
	wantHeaders(t, "unlisted preflight", unlisted.Header, map[string]string{"Vary": "Origin", "Access-Control-Max-Age": ""})

	// The actual answer: JSON.
	ans := post(t, url, "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`,
		alice, fromPage(appOrigin), withHeader("A2A-Extensions", "urn:ext:cite"))
	var res struct{ Task wireTask }
	ans.ok(t, &res)
	if res.Task.text() != "chunk one, chunk two" {
		t.Errorf("task text %q", res.Task.text())
	}
	wantHeaders(t, "JSON answer", ans.Header, actual)
	if got := ans.Header.Get("A2A-Extensions"); got != "urn:ext:cite" {
		t.Errorf("A2A-Extensions = %q, want the echo a page may read", got)
	}

	// An SSE stream.
	s := openStream(t, url, "1.0", "SendStreamingMessage", map[string]any{"message": msg10("stream", "", "")}, alice, fromPage(appOrigin))
	wantHeaders(t, "SSE answer", s.resp.Header, actual)
	frames := 0
	for range s.frames {
		frames++
	}
	if frames < 3 {
		t.Errorf("the stream had %d frames", frames)
	}

	// HTTP errors (rendered by Caddy, or by handle_errors) keep them:
	// the page reads the status. basic_auth's own 401 is not the module's
	// and has none.
	for _, tc := range []struct {
		what   string
		method string
		ct     string
		body   string
		status int
	}{
		{what: "GET", method: "GET", status: http.StatusMethodNotAllowed},
		{what: "application/xml", method: "POST", ct: "application/xml", body: "{}", status: http.StatusUnsupportedMediaType},
		// Not preflighted: the listed origin's page still reads the 403.
		{what: "text/plain", method: "POST", ct: "text/plain", body: "{}", status: http.StatusForbidden},
		{what: "no media type", method: "POST", body: "{}", status: http.StatusForbidden},
		{what: "body over max_request_body", method: "POST", ct: "application/json", body: strings.Repeat("x", 5<<20), status: http.StatusRequestEntityTooLarge},
	} {
		req, _ := http.NewRequest(tc.method, url, strings.NewReader(tc.body))
		if tc.ct != "" {
			req.Header.Set("Content-Type", tc.ct)
		}
		alice(req)
		fromPage(appOrigin)(req)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s: %d, want %d", tc.what, resp.StatusCode, tc.status)
		}
		wantHeaders(t, tc.what, resp.Header, actual)
	}
	if ans := post(t, url, "1.0", "{}", fromPage(appOrigin)); ans.Status != http.StatusUnauthorized {
		t.Errorf("without credentials: %d", ans.Status)
	}

	// An unlisted origin: refused, and nothing tells its page anything.
	ans = post(t, url, "1.0", "{}", alice, fromPage(evilOrigin))
	if ans.Status != http.StatusForbidden {
		t.Errorf("unlisted origin: %d", ans.Status)
	}
	wantHeaders(t, "unlisted origin", ans.Header, noCORS)

	// The card: any origin, no credentials, cors or not.
	card := base + "/.well-known/agent-card.json"
	for _, origin := range []string{appOrigin, evilOrigin, ""} {
		resp, _ := get(t, "GET", card, withHeader("Origin", origin), withHeader("A2A-Version", "1.0"))
		if resp.StatusCode != 200 {
			t.Errorf("card from %q: %d", origin, resp.StatusCode)
		}
		wantHeaders(t, "card from "+origin, resp.Header, map[string]string{
			"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Credentials": "", "Vary": "A2A-Version",
		})
	}
	resp, _ := get(t, "OPTIONS", card, withHeader("Origin", evilOrigin), withHeader("Access-Control-Request-Method", "GET"),
		withHeader("Access-Control-Request-Headers", "a2a-version"))
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("card preflight: %d", resp.StatusCode)
	}
	wantHeaders(t, "card preflight", resp.Header, map[string]string{
		"Access-Control-Allow-Origin":      "*",
		"Access-Control-Allow-Credentials": "",
		"Access-Control-Allow-Methods":     "GET, HEAD",
		"Access-Control-Max-Age":           "600",
	})
}

// TestCORSPreflightBehindWholePathAuth: with basic_auth on the whole RPC
// path, preflights (sent without credentials) get basic_auth's 401 and
// browsers give up; hence the README's matcher that leaves OPTIONS out.
func TestCORSPreflightBehindWholePathAuth(t *testing.T) {
	a := textAgent(t)
	load(t, `
http://:9080 {
	basic_auth /a2a {
		alice {{.Alice}}
	}
	a2a {
		upstream {{.Agent}}`+skillBlock+`
		cors {
			origins `+appOrigin+`
		}
	}
}
`, map[string]any{"Agent": a.URL(), "Alice": aliceHash})
	resp, _ := get(t, "OPTIONS", base+"/a2a", withHeader("Origin", appOrigin), withHeader("Access-Control-Request-Method", "POST"))
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight behind basic_auth: %d %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
}

// TestCORSAnyOrigin: `origins *` lets every page call without
// credentials: Allow-Origin is *, never with Allow-Credentials.
func TestCORSAnyOrigin(t *testing.T) {
	a := textAgent(t)
	load(t, minimal("cors {\n\t\t\torigins *\n\t\t}"), map[string]any{"Agent": a.URL()})
	ans := post(t, base+"/a2a", "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"any"}]}}}`,
		fromPage(evilOrigin))
	ans.ok(t, nil)
	wantHeaders(t, "any origin", ans.Header, map[string]string{
		"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Credentials": "", "Vary": "",
	})
	bad := strings.Replace(minimal("cors {\n\t\t\torigins *\n\t\t\tcredentials on\n\t\t}"), "{{.Agent}}", a.URL(), 1)
	if e := loadError(t, bad); !strings.Contains(e, "credentials on cannot be used with origins *") {
		t.Errorf("credentials with *: %q", e)
	}
}

// simpleRefusal is the body of the 403 to a page of an allowed origin
// whose state-changing request the browser did not preflight.
const simpleRefusal = "a2a: cross-origin request refused: a page's call must send Content-Type: application/json, so that the browser preflights it\n"

// TestCrossSiteSimpleRequestRefused: under `origins *` and under a listed
// origin alike, a page's request the browser sends without a preflight (a
// body-less POST, a form, text/plain) is 403 on JSON-RPC and HTTP+JSON,
// and the task it aimed at is untouched; the same page's CORS request
// (preflighted, JSON) still cancels the task. An unlisted origin stays
// refused whatever it sends.
func TestCrossSiteSimpleRequestRefused(t *testing.T) {
	for _, tc := range []struct {
		origins, page, allowOrigin, vary string
	}{
		{"*", evilOrigin, "*", ""},
		{appOrigin, appOrigin, appOrigin, "Origin"},
	} {
		t.Run(tc.origins, func(t *testing.T) {
			a := askAgent(t)
			load(t, minimal("rest_path /a2a/rest", "cors {\n\t\t\torigins "+tc.origins+"\n\t\t}"), map[string]any{"Agent": a.URL()})
			task := send10(t, rpcURL, msg10("weather", "", ""))
			if task.Status.State != "TASK_STATE_INPUT_REQUIRED" {
				t.Fatalf("task %s", task.Status.State)
			}
			cancelURL := restURL + "/tasks/" + task.ID + ":cancel"
			cancelRPC := `{"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":"` + task.ID + `"}}`
			// The page's origin is allowed: it may read why.
			refused := map[string]string{"Access-Control-Allow-Origin": tc.allowOrigin, "Vary": tc.vary,
				"Access-Control-Expose-Headers": "A2A-Version, A2A-Extensions, X-A2A-Extensions, Retry-After", "Access-Control-Allow-Credentials": ""}
			noCors := withHeader("Sec-Fetch-Mode", "no-cors")

			for _, c := range []struct {
				name string
				do   func() (int, http.Header, []byte)
			}{
				{"HTTP+JSON cancel, no body, no Content-Type", func() (int, http.Header, []byte) {
					r := restDo(t, "POST", cancelURL, "", fromPage(tc.page), noCors)
					return r.Status, r.Header, r.Body
				}},
				{"HTTP+JSON cancel, a form", func() (int, http.Header, []byte) {
					r := restDo(t, "POST", cancelURL, "", fromPage(tc.page), noCors, withHeader("Content-Type", "application/x-www-form-urlencoded"))
					return r.Status, r.Header, r.Body
				}},
				{"HTTP+JSON cancel, text/plain from an old browser", func() (int, http.Header, []byte) {
					r := restDo(t, "POST", cancelURL, "{}", withHeader("Origin", tc.page), withHeader("Content-Type", "text/plain;charset=UTF-8"))
					return r.Status, r.Header, r.Body
				}},
				{"JSON-RPC CancelTask, text/plain", func() (int, http.Header, []byte) {
					ans := post(t, rpcURL, "1.0", cancelRPC, fromPage(tc.page), withHeader("Content-Type", "text/plain"))
					return ans.Status, ans.Header, ans.Body
				}},
				{"JSON-RPC CancelTask, no Content-Type", func() (int, http.Header, []byte) {
					ans := post(t, rpcURL, "1.0", cancelRPC, fromPage(tc.page), noCors, noContentType)
					return ans.Status, ans.Header, ans.Body
				}},
			} {
				status, h, body := c.do()
				if status != http.StatusForbidden || string(body) != simpleRefusal {
					t.Errorf("%s: %d %q, want 403 %q", c.name, status, body, simpleRefusal)
				}
				wantHeaders(t, c.name, h, refused)
			}
			if got := getTask10(t, rpcURL, task.ID); got.Status.State != "TASK_STATE_INPUT_REQUIRED" {
				t.Fatalf("after the simple requests the task is %s", got.Status.State)
			}
			if n := len(a.Calls()); n != 1 {
				t.Fatalf("the agent got %d calls, want the send's 1", n)
			}

			// An origin no cors entry lists: refused as before.
			if tc.origins != "*" {
				r := restDo(t, "POST", cancelURL, "{}", fromPage(evilOrigin))
				if r.Status != http.StatusForbidden || string(r.Body) != "a2a: cross-origin request refused: list the page's origin in the a2a cors block to allow it\n" {
					t.Errorf("unlisted origin: %d %q", r.Status, r.Body)
				}
			}

			// The page's CORS request: the preflight allows it, then the
			// call, with its JSON media type, goes through.
			pf := restDo(t, "OPTIONS", cancelURL, "", withHeader("Origin", tc.page),
				withHeader("Access-Control-Request-Method", "POST"), withHeader("Access-Control-Request-Headers", "content-type"))
			if pf.Status != http.StatusNoContent {
				t.Fatalf("preflight: %d %s", pf.Status, pf.Body)
			}
			wantHeaders(t, "preflight", pf.Header, map[string]string{"Access-Control-Allow-Origin": tc.allowOrigin, "Access-Control-Allow-Methods": "POST"})
			r := restDo(t, "POST", cancelURL, "{}", fromPage(tc.page))
			var canceled wireTask
			r.ok(t, &canceled)
			if canceled.Status.State != "TASK_STATE_CANCELED" {
				t.Errorf("CORS cancel: %s", canceled.Status.State)
			}
			wantHeaders(t, "CORS cancel", r.Header, map[string]string{"Access-Control-Allow-Origin": tc.allowOrigin, "Vary": tc.vary})

			// JSON-RPC likewise: a CORS request sends and cancels.
			second := send10(t, rpcURL, msg10("weather", "", ""), fromPage(tc.page))
			var rpcCanceled wireTask
			call(t, rpcURL, "1.0", "CancelTask", map[string]any{"id": second.ID}, fromPage(tc.page)).ok(t, &rpcCanceled)
			if rpcCanceled.Status.State != "TASK_STATE_CANCELED" {
				t.Errorf("JSON-RPC CORS cancel: %s", rpcCanceled.Status.State)
			}
		})
	}
}

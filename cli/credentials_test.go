package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// completed is a SendMessage result: a task completed with "ok".
const completed = `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a1","parts":[{"text":"ok"}]}]}}`

// withCredentials are --user and -H flags naming credentials.
func withCredentials(o *Options) {
	for _, h := range []string{"X-Api-Key: key", "Cookie: session=s"} {
		if err := o.AddHeader(h); err != nil {
			panic(err)
		}
	}
	if err := o.SetUser("ann:pw"); err != nil {
		panic(err)
	}
}

// credentialNames are the headers withCredentials sets.
var credentialNames = []string{"Authorization", "X-Api-Key", "Cookie"}

// otherHost is u with its host named localhost: the same server, but to
// net/http another host (a redirect there drops Authorization).
func otherHost(u string) string { return strings.Replace(u, "127.0.0.1", "localhost", 1) }

func redirectTo(target string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, http.StatusTemporaryRedirect)
	}
}

// wantCredentials checks each request's headers for the credentials:
// all of them, or none.
func wantCredentials(t *testing.T, server string, hs []http.Header, want bool) {
	t.Helper()
	if len(hs) == 0 {
		t.Errorf("%s: no request", server)
	}
	for i, h := range hs {
		for _, k := range credentialNames {
			if got := h.Get(k) != ""; got != want {
				t.Errorf("%s, request %d: %s sent: %v, want %v (%v)", server, i, k, got, want, h)
			}
		}
	}
}

// TestRedirectDropsCredentials: a redirect to another origin is followed
// without the credentials (--user, and every -H), for the card's GET and
// for a call; one within the origin keeps them.
func TestRedirectDropsCredentials(t *testing.T) {
	other := newFakeAgent(t, fakeCard("Other", "d", "S"), map[string]http.HandlerFunc{"SendMessage": jsonAnswer(completed)})
	a := newFakeAgent(t, fakeCard("A", "d", "S"), map[string]http.HandlerFunc{"SendMessage": redirectTo(otherHost(other.URL) + "/a2a")})
	runCommand(t, withCredentials, func(ctx context.Context, o *Options) int {
		return Send(ctx, o, a.URL, "hi", SendOptions{})
	}).want(t, 0, "ok\n", "")
	wantCredentials(t, "the card's server", a.headers(), true)
	wantCredentials(t, "the server redirected to", other.headers(), false)

	// The card's GET, redirected to another origin.
	moved := httptest.NewServer(redirectTo(otherHost(other.URL) + "/.well-known/agent-card.json"))
	defer moved.Close()
	other.forget()
	r := runCommand(t, withCredentials, func(ctx context.Context, o *Options) int { return Card(ctx, o, moved.URL) })
	if r.code != 0 {
		t.Errorf("card: exit %d\n%s%s", r.code, r.out, r.err)
	}
	wantCredentials(t, "the card's redirect", other.headers(), false)

	// Within one origin the credentials follow.
	same := newFakeAgent(t, fakeCard("Same", "d", "S"), nil)
	same.answer("SendMessage", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/a2a" {
			redirectTo(same.URL+"/moved")(w, r)
			return
		}
		jsonAnswer(completed)(w, r)
	})
	runCommand(t, withCredentials, func(ctx context.Context, o *Options) int {
		return Send(ctx, o, same.URL, "hi", SendOptions{})
	}).want(t, 0, "ok\n", "")
	if hs := same.headers(); len(hs) != 3 {
		t.Fatalf("the same origin got %d requests, want the card's, the call and its redirect", len(hs))
	}
	wantCredentials(t, "the same origin", same.headers(), true)
}

// foreignCard is the card of a server at cardURL whose one interface is
// at other's origin.
func foreignCard(other *fakeAgent) string {
	return strings.ReplaceAll(fakeCard("A", "d", "S"), "%s", other.URL)
}

// TestForeignOriginRefused: with credentials, send, tasks and cancel
// refuse an interface the card names on another origin, saying which
// and how to trust it; nothing reaches it. Without credentials they go.
func TestForeignOriginRefused(t *testing.T) {
	other := newFakeAgent(t, fakeCard("Other", "d", "S"), map[string]http.HandlerFunc{"SendMessage": jsonAnswer(completed)})
	a := newFakeAgent(t, foreignCard(other), nil)
	why := "the card at " + a.URL + "/.well-known/agent-card.json names interfaces only at another origin (" + other.URL +
		"): credentials (--user, -H) go there only if you trust it with --trust-origin " + other.URL + "\n"
	for name, cmd := range map[string]func(context.Context, *Options) int{
		"send":   func(ctx context.Context, o *Options) int { return Send(ctx, o, a.URL, "hi", SendOptions{}) },
		"tasks":  func(ctx context.Context, o *Options) int { return Tasks(ctx, o, a.URL, TasksOptions{}) },
		"cancel": func(ctx context.Context, o *Options) int { return Cancel(ctx, o, a.URL, "t1") },
	} {
		runCommand(t, withCredentials, cmd).want(t, 1, "", "caddy a2a "+name+": "+why)
	}
	if n := len(other.headers()); n != 0 {
		t.Fatalf("the other origin got %d requests", n)
	}
	runCommand(t, nil, func(ctx context.Context, o *Options) int {
		return Send(ctx, o, a.URL, "hi", SendOptions{})
	}).want(t, 0, "ok\n", "")

	// The card check asks it without the credentials, and says so.
	other.forget()
	r := runCommand(t, withCredentials, func(ctx context.Context, o *Options) int { return Card(ctx, o, a.URL) })
	line := "\n  JSONRPC    1.0    " + other.URL + "/a2a  answers (without your credentials: another origin; --trust-origin " + other.URL + " sends them)\n"
	if r.code != 0 || !strings.Contains(r.out, line) {
		t.Errorf("card: exit %d, want a line %q in\n%s%s", r.code, line, r.out, r.err)
	}
	wantCredentials(t, "the other origin, probed", other.headers(), false)
}

// TestTrustOrigin: --trust-origin sends the credentials to the origin it
// names, written any way a URL of it may be.
func TestTrustOrigin(t *testing.T) {
	other := newFakeAgent(t, fakeCard("Other", "d", "S"), map[string]http.HandlerFunc{"SendMessage": jsonAnswer(completed)})
	a := newFakeAgent(t, foreignCard(other), nil)
	trust := func(origin string) func(*Options) {
		return func(o *Options) {
			withCredentials(o)
			if err := o.TrustOrigin(origin); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, origin := range []string{other.URL, strings.ToUpper(other.URL) + "/"} {
		other.forget()
		runCommand(t, trust(origin), func(ctx context.Context, o *Options) int {
			return Send(ctx, o, a.URL, "hi", SendOptions{})
		}).want(t, 0, "ok\n", "")
		wantCredentials(t, "the trusted origin", other.headers(), true)
	}
	// One trusted origin is not another.
	runCommand(t, trust("http://127.0.0.1:1"), func(ctx context.Context, o *Options) int {
		return Cancel(ctx, o, a.URL, "t1")
	}).want(t, 1, "", "caddy a2a cancel: the card at "+a.URL+"/.well-known/agent-card.json names interfaces only at another origin ("+
		other.URL+"): credentials (--user, -H) go there only if you trust it with --trust-origin "+other.URL+"\n")
}

func TestOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"http://h":                "http://h",
		"HTTPS://Agents.Example/": "https://agents.example",
		"https://h:443/a2a?x#f":   "https://h",
		"http://h:80":             "http://h",
		"http://h:8080":           "http://h:8080",
		"https://h:80":            "https://h:80",
		"http://[::1]:9/a":        "http://[::1]:9",
		"http://[::1]/a":          "http://[::1]",
		"h:443":                   "",
		"grpc://h:1":              "",
		"/a2a":                    "",
	} {
		if got := origin(in); got != want {
			t.Errorf("origin(%q) = %q, want %q", in, got, want)
		}
	}
	var o Options
	for _, ok := range []string{"https://h", "http://h:8080/", "HTTP://H:8080"} {
		if err := o.TrustOrigin(ok); err != nil {
			t.Errorf("TrustOrigin(%q): %v", ok, err)
		}
	}
	if want := []string{"https://h", "http://h:8080"}; strings.Join(o.TrustedOrigins, " ") != strings.Join(want, " ") {
		t.Errorf("trusted %q, want %q", o.TrustedOrigins, want)
	}
	for _, bad := range []string{"", "h", "h:443", "https://h/a2a", "https://u:p@h", "https://h?x", "ftp://h"} {
		err := o.TrustOrigin(bad)
		if want := `--trust-origin "` + bad + `": want an origin, http(s)://host[:port]`; err == nil || err.Error() != want {
			t.Errorf("TrustOrigin(%q) = %v, want %s", bad, err, want)
		}
	}
}

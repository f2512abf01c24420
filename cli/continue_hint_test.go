package cli

import (
	"context"
	"net/http"
	"testing"
)

// inputRequired is a SendMessage result: a task that asks a question.
const inputRequired = `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_INPUT_REQUIRED",` +
	`"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"Your name?"}]}}}}`

// TestContinueHint: the command printed to continue a task repeats the
// flags that say who the caller is, in the order given, with every
// secret masked (a password, an Authorization's credentials, cookie
// values, a key, token or secret field), and shell-quoted.
func TestContinueHint(t *testing.T) {
	a := newFakeAgent(t, fakeCard("A", "d", "S"), map[string]http.HandlerFunc{"SendMessage": jsonAnswer(inputRequired)})
	send := func(ctx context.Context, o *Options) int {
		return Send(ctx, o, a.URL, "hi", SendOptions{Continue: "caddy a2a send " + a.URL})
	}
	runCommand(t, func(o *Options) {
		if err := o.SetUser("alice:s3cret:too"); err != nil {
			t.Fatal(err)
		}
		for _, h := range []string{"Authorization: Bearer tok", "x-api-key: k", "Cookie: a=1; b=2", "X-Trace: it's 1",
			"X-Session-Token: t", "X-Client-Secret: s", "Proxy-Authorization: pw"} {
			if err := o.AddHeader(h); err != nil {
				t.Fatal(err)
			}
		}
		if err := o.TrustOrigin("https://Other.example:443/"); err != nil {
			t.Fatal(err)
		}
	}, send).want(t, 2, "Your name?\n", "task t1 is input-required; continue it with: caddy a2a send "+a.URL+
		` --user alice:… -H 'Authorization: Bearer …' -H 'x-api-key: …' -H 'Cookie: a=…; b=…' -H 'X-Trace: it'\''s 1'`+
		` -H 'X-Session-Token: …' -H 'X-Client-Secret: …' -H 'Proxy-Authorization: …' --trust-origin https://other.example`+
		" --task t1 <text>\n")

	// Without such flags the hint is as before.
	runCommand(t, nil, send).want(t, 2, "Your name?\n",
		"task t1 is input-required; continue it with: caddy a2a send "+a.URL+" --task t1 <text>\n")
}

package inspector

import (
	"strings"
	"testing"
)

// TestNoscript: without JavaScript (a text browser, scripts turned off)
// the page says what it needs and what to use instead, rather than show
// an empty shell; the line is styled by the page's own style sheet, as
// its Content-Security-Policy allows no inline style or script.
func TestNoscript(t *testing.T) {
	page := get(newTest(t, nil), "GET", "/a2a/inspector").Body.String()
	const want = "<body>\n<noscript><p class=\"noscript\">The inspector needs JavaScript: the page calls the agent from the browser. " +
		"Without it, <code>caddy a2a card</code> and <code>caddy a2a send</code> read the card and talk to the agent from a terminal.</p></noscript>\n<header>"
	if !strings.Contains(page, want) {
		t.Errorf("the page lacks, after <body>:\n%s\nit is:\n%s", want, page)
	}
	for _, inline := range []string{"style=", "<style", "<script>", " onload=", " onclick="} {
		if strings.Contains(page, inline) {
			t.Errorf("the page has %q, which its CSP refuses", inline)
		}
	}
	if css := get(newTest(t, nil), "GET", "/a2a/inspector/inspector.css").Body.String(); !strings.Contains(css, "\n.noscript {") {
		t.Error("the style sheet does not style the noscript line")
	}
}

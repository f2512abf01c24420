package upstream

import (
	"testing"
	"time"
)

// The timeout is named as the Caddyfile writes it, and the agent's URL
// without what may hold a credential.
func TestTimeoutErrorText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Minute:                  "1m",
		time.Hour:                    "1h",
		90 * time.Second:             "1m30s",
		time.Hour + 30*time.Minute:   "1h30m",
		1500 * time.Millisecond:      "1.5s",
		250 * time.Millisecond:       "250ms",
		2*time.Hour + 30*time.Second: "2h0m30s",
		5 * time.Minute:              "5m",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
	e := &TimeoutError{URL: LogURL("http://user:secret@127.0.0.1:9000/agent?key=secret#x"), Timeout: time.Minute}
	if want := "the agent at http://127.0.0.1:9000/agent did not finish within `timeout 1m`"; e.Error() != want {
		t.Fatalf("%q, want %q", e, want)
	}
}

package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// TimeoutError is a run that outlived its upstream's timeout setting. Its
// text names the setting and the agent, for the operator reading the log:
// a bare "context deadline exceeded" says neither what to change nor
// where. It is a context.DeadlineExceeded to errors.Is.
type TimeoutError struct {
	// URL is the agent's address (LogURL).
	URL string
	// Timeout is the run's bound, as the timeout setting gave it.
	Timeout time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("the agent at %s did not finish within `timeout %s`", e.URL, FormatDuration(e.Timeout))
}

// Unwrap keeps the error a deadline to errors.Is.
func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

// WithRunTimeout is context.WithTimeout for a run at the agent at rawURL:
// its cause, once the timeout has passed, is a *TimeoutError, which
// RunError then reports instead of the deadline. A deadline of the
// parent context is not the setting's doing and keeps its own error.
func WithRunTimeout(ctx context.Context, timeout time.Duration, rawURL string) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, timeout, &TimeoutError{URL: LogURL(rawURL), Timeout: timeout})
}

// RunError is err as a run reports it: an error the run's own timeout
// caused (ctx from WithRunTimeout) is that *TimeoutError, whatever the
// transport wrapped it in or however a stream's read was ended (a
// deadline, or a cancel that followed it); any other error is err.
func RunError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if te, ok := errors.AsType[*TimeoutError](err); ok {
		return te
	}
	te, ok := errors.AsType[*TimeoutError](context.Cause(ctx))
	if ok && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		return te
	}
	return err
}

// LogURL is rawURL as a log may show it: scheme, host and path, without
// the user info or query, either of which may hold a credential.
func LogURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(an unparsable URL)"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}).String()
}

// FormatDuration writes d as a Caddyfile would: 1m, not 1m0s.
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

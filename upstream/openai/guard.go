package openaiagent

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// lineGuard is a RoundTripper whose answers break off at a line longer
// than max bytes: the bound of one SSE line from the model server, where
// the SDK's own reader would buffer up to 32MiB.
type lineGuard struct {
	next http.RoundTripper
	max  int
}

func (g lineGuard) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := g.next.RoundTrip(r)
	if err == nil && g.max > 0 {
		resp.Body = &lineLimit{rc: resp.Body, max: g.max}
	}
	return resp, err
}

func transportOf(c *http.Client) http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}

// lineLimit fails a read once a line exceeds max bytes.
type lineLimit struct {
	rc   io.ReadCloser
	max  int
	line int
}

func (l *lineLimit) Read(p []byte) (int, error) {
	n, err := l.rc.Read(p)
	for _, b := range p[:n] {
		if b == '\n' {
			l.line = 0
			continue
		}
		if l.line++; l.line > l.max {
			return 0, errors.New("a line of the model server's answer exceeds " + strconv.Itoa(l.max) + " bytes (max_event_bytes)")
		}
	}
	return n, err
}

func (l *lineLimit) Close() error { return l.rc.Close() }

// redact replaces key in s.
func redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}

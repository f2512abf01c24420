package push

import (
	"net/http"
	"time"
)

// NewClient returns the HTTP client deliveries go out on: every
// connection dialled through g, no proxy from the environment (a proxy
// would make the guard check the proxy, not the receiver), and redirects
// not followed (a 3xx is the receiver's answer, not a new place to go).
func NewClient(g *Guard) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           g.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          100,
			MaxIdleConnsPerHost:   32,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

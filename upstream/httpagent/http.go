// Package httpagent is the http kind of upstream: the agent contract the
// documentation describes (docs/contract.md), one POST per run
// answered with a plain body or an NDJSON/SSE stream of event objects,
// each held to the agent-output rules of package upstream.
package httpagent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// Defaults of Config: the upstream package's.
const (
	DefaultTimeout       = upstream.DefaultTimeout
	DefaultMaxEventBytes = upstream.DefaultMaxEventBytes
	DefaultMaxBodyBytes  = upstream.DefaultMaxBodyBytes
)

// DefaultMaxResponseHeaderBytes bounds the response headers of an answer
// (with any 1xx answers before it) on the client New builds when
// none is given. net/http would read up to 10 MiB of them for every run,
// and an agent's answer needs a few hundred bytes.
const DefaultMaxResponseHeaderBytes = 64 << 10

// Config configures an Agent.
type Config struct {
	// URL is where runs are POSTed (http or https).
	URL string
	// HTTPConfig: a nil Client builds one with its own transport (no
	// redirects followed, no transparent compression, which would buffer
	// streams).
	upstream.HTTPConfig
}

// Agent is the upstream.Agent that speaks the HTTP agent contract.
type Agent struct {
	cfg    Config
	client *http.Client
	host   string
	rules  *upstream.Rules
}

var _ upstream.Agent = (*Agent)(nil)

// New checks cfg, applies its defaults and returns the agent.
func New(cfg Config) (*Agent, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("upstream: bad url: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("upstream: url %q is not an absolute http(s) URL", cfg.URL)
	}
	if err := cfg.Fill(); err != nil {
		return nil, err
	}
	a := &Agent{cfg: cfg, client: cfg.Client, rules: cfg.Rules()}
	if a.client == nil {
		a.client = defaultClient()
	}
	if h := cfg.Headers.Get("Host"); h != "" {
		a.host = h
	}
	return a, nil
}

func defaultClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy: http.ProxyFromEnvironment,
			DialContext: (&net.Dialer{
				Timeout:   10 * time.Second,
				KeepAlive: 30 * time.Second,
			}).DialContext,
			ForceAttemptHTTP2:      true,
			MaxIdleConns:           100,
			MaxIdleConnsPerHost:    32,
			IdleConnTimeout:        90 * time.Second,
			TLSHandshakeTimeout:    10 * time.Second,
			ExpectContinueTimeout:  time.Second,
			DisableCompression:     true,
			MaxResponseHeaderBytes: DefaultMaxResponseHeaderBytes,
		},
		// A redirect of a POST is a misconfigured upstream, not something
		// to follow (a 301/302 would even turn it into a GET).
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// StatusError is a non-2xx answer of the agent. Its text (with the start
// of the body) is for the log only.
type StatusError struct {
	// URL is where the answer came from (upstream.LogURL): a mount's log
	// may hold several agents' failures.
	URL        string
	StatusCode int
	// Body is the start of the response body (at most 512 bytes).
	Body string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("upstream: the agent at %s answered %d %s: %q", e.URL, e.StatusCode, http.StatusText(e.StatusCode), e.Body)
}

// Run POSTs the run to the agent and returns its answer as a Stream. A
// plain answer is read whole before Run returns; an event stream is read as
// Next is called. Errors (refused connection, timeout, non-2xx, a bad
// answer) are for the log; the caller shows a generic message.
func (a *Agent) Run(ctx context.Context, req *upstream.RunRequest) (upstream.Stream, error) {
	body, err := appendRequestBody(make([]byte, 0, sizeHint(req)), req)
	if err != nil {
		return nil, err
	}
	if a.cfg.RequestContext != nil {
		ctx = a.cfg.RequestContext(ctx)
	}
	ctx, cancel := upstream.WithRunTimeout(ctx, a.cfg.Timeout, a.cfg.URL)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, a.cfg.URL, bytes.NewReader(body))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("upstream: %w", err)
	}
	for _, h := range []http.Header{a.cfg.Headers, req.Headers} {
		for k, vs := range h {
			hreq.Header[k] = append([]string(nil), vs...)
		}
	}
	hreq.Header.Del("Host")
	if a.host != "" {
		hreq.Host = a.host
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/x-ndjson, text/event-stream, application/json, text/plain")

	resp, err := a.client.Do(hreq)
	if err != nil {
		cancel()
		return nil, upstream.RunError(ctx, fmt.Errorf("upstream: %w", err))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		cancel()
		return nil, &StatusError{URL: upstream.LogURL(a.cfg.URL), StatusCode: resp.StatusCode, Body: string(snippet)}
	}
	if c := unaskedEncoding(resp.Header); c != "" {
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("%w: the answer has Content-Encoding %q, which the module did not ask for and cannot read", upstream.ErrBadOutput, c)
	}
	direct, err := directAnswer(resp.Header)
	if err != nil {
		resp.Body.Close()
		cancel()
		return nil, err
	}
	mt := plainMediaType(resp.Header)
	switch mt {
	case "application/x-ndjson", "application/jsonl", "text/event-stream":
		return &eventStream{
			ctx:    ctx,
			p:      newEventParser(resp.Body, mt == "text/event-stream", a.cfg.MaxEventBytes, a.rules),
			body:   resp.Body,
			cancel: cancel,
			direct: direct,
		}, nil
	}
	defer cancel()
	defer resp.Body.Close()
	events, err := readPlain(resp, mt, a.cfg.MaxBodyBytes, a.rules, direct)
	if err != nil {
		return nil, upstream.RunError(ctx, err)
	}
	return &plainStream{events: events}, nil
}

// plainMediaType is the media type of an answer, without parameters;
// bytes of no (readable) type are application/octet-stream.
func plainMediaType(h http.Header) string {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		return "application/octet-stream"
	}
	return mt
}

// errBodyTooLarge: a plain answer over MaxBodyBytes.
var errBodyTooLarge = errors.New("upstream: plain answer over the size limit")

// unaskedEncoding returns the first content coding of h other than
// identity. The module asks for none: the transport it is given either
// asks for none, or asks for gzip itself and then decodes the answer and
// removes the header. So any coding left is one nobody here can read, and
// the body is not what its media type says (stored as it is, a gzip
// stream would become a text part of garbage).
func unaskedEncoding(h http.Header) string {
	for _, v := range h.Values("Content-Encoding") {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return c
			}
		}
	}
	return ""
}

// isJSONType reports whether mt is JSON: application/json or a +json type.
func isJSONType(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

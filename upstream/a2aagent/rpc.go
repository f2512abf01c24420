package a2aagent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// StatusError is a non-2xx HTTP answer of the agent (for the log only).
type StatusError struct {
	// URL is the interface the answer came from (upstream.LogURL).
	URL        string
	StatusCode int
	// Body is the start of the body (at most 512 bytes).
	Body string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("upstream: the agent at %s answered %d %s: %q", e.URL, e.StatusCode, http.StatusText(e.StatusCode), e.Body)
}

// requestID is the JSON-RPC id of every request: each is alone on its
// HTTP request, so the answer's id only has to be this one.
const requestID = 1

// post sends one JSON-RPC request of method m to the interface and returns
// the answer, whose status is 2xx. accept is the Accept header.
func (a *Agent) post(ctx context.Context, in protocol.Interface, c protocol.Codec, m protocol.Method, params []byte,
	hdr http.Header, accept string, extensions []string) (*http.Response, error) {
	body := protocol.AppendRequest(make([]byte, 0, len(params)+64), requestID, c.MethodName(m), params)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.URL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("upstream: %w", err)
	}
	for _, h := range []http.Header{a.cfg.Headers, hdr} {
		for k, vs := range h {
			req.Header[k] = append([]string(nil), vs...)
		}
	}
	if h := req.Header.Get("Host"); h != "" {
		req.Host = h
		req.Header.Del("Host")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	// Always, in both versions: a 1.0 server that also serves 0.3 picks
	// the version by it, and a 0.3 one ignores it.
	req.Header.Set("A2A-Version", c.Version().String())
	if len(extensions) > 0 {
		name := "A2A-Extensions"
		if c.Version() == protocol.V03 {
			name = "X-A2A-Extensions"
		}
		req.Header.Set(name, strings.Join(extensions, ", "))
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("upstream: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, &StatusError{URL: upstream.LogURL(in.URL), StatusCode: resp.StatusCode, Body: string(snippet)}
	}
	return resp, nil
}

// call sends a request and reads its JSON answer: the result, or the
// agent's error as a *upstream.Refusal when its code is one that reaches
// the caller (anything else is a plain error, for the log).
func (a *Agent) call(ctx context.Context, in protocol.Interface, c protocol.Codec, m protocol.Method, params []byte, hdr http.Header) (json.RawMessage, error) {
	resp, err := a.post(ctx, in, c, m, params, hdr, "application/json", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := a.readBody(resp)
	if err != nil {
		return nil, err
	}
	return a.result(body)
}

// readBody reads a JSON answer, at most MaxBodyBytes of it.
func (a *Agent) readBody(resp *http.Response) ([]byte, error) {
	if mt := mediaType(resp.Header); mt != "application/json" && mt != "application/a2a+json" {
		return nil, fmt.Errorf("%w: the agent answered Content-Type %q where JSON was expected", upstream.ErrBadOutput, resp.Header.Get("Content-Type"))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, a.cfg.MaxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("upstream: %w", err)
	}
	if int64(len(body)) > a.cfg.MaxBodyBytes {
		return nil, fmt.Errorf("%w: the agent's answer is over %d bytes", upstream.ErrBadOutput, a.cfg.MaxBodyBytes)
	}
	return body, nil
}

// result reads one JSON-RPC response: its result, or its error.
func (a *Agent) result(body []byte) (json.RawMessage, error) {
	id, result, rpcErr, err := protocol.DecodeResponseLimit(body, a.rules.MaxDepth())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", upstream.ErrBadOutput, err)
	}
	if rpcErr != nil {
		return nil, agentError(rpcErr)
	}
	if id != requestID {
		return nil, fmt.Errorf("%w: the answer's id is %d, not the request's", upstream.ErrBadOutput, id)
	}
	return result, nil
}

// agentError is the run's error for an error the agent answered: a
// refusal the caller gets when its code passes through.
func agentError(e *protocol.Error) error {
	if upstream.PassesThrough(e.Code) {
		return &upstream.Refusal{Code: e.Code, Detail: e.Message}
	}
	return fmt.Errorf("upstream: the agent answered error %d: %s", e.Code, e.Message)
}

func mediaType(h http.Header) string {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return strings.ToLower(mt)
}

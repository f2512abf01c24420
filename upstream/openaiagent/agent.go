// Package openaiagent is the openai upstream kind: an OpenAI-compatible
// chat completions server (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp's
// server, LiteLLM) as the agent. A task's context becomes the chat, the
// model's answer streams in as the task's artifact, and every task ends
// completed; the next task of the context continues the conversation.
//
// It posts the request with net/http over the transport the module gives
// it and reads the answer's SSE stream with upstream/frames, decoding each
// chunk into the few fields the kind reads (chunk, below). Nothing comes
// from the environment (no OPENAI_API_KEY, no OPENAI_BASE_URL): what
// reaches the model server is what the config says.
//
// It used the OpenAI Go SDK (github.com/openai/openai-go/v3) until the
// build was measured (bench/build.sh; BENCHMARKS.md, "Building: memory,
// time and size"): the SDK's root package alone, 127,000 lines of
// generated Go for the whole API, took 2.8 GiB of memory and 115 s to
// compile (its responses package 0.8 GiB and 37 s more), and the SDK was
// 28 MiB (29 MB) of the binary, for one streaming call whose wire fits in
// two structs. A smaller client, github.com/sashabaranov/go-openai v1.43.0
// (6,300 lines), compiled in 90 MiB and added 0.5 MB; it was not taken
// either: its stream reader buffers a line without bound and takes each
// data line for a whole chunk (an event of several data lines breaks it),
// so the kind would have kept a guard and quirks of its own, while
// upstream/frames already reads SSE with the bound the http kind's
// streams have (HTTPConfig.MaxEventBytes, 1 MiB by default), for nothing
// more in the build.
package openaiagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
	"github.com/caddy-a2a/caddy-a2a/upstream/frames"
)

// DefaultHistory is how many of a context's earlier messages a run sends
// the model by default.
const DefaultHistory = 50

// Config is the openai kind's settings.
type Config struct {
	upstream.HTTPConfig
	// BaseURL is the API's base, such as https://api.openai.com/v1 (the
	// chat completions endpoint is BaseURL + /chat/completions). Required.
	BaseURL string
	// Model names the model. Required.
	Model string
	// APIKey is sent as Authorization: Bearer; none when empty.
	APIKey string
	// System is the system prompt; none when empty.
	System string
	// Temperature and MaxTokens are sent when set.
	Temperature *float64
	MaxTokens   int64
	// History is how many of the context's earlier messages a run sends
	// (default DefaultHistory).
	History int
}

// Agent is the model server as an upstream.Agent.
type Agent struct {
	cfg    Config
	client *http.Client
	// url is the chat completions endpoint: BaseURL, a slash, then
	// chat/completions, resolved as a relative reference (so BaseURL's
	// query is not sent).
	url string
	// host is the Host header of Headers, which sets the request's Host.
	host string
}

// New checks cfg and returns the agent.
func New(cfg Config) (*Agent, error) {
	if cfg.BaseURL == "" {
		return nil, errors.New("openai: a base URL is required")
	}
	if cfg.Model == "" {
		return nil, errors.New("openai: model is required")
	}
	base, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("openai: bad base URL: %w", err)
	}
	if base.Path != "" && !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	endpoint, err := base.Parse("chat/completions")
	if err != nil {
		return nil, fmt.Errorf("openai: bad base URL: %w", err)
	}
	if err := cfg.HTTPConfig.Fill(); err != nil {
		return nil, err
	}
	if cfg.History <= 0 {
		cfg.History = DefaultHistory
	}
	a := &Agent{cfg: cfg, client: cfg.Client, url: endpoint.String(), host: cfg.Headers.Get("Host")}
	if a.client == nil {
		a.client = &http.Client{}
	}
	return a, nil
}

// ContextMessages implements upstream.ContextReader: the model answers
// from the context's conversation.
func (a *Agent) ContextMessages() int { return a.cfg.History }

// request is the chat completions request body.
type request struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	Stream      bool          `json:"stream"`
	Temperature *float64      `json:"temperature,omitempty"`
	MaxTokens   int64         `json:"max_tokens,omitempty"`
}

// Run sends the conversation with stream: true and yields the answer's
// deltas as they arrive.
func (a *Agent) Run(ctx context.Context, req *upstream.RunRequest) (upstream.Stream, error) {
	msgs, err := a.messages(req)
	if err != nil {
		return nil, err
	}
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false) // a prompt's <, > and & go as they are
	if err := enc.Encode(request{Model: a.cfg.Model, Messages: msgs, Stream: true,
		Temperature: a.cfg.Temperature, MaxTokens: max(a.cfg.MaxTokens, 0)}); err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	runCtx, cancel := upstream.WithRunTimeout(ctx, a.cfg.Timeout, a.endpoint())
	reqCtx := runCtx
	if a.cfg.RequestContext != nil {
		reqCtx = a.cfg.RequestContext(runCtx)
	}
	hreq, err := http.NewRequestWithContext(reqCtx, http.MethodPost, a.url, bytes.NewReader(bytes.TrimSuffix(body.Bytes(), []byte("\n"))))
	if err != nil {
		cancel()
		return nil, a.failure(err)
	}
	a.setHeaders(hreq.Header, req.Headers)
	hreq.Header.Del("Host")
	if a.host != "" {
		hreq.Host = a.host
	}
	resp, err := a.client.Do(hreq)
	if err != nil {
		cancel()
		return nil, a.failure(upstream.RunError(runCtx, err))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		err := a.statusError(resp)
		resp.Body.Close()
		cancel()
		return nil, a.failure(upstream.RunError(runCtx, err))
	}
	return &stream{a: a, body: resp.Body, r: frames.NewReader(resp.Body, true, a.cfg.MaxEventBytes),
		ctx: runCtx, cancel: cancel}, nil
}

// setHeaders fills h: the config's headers, then the run's, then the key
// as a bearer token unless one of them is an Authorization header (which
// then goes as given), then the content type. Accept is the chat API's
// (application/json, also for a stream, as OpenAI's own clients send).
func (a *Agent) setHeaders(h, run http.Header) {
	for _, from := range []http.Header{a.cfg.Headers, run} {
		for k, vs := range from {
			for _, v := range vs {
				h.Add(k, v)
			}
		}
	}
	if a.cfg.APIKey != "" && len(h.Values("Authorization")) == 0 {
		h.Set("Authorization", "Bearer "+a.cfg.APIKey)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
}

// apiError is a model server's answer of a status other than 2xx, or
// an error object in its stream.
type apiError struct {
	status int    // 0 in a stream
	body   string // the answer's error member, as sent
}

func (e *apiError) Error() string { return e.body }

// maxErrorBody bounds how much of an error answer is read: its error
// object is for the log.
const maxErrorBody = 64 << 10

// statusError reads a non-2xx answer: the chat API's body is an object
// whose error member says what went wrong, which is what the log shows;
// any other body is shown as it starts.
func (a *Agent) statusError(resp *http.Response) error {
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		return err
	}
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil && len(e.Error) > 0 {
		return &apiError{status: resp.StatusCode, body: string(e.Error)}
	}
	return &apiError{status: resp.StatusCode, body: strconv.Quote(string(b[:min(len(b), 512)]))}
}

// stream is one run's answer. It releases the request (cancels it,
// closes the body, gives the reader's buffer back) once the answer ended
// or broke, and at Close.
type stream struct {
	a        *Agent
	body     io.ReadCloser
	r        *frames.Reader
	ctx      context.Context // the run's, whose timeout an error may be
	cancel   context.CancelFunc
	released bool
	// finish is the choice's finish_reason once the server gave it; done
	// is set once the end was yielded. toolCall: a delta held a tool or
	// function call, which the model may make even when it ends with
	// stop. err: the stream broke, which every later Next says again.
	finish   string
	toolCall bool
	done     bool
	err      error
}

// chunk is what a chat.completion.chunk holds that the kind reads: the
// first choice's delta text, whether it calls a tool, and its
// finish_reason; or, instead, an error object.
type chunk struct {
	Choices []struct {
		Index        int    `json:"index"`
		FinishReason string `json:"finish_reason"`
		Delta        struct {
			Content      string            `json:"content"`
			ToolCalls    []json.RawMessage `json:"tool_calls"`
			FunctionCall struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function_call"`
		} `json:"delta"`
	} `json:"choices"`
	Error json.RawMessage `json:"error"`
}

// Next yields each delta's text as it comes, then for a cut-off answer
// (a length limit, a content filter, a call of a tool) the completed
// status saying why.
func (st *stream) Next() (upstream.Event, error) {
	if st.err != nil {
		return upstream.Event{}, st.err
	}
	if st.done {
		return upstream.Event{}, io.EOF
	}
	for !st.released {
		data, err := st.r.Next()
		if err == io.EOF || err == frames.ErrTruncated {
			// A last event without its blank line is dropped, as SSE
			// clients do; a cut stream shows as a missing finish_reason.
			st.release()
			break
		}
		if err == frames.ErrTooLarge {
			err = fmt.Errorf("an event of the model server's answer exceeds %d bytes (max_event_bytes)", st.a.cfg.MaxEventBytes)
		}
		if err != nil {
			return st.fail(upstream.RunError(st.ctx, err))
		}
		if bytes.HasPrefix(data, []byte("[DONE]")) {
			st.release()
			break
		}
		var c chunk
		if err := json.Unmarshal(data, &c); err != nil {
			// A member of another type than the API's is skipped, as
			// the SDKs do; only JSON that does not parse breaks the run.
			if _, ok := errors.AsType[*json.UnmarshalTypeError](err); !ok {
				return st.fail(err)
			}
		}
		if len(c.Error) > 0 {
			return st.fail(&apiError{body: errorText(c.Error)})
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 {
				continue // one answer: n is never asked for
			}
			if ch.FinishReason != "" {
				st.finish = ch.FinishReason
			}
			if len(ch.Delta.ToolCalls) > 0 || ch.Delta.FunctionCall.Name != "" || ch.Delta.FunctionCall.Arguments != "" {
				st.toolCall = true
			}
			if ch.Delta.Content != "" {
				return upstream.Event{Kind: upstream.EventText, Text: ch.Delta.Content}, nil
			}
		}
	}
	st.done = true
	if st.finish == "" {
		// A stream that ends without a finish_reason (or [DONE]) was
		// cut: the answer may be incomplete.
		return upstream.Event{}, errors.New("openai: the stream ended without a finish_reason")
	}
	if why := cutOff(st.finish, st.toolCall); why != "" {
		return upstream.Event{Kind: upstream.EventStatus, State: protocol.StateCompleted,
			Parts: []protocol.Part{{Kind: protocol.PartText, Text: why}}}, nil
	}
	return upstream.Event{}, io.EOF
}

// fail ends the stream with err, as the log shows it.
func (st *stream) fail(err error) (upstream.Event, error) {
	st.release()
	st.err = st.a.failure(err)
	return upstream.Event{}, st.err
}

// release aborts the request and gives its buffers back.
func (st *stream) release() {
	if st.released {
		return
	}
	st.released = true
	st.cancel()
	st.body.Close()
	st.r.Release()
}

// errorText is a stream's error member as text: a string's value, or the
// JSON as sent.
func errorText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// cutOff is the status message of an answer the server stopped early. A
// call of a tool is one: the kind offers the model no tools and runs none
// (a server may hold tools of its own, or the model call one unasked), so
// the turn ends with what the model said before it, and the caller is
// told that is all, as for a length limit. The call itself is not
// relayed: its name and arguments are the model's to a tool, not an
// answer.
func cutOff(finish string, toolCall bool) string {
	switch {
	case finish == "length":
		return "The answer was cut off at the model's length limit (finish_reason length)."
	case finish == "content_filter":
		return "The answer was cut off by the model server's content filter (finish_reason content_filter)."
	case finish == "tool_calls" || finish == "function_call":
		return "The answer was cut off where the model asked to call a tool, which this agent does not run (finish_reason " + finish + ")."
	case toolCall:
		// finish_reason is the server's word, not written here.
		return "The answer was cut off where the model asked to call a tool, which this agent does not run."
	}
	return ""
}

// Close aborts the request if it is still going.
func (st *stream) Close() error {
	st.release()
	return nil
}

// failure is the run's error for err: the server's status and error body
// with the key redacted, which the handler logs (the caller sees the
// generic message).
func (a *Agent) failure(err error) error {
	if te, ok := errors.AsType[*upstream.TimeoutError](err); ok {
		return te // its text holds no key: the URL is upstream.LogURL's
	}
	if ae, ok := errors.AsType[*apiError](err); ok {
		body := redact(ae.body, a.cfg.APIKey)
		if ae.status == 0 {
			return fmt.Errorf("openai: received error while streaming: %s", body)
		}
		return fmt.Errorf("openai: the model server at %s answered HTTP %d: %s", upstream.LogURL(a.endpoint()), ae.status, body)
	}
	return fmt.Errorf("openai: %s", redact(err.Error(), a.cfg.APIKey))
}

// endpoint is the chat completions URL, for the log.
func (a *Agent) endpoint() string {
	return strings.TrimSuffix(a.cfg.BaseURL, "/") + "/chat/completions"
}

// redact replaces key in s.
func redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}

// Package openaiagent is the openai upstream kind: an OpenAI-compatible
// chat completions server (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp's
// server, LiteLLM) as the agent. A task's context becomes the chat, the
// model's answer streams in as the task's artifact, and every task ends
// completed; the next task of the context continues the conversation.
//
// It calls the server with the OpenAI Go SDK (github.com/openai/openai-go)
// over the transport the module gives it, never reading the SDK's
// environment variables: what reaches the model server is what the config
// says.
package openaiagent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
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
	cfg Config
	svc openai.ChatCompletionService
}

// New checks cfg and returns the agent.
func New(cfg Config) (*Agent, error) {
	if cfg.BaseURL == "" {
		return nil, errors.New("openai: a base URL is required")
	}
	if cfg.Model == "" {
		return nil, errors.New("openai: model is required")
	}
	if err := cfg.HTTPConfig.Fill(); err != nil {
		return nil, err
	}
	if cfg.History <= 0 {
		cfg.History = DefaultHistory
	}
	client := cfg.Client
	if client == nil {
		client = &http.Client{}
	}
	// The SDK's scanner takes SSE lines of up to 32MiB; a model server's
	// line is held to max_event_bytes, as the http kind's events are.
	guarded := *client
	guarded.Transport = lineGuard{next: transportOf(client), max: cfg.MaxEventBytes}
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithHTTPClient(&guarded),
		// A failed run fails its task; a retry would send the
		// conversation again behind the caller's back.
		option.WithMaxRetries(0),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	for name, values := range cfg.Headers {
		for _, v := range values {
			opts = append(opts, option.WithHeaderAdd(name, v))
		}
	}
	// NewChatCompletionService, not NewClient: the client reads
	// OPENAI_API_KEY, OPENAI_BASE_URL and more from the environment.
	return &Agent{cfg: cfg, svc: openai.NewChatCompletionService(opts...)}, nil
}

// ContextMessages implements upstream.ContextReader: the model answers
// from the context's conversation.
func (a *Agent) ContextMessages() int { return a.cfg.History }

// Run sends the conversation with stream: true and yields the answer's
// deltas as they arrive.
func (a *Agent) Run(ctx context.Context, req *upstream.RunRequest) (upstream.Stream, error) {
	msgs, err := a.messages(req)
	if err != nil {
		return nil, err
	}
	params := openai.ChatCompletionNewParams{Model: a.cfg.Model, Messages: msgs}
	if a.cfg.Temperature != nil {
		params.Temperature = openai.Float(*a.cfg.Temperature)
	}
	if a.cfg.MaxTokens > 0 {
		params.MaxTokens = openai.Int(a.cfg.MaxTokens)
	}
	runCtx, cancel := upstream.WithRunTimeout(ctx, a.cfg.Timeout, a.endpoint())
	reqCtx := runCtx
	if a.cfg.RequestContext != nil {
		reqCtx = a.cfg.RequestContext(runCtx)
	}
	var opts []option.RequestOption
	for name, values := range req.Headers {
		for _, v := range values {
			opts = append(opts, option.WithHeaderAdd(name, v))
		}
	}
	s := a.svc.NewStreaming(reqCtx, params, opts...)
	if err := s.Err(); err != nil {
		cancel()
		return nil, a.failure(upstream.RunError(runCtx, err))
	}
	return &stream{a: a, s: s, ctx: runCtx, cancel: cancel, start: time.Now()}, nil
}

// stream is one run's answer.
type stream struct {
	a      *Agent
	s      *ssestream.Stream[openai.ChatCompletionChunk]
	ctx    context.Context // the run's, whose timeout an error may be
	cancel context.CancelFunc
	start  time.Time
	// finish is the choice's finish_reason once the server gave it; done
	// is set once the end was yielded. toolCall: a delta held a tool or
	// function call, which the model may make even when it ends with
	// stop.
	finish   string
	toolCall bool
	done     bool
}

// Next yields each delta's text as it comes, then for a cut-off answer
// (a length limit, a content filter, a call of a tool) the completed
// status saying why.
func (st *stream) Next() (upstream.Event, error) {
	if st.done {
		return upstream.Event{}, io.EOF
	}
	for st.s.Next() {
		chunk := st.s.Current()
		for _, c := range chunk.Choices {
			if c.Index != 0 {
				continue // one answer: n is never asked for
			}
			if c.FinishReason != "" {
				st.finish = c.FinishReason
			}
			if len(c.Delta.ToolCalls) > 0 || c.Delta.FunctionCall.Name != "" || c.Delta.FunctionCall.Arguments != "" {
				st.toolCall = true
			}
			if c.Delta.Content != "" {
				return upstream.Event{Kind: upstream.EventText, Text: c.Delta.Content}, nil
			}
		}
	}
	if err := st.s.Err(); err != nil {
		return upstream.Event{}, st.a.failure(upstream.RunError(st.ctx, err))
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
	st.cancel()
	return st.s.Close()
}

// failure is the run's error for err: the server's status and error body
// with the key redacted, which the handler logs (the caller sees the
// generic message).
func (a *Agent) failure(err error) error {
	if te, ok := errors.AsType[*upstream.TimeoutError](err); ok {
		return te // its text holds no key: the URL is upstream.LogURL's
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		body := redact(apiErr.RawJSON(), a.cfg.APIKey)
		return fmt.Errorf("openai: the model server at %s answered HTTP %d: %s", upstream.LogURL(a.endpoint()), apiErr.StatusCode, body)
	}
	return fmt.Errorf("openai: %s", redact(err.Error(), a.cfg.APIKey))
}

// endpoint is the chat completions URL the SDK posts to, for the log.
func (a *Agent) endpoint() string {
	return strings.TrimSuffix(a.cfg.BaseURL, "/") + "/chat/completions"
}

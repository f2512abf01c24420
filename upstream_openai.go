package caddya2a

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/upstream"
	"github.com/caddy-a2a/caddy-a2a/upstream/openaiagent"
)

func init() {
	caddy.RegisterModule(OpenAIUpstream{})
}

// Bounds of the openai kind's settings.
const (
	maxOpenAIHistory     = 1000
	maxOpenAITemperature = 2
	maxSystemPromptBytes = 64 << 10
)

// openAIInputModes and openAIOutputModes are the card's modes of a mount
// over the openai kind when input_modes and output_modes are not set:
// what the chat completions API takes, and the text it answers.
var (
	openAIInputModes  = []string{"text/plain", "application/json", "image/*"}
	openAIOutputModes = []string{"text/plain"}
)

// OpenAIUpstream is the upstream module a2a.upstreams.openai: an
// OpenAI-compatible chat completions server (OpenAI, Azure OpenAI, vLLM,
// Ollama, llama.cpp's server, LiteLLM) as the agent, over the http kind's
// transport. URL is the API's base URL (https://api.openai.com/v1,
// http://127.0.0.1:11434/v1).
type OpenAIUpstream struct {
	HTTPUpstream

	// Model names the model. Required.
	Model string `json:"model,omitempty"`
	// APIKey is sent as a bearer token. Global placeholders such as
	// {env.OPENAI_API_KEY} are resolved at provision; one that resolves
	// to nothing is an error. Never logged. Default: none (a local server).
	APIKey string `json:"api_key,omitempty"`
	// System is the system prompt; SystemFile reads it from a file at
	// provision. At most one of them; up to 64KiB.
	System     string `json:"system,omitempty"`
	SystemFile string `json:"system_file,omitempty"`
	// Temperature (0 to 2) and MaxTokens are sent when set.
	Temperature *float64 `json:"temperature,omitempty"`
	MaxTokens   int64    `json:"max_tokens,omitempty"`
	// History is how many of the context's earlier messages (the caller's
	// own earlier tasks of the context) a run sends the model, from 1 to
	// 1000. Default: 50.
	History int `json:"history,omitempty"`

	apiKey, system string
}

// CaddyModule returns the Caddy module information.
func (OpenAIUpstream) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "a2a.upstreams.openai",
		New: func() caddy.Module { return new(OpenAIUpstream) },
	}
}

// Provision sets up the http kind's part and resolves the key and the
// system prompt.
func (u *OpenAIUpstream) Provision(ctx caddy.Context) error {
	if err := u.HTTPUpstream.Provision(ctx); err != nil {
		return err
	}
	globals := caddy.NewReplacer()
	key, err := resolveGlobal(globals, u.APIKey)
	if err != nil {
		return errors.New("api_key: " + err.Error())
	}
	if u.APIKey != "" && key == "" {
		return errors.New("api_key: resolves to nothing (is the environment variable set?)")
	}
	u.apiKey, u.system = key, u.System
	if u.SystemFile != "" {
		b, err := os.ReadFile(u.SystemFile)
		if err != nil {
			return fmt.Errorf("system_file: %w", err)
		}
		u.system = string(b)
	}
	return nil
}

// Validate checks the http kind's settings and the openai kind's own.
func (u *OpenAIUpstream) Validate() error {
	if err := u.HTTPUpstream.Validate(); err != nil {
		return err
	}
	if err := u.checkOwn(); err != nil {
		return err
	}
	if len(u.system) > maxSystemPromptBytes {
		return fmt.Errorf("system prompt: %d bytes, at most %d", len(u.system), maxSystemPromptBytes)
	}
	return nil
}

// checkOwn checks the settings the http kind does not have.
func (u *OpenAIUpstream) checkOwn() error {
	switch {
	case u.Model == "":
		return errors.New("model is required")
	case u.System != "" && u.SystemFile != "":
		return errors.New("system and system_file: give one")
	case u.Temperature != nil && (*u.Temperature < 0 || *u.Temperature > maxOpenAITemperature):
		return fmt.Errorf("temperature: want 0 to 2, got %v", *u.Temperature)
	case u.MaxTokens < 0:
		return errors.New("max_tokens must be positive")
	case u.History < 0 || u.History > maxOpenAIHistory:
		return fmt.Errorf("history: want 1 to %d messages, got %d", maxOpenAIHistory, u.History)
	}
	return nil
}

// NewAgent returns the model server as the agent.
func (u *OpenAIUpstream) NewAgent(opts AgentOptions) (upstream.Agent, error) {
	return openaiagent.New(openaiagent.Config{
		HTTPConfig: u.httpConfig(opts), BaseURL: u.target, Model: u.Model, APIKey: u.apiKey,
		System: u.system, Temperature: u.Temperature, MaxTokens: u.MaxTokens, History: u.History,
	})
}

// defaultInputModes implements mediaTypes.
func (u *OpenAIUpstream) defaultInputModes() []string { return openAIInputModes }

// defaultOutputModes implements mediaTypes.
func (u *OpenAIUpstream) defaultOutputModes() []string { return openAIOutputModes }

// checkInputModes implements mediaTypes: the chat API carries text (a
// text/* file's bytes go as text), JSON and images, nothing else.
func (u *OpenAIUpstream) checkInputModes(modes []string) error {
	for _, m := range modes {
		mt := protocol.BaseMediaType(m)
		if !strings.HasPrefix(mt, "text/") && !strings.HasPrefix(mt, "image/") && mt != "application/json" {
			return fmt.Errorf("%s: the openai upstream sends the model text, JSON and images only (text/*, application/json, image/*)", m)
		}
	}
	return nil
}

// openAIUpstreamKeys are the subdirectives of `upstream openai`.
var openAIUpstreamKeys = append(slices.Clone(upstreamKeys), "model", "api_key", "system", "system_file", "temperature", "max_tokens", "history")

// UnmarshalCaddyfile parses `upstream openai <base-url> { … }`:
//
//	upstream openai <base-url> {
//		model       <name>
//		api_key     <key>
//		system      <text> | system_file <path>
//		temperature <0-2>
//		max_tokens  <n>
//		history     <n>
//		timeout, header_up, max_response_header, transport   (as the http kind)
//	}
func (u *OpenAIUpstream) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return u.unmarshal(d, openAIUpstreamKeys, func(key string) (bool, error) {
		var err error
		switch key {
		case "model":
			u.Model, err = oneArg(d)
		case "api_key":
			u.APIKey, err = oneArg(d)
		case "system":
			u.System, err = oneArg(d)
		case "system_file":
			u.SystemFile, err = oneArg(d)
		case "temperature":
			var v string
			if v, err = oneArg(d); err == nil {
				f, perr := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if perr != nil {
					return true, d.Errf("temperature: want a number from 0 to 2, got %q", v)
				}
				u.Temperature = &f
			}
		case "max_tokens":
			var n int
			n, err = countArg(d)
			u.MaxTokens = int64(n)
		case "history":
			u.History, err = countArg(d)
		default:
			return false, nil
		}
		return true, err
	}, u.checkOwn)
}

// mediaTypes is an upstream module whose agent takes and makes only some
// media types: its defaults are the mount's input and output modes when
// input_modes and output_modes are not set, and input_modes may list no
// type it cannot take.
type mediaTypes interface {
	defaultInputModes() []string
	defaultOutputModes() []string
	checkInputModes(modes []string) error
}

// Interface guards.
var (
	_ UpstreamModule        = (*OpenAIUpstream)(nil)
	_ mediaTypes            = (*OpenAIUpstream)(nil)
	_ caddy.Provisioner     = (*OpenAIUpstream)(nil)
	_ caddy.Validator       = (*OpenAIUpstream)(nil)
	_ caddyfile.Unmarshaler = (*OpenAIUpstream)(nil)
)

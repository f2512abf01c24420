package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// HTTPConfig is what every kind that calls its agent over HTTP is
// configured with: the client, the run's bound, the headers and the
// bounds of the agent's answers.
type HTTPConfig struct {
	// Client sends the requests; its own Timeout should be 0: Timeout
	// bounds a run. Each kind says what nil means.
	Client *http.Client
	// Timeout bounds a whole run, streaming included (default 5m).
	Timeout time.Duration
	// Headers are added to every request, already resolved by the caller.
	// They cannot replace Content-Type or Accept; "Host" sets the
	// request's Host.
	Headers http.Header
	// MaxEventBytes bounds one event of a stream (an NDJSON line, an SSE
	// event; default 1MiB); a longer one breaks the stream.
	MaxEventBytes int
	// MaxBodyBytes bounds an answer read whole (default 16MiB).
	MaxBodyBytes int64
	// Limits are the limits of a caller's message parts (max_parts,
	// max_text_size, max_file_size, max_metadata_size). The agent's parts
	// are held to them too: each chunk, part and status message as the
	// agent sends it, the parts of each artifact, a plain answer's body.
	// Zero fields take protocol's defaults.
	Limits protocol.Limits
	// MaxJSONDepth bounds how deeply one event object, or a JSON answer,
	// nests arrays and objects: the max_json_depth a caller's body gets
	// (default protocol.DefaultMaxDepth).
	MaxJSONDepth int
	// RequestContext, if set, derives the context of every request to the
	// agent from the run's context. A run's context is not a server
	// request's (a run outlives the request that started it), and a
	// transport made for a proxy may read values from the context of the
	// request it sends; this is where they are given.
	RequestContext func(context.Context) context.Context
}

// Fill applies the defaults and checks what is set.
func (c *HTTPConfig) Fill() error {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxEventBytes <= 0 {
		c.MaxEventBytes = DefaultMaxEventBytes
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if err := c.Limits.Validate(); err != nil {
		return fmt.Errorf("upstream: %w", err)
	}
	if c.MaxJSONDepth < 0 {
		return errors.New("upstream: MaxJSONDepth must not be negative")
	}
	return nil
}

// Rules are the output rules of c's limits.
func (c *HTTPConfig) Rules() *Rules { return NewRules(c.Limits, c.MaxJSONDepth) }

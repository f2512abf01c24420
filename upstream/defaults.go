package upstream

import "time"

// The bounds every kind applies to a run and to what the agent answers,
// unless configured otherwise: written once here, taken by each kind.
const (
	// DefaultTimeout bounds a whole run, streaming included.
	DefaultTimeout = 5 * time.Minute
	// DefaultMaxEventBytes bounds one event of a stream (an NDJSON line,
	// an SSE event).
	DefaultMaxEventBytes = 1 << 20
	// DefaultMaxBodyBytes bounds an answer read whole.
	DefaultMaxBodyBytes = 16 << 20
)

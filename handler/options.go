package handler

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// Options configure a Service.
type Options struct {
	Store  store.Store
	Agent  upstream.Agent
	Runner *Runner
	// Versions lists the wire versions served; empty = both.
	Versions []protocol.Version
	// Streaming enables message/stream, SendStreamingMessage and subscribe.
	Streaming bool
	// InputModes lists the media types the agent accepts (the card's
	// defaultInputModes); empty accepts anything.
	InputModes []string
	// MaxHistory is how many messages a task keeps and re-sends to the
	// agent each turn, the oldest dropped first (0 = 100).
	MaxHistory int
	// MaxHistoryBytes bounds the same history in content bytes
	// (protocol's Size), the newest message always kept (0 = 8 MiB).
	MaxHistoryBytes int
	// MaxTaskOutput bounds what the agent's output held by one task
	// weighs in content bytes: artifacts and agent messages, over all its
	// turns (0 = 16 MiB). A run that would go over it ends the task
	// failed, saying which limit it hit; what came before is kept. A
	// message reply is bounded the same way.
	MaxTaskOutput int
	// MaxRunEvents bounds the events one run (one turn of a task) may
	// add: chunks, artifacts, status updates (0 = 10000). A run that
	// would go over it fails like one over MaxTaskOutput. A settled
	// turn's chunks are compacted by the store, so the bound is per turn.
	MaxRunEvents int
	// MaxArtifacts bounds the artifacts one task holds (0 = 256); an
	// agent that would add more fails the run like one over
	// MaxTaskOutput.
	MaxArtifacts int
	// MaxRunsPerOwner bounds the runs one owner has going at once, over
	// every service sharing the Runner (0 = 32; negative: no bound). A
	// send over it is refused with -32080 before any task is created or
	// changed. The anonymous owner stands for every caller without an
	// identity and is not bounded.
	MaxRunsPerOwner int
	// ContextKey keys the context ids the agent is given (see
	// agentContextID): every service of one store must use the same key,
	// so that an owner's context keeps its agent-side id. nil: the key
	// ContextKeyFunc gives, else a random key of this service's own.
	ContextKey []byte
	// ContextKeyFunc gives the context key of a store other processes
	// share: a store that cannot be reached when the service is made
	// (Caddy starting while Redis is down) only fails the sends made
	// before it can be. It is called by every send, before and after the
	// write that starts its turn, so it must keep the key once known (no
	// round trip): a store that can lose the key and agree on another
	// with the other processes (store/redisstore) gives the agreed one, and
	// the turn's context id follows it.
	ContextKeyFunc func(ctx context.Context) ([]byte, error)
	// Limits bound what one request may carry (parts per message, text
	// and inline file sizes, metadata size); zero fields take the
	// protocol defaults. A request over a limit is -32602 naming it.
	Limits protocol.Limits
	// MaxJSONDepth bounds the nesting of a request body (0 =
	// protocol.DefaultMaxDepth); a deeper body is -32600.
	MaxJSONDepth int
	// Extensions are the extensions the agent supports, as its card
	// declares them. A client activates them with the A2A-Extensions
	// (1.0) or X-A2A-Extensions (0.3) header; the activated URIs are
	// echoed under the same header and passed to the agent. A request
	// that does not activate a required one is -32008.
	Extensions []protocol.Extension
	// DedupeWindow is how long a send's messageId is remembered for its
	// owner (exactly-once sends, sends.go): a send of the same message
	// under the same id within it is answered from the first send's task
	// and does not call the agent, and another message under it is
	// -32602. 0: as long as the first send's task is kept; negative:
	// sends are not deduplicated. A store without store.Sends does not
	// deduplicate either.
	DedupeWindow time.Duration
	// Reply is what a send answers with: a Task (ReplyTask, the default),
	// one Message with no task stored (ReplyMessage), or either, as the
	// agent answers each turn (ReplyAuto).
	Reply ReplyMode
	// Heartbeat is the SSE keep-alive comment interval (0 = 15s).
	Heartbeat time.Duration
	// WriteTimeout bounds the write of one SSE frame, heartbeats included
	// (0 = 30s): a client that stops reading loses its stream then,
	// instead of pinning it, and its connection, for good.
	WriteTimeout time.Duration
	// Unload ends when the owning config is unloaded: open streams and
	// blocking waits end cleanly while runs go on, and a stream blocked in
	// a write is cut at once. nil: never.
	Unload context.Context
	// Push turns push notifications on; nil: the push methods and an
	// inline config are -32003.
	Push *PushOptions
	// Observer, if set, is told of task states, runs and streams (for
	// metrics).
	Observer Observer
	// ExtendedCard serves the extended card to authenticated callers;
	// nil: the card declares none, and asking for it is -32004 (1.0) or
	// -32007 (0.3, which has no other answer).
	ExtendedCard *ExtendedCardOptions
	Logger       *zap.Logger
}

// Defaults applied by New: the one place each is written.
const (
	DefaultMaxHistory      = 100
	DefaultMaxHistoryBytes = 8 << 20
	DefaultMaxTaskOutput   = 16 << 20
	DefaultMaxRunEvents    = 10000
	DefaultMaxArtifacts    = 256
	DefaultMaxRunsPerOwner = 32
	DefaultHeartbeat       = 15 * time.Second
	DefaultWriteTimeout    = 30 * time.Second
)

// ExtendedCardOptions are how the service answers the extended card.
type ExtendedCardOptions struct {
	// Render is the document of the extended card for a caller of
	// version v who reached the mount at rpcURL (the card's URLs are
	// the caller's, as the public card's are): the 1.0 card for 1.0, one
	// a 0.3 client reads for 0.3.
	Render func(rpcURL string, v protocol.Version) ([]byte, error)
	// Challenge is the WWW-Authenticate value of the 401 an anonymous
	// caller gets ("" for none).
	Challenge string
}

// Package store keeps tasks and their event logs. The Store interface is
// shaped so that an in-process implementation (memory) and a shared one
// (Redis, for several Caddy replicas) fit it unchanged: event ids are opaque
// strings ordered within a task, updates are compare-and-set on a version the
// store hands out, tailing is a blocking read with a context, and a cancel is
// a signal any replica can send.
package store

import (
	"context"
	"errors"
	"time"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// Errors a Store returns.
var (
	// ErrNotFound: no task with that id, or it belongs to another owner.
	ErrNotFound = errors.New("store: task not found")
	// ErrConflict: the version given to Update is no longer current; re-read.
	ErrConflict = errors.New("store: version conflict")
	// ErrExists: Create was given an id that is already stored.
	ErrExists = errors.New("store: task exists")
	// ErrFull: the store is at its bound (tasks or bytes) and nothing it
	// may evict for this caller frees room: the caller retries later.
	ErrFull = errors.New("store: full")
	// ErrQuota: the owner holds as many tasks as the store allows one
	// owner, and none of them can be evicted (all are running).
	ErrQuota = errors.New("store: owner quota reached")
	// ErrClosed: the store has been closed.
	ErrClosed = errors.New("store: closed")
	// ErrBadEventID: the after id given to Events is not an event id of this
	// store's form. Treating it as "" would replay a whole log to a client
	// that sent garbage, so it is an error (the handler answers
	// invalid params).
	ErrBadEventID = errors.New("store: malformed event id")
	// ErrBadPageToken: ListQuery.PageToken is not a cursor this store issued.
	ErrBadPageToken = errors.New("store: malformed page token")
	// ErrTooManyEvents: the append would take the task's event log over the
	// store's bound. Nothing of that Update is applied. An Update that moves
	// the task into a terminal state is always accepted, so the handler can
	// record the failure this error causes.
	ErrTooManyEvents = errors.New("store: too many events for one task")
	// ErrTooManyPushConfigs: PutPushConfig would take the task over the
	// number of push configs it may hold.
	ErrTooManyPushConfigs = errors.New("store: too many push configs for one task")
)

// LimitError is a bound of the store that a Create ran into: Err is
// ErrFull or ErrQuota (errors.Is works through it), Limit names the
// setting (max_tasks, max_bytes, max_tasks_per_owner) and Max its value,
// so the caller can tell a client which bound it hit.
type LimitError struct {
	Err   error
	Limit string
	Max   int64
}

func (e *LimitError) Error() string { return e.Err.Error() + " (" + e.Limit + ")" }

// Unwrap returns Err.
func (e *LimitError) Unwrap() error { return e.Err }

// Record is a stored task with its owner and the version to pass to Update.
type Record struct {
	Task    *protocol.Task
	Owner   string
	Version uint64
	// LastEventID is the id of the newest event in the task's log when the
	// snapshot was read ("" if none): a stream that sends this snapshot
	// continues with Events(after=LastEventID) and misses or repeats nothing.
	LastEventID string
}

// StoredEvent is an event of a task's log with its id.
type StoredEvent struct {
	// ID is opaque, ordered within the task; it is the SSE id: and
	// Last-Event-ID.
	ID    string
	Event protocol.Event
}

// ListQuery selects an owner's tasks for ListTasks.
type ListQuery struct {
	ContextID string
	// Status filters by state; StateUnspecified = any.
	Status protocol.TaskState
	// After keeps tasks whose status timestamp is >= it; zero = no filter.
	After time.Time
	// PageSize is how many tasks to return at most (>= 1).
	PageSize int
	// PageToken is the opaque cursor from the previous page ("" = first).
	PageToken string
	// View says what of each task the caller will use. A store may return
	// more (the caller trims anyway), but one that decodes tasks should
	// not build what the view leaves out.
	View View
}

// View selects what of a task a reader needs. The zero View is all of it.
type View struct {
	// OmitArtifacts leaves the artifacts out.
	OmitArtifacts bool
	// History is how many of the newest history messages to keep: 0 all,
	// a negative number none.
	History int
}

// ListPage is one page of tasks, newest status timestamp first.
type ListPage struct {
	Tasks []*protocol.Task
	// NextPageToken is "" on the last page.
	NextPageToken string
	// TotalSize counts every task matching the query (all pages).
	TotalSize int
}

// Store keeps tasks and their event logs.
//
// Values are handed over, not copied: a task or event given to Create or
// Update belongs to the store from then on, and the caller must not change
// it or anything it points to; a task or event the store returns may be
// shared with other readers and the store itself, so it is read-only — a
// caller that needs a changed task copies the Task struct and replaces the
// fields it changes (slices included) instead of writing into them. An
// in-process store can then keep and return the very values it was given,
// with no copy on any path; a store that serialises (Redis) decodes fresh
// values and meets the contract trivially.
//
// Implementations bound their own I/O: the writes a run makes carry no
// deadline (a canceled run must still record how it ended), so a store
// that talks to a server sets its own timeouts.
type Store interface {
	// Create stores a new task owned by owner and appends events to its log,
	// atomically. It returns the version for the next Update.
	Create(ctx context.Context, owner string, t *protocol.Task, events ...protocol.Event) (uint64, error)
	// Get returns the task if it exists and belongs to owner; ErrNotFound
	// otherwise (another owner's task is indistinguishable from a missing one).
	Get(ctx context.Context, owner, id string) (*Record, error)
	// Update replaces the task snapshot if its version is still version and
	// appends events to its log, atomically; ErrConflict if the version moved.
	// It returns the new version and the id of the last event appended (""
	// if none): the position a stream sending t continues from.
	Update(ctx context.Context, id string, version uint64, t *protocol.Task, events ...protocol.Event) (uint64, string, error)
	// List returns a page of owner's tasks ordered by status timestamp,
	// newest first. A store need not list the anonymous owner's ("")
	// tasks: the service never asks, since an anonymous caller can prove
	// no task is its own.
	List(ctx context.Context, owner string, q ListQuery) (*ListPage, error)
	// Events returns the events of task id after the event id after ("" =
	// from the start). If there are none and wait is true it blocks until one
	// is appended or ctx ends (then it returns ctx.Err()).
	Events(ctx context.Context, id, after string, wait bool) ([]StoredEvent, error)
	// SignalCancel asks whoever runs task id to stop it.
	SignalCancel(ctx context.Context, id string) error
	// CancelSignal returns a channel closed when a cancel of task id is
	// signalled (by any replica). ctx bounds the interest: once it ends the
	// store may release what the call holds (a shared store's
	// subscription), and the channel may then never close, so callers
	// select on their own context as well. An in-process store can hand
	// every caller the task's one channel.
	CancelSignal(ctx context.Context, id string) <-chan struct{}
	// PutPushConfig stores cfg as one of the push configs of owner's task
	// id, replacing the one with the same ID; ErrNotFound if the task is
	// not owner's, ErrTooManyPushConfigs if it would hold more than max.
	// The configs live and expire with their task.
	PutPushConfig(ctx context.Context, owner, id string, cfg PushConfig, max int) error
	// PushConfigs returns the push configs of owner's task id, in the
	// order they were first put; ErrNotFound as Get.
	PushConfigs(ctx context.Context, owner, id string) ([]PushConfig, error)
	// DeletePushConfig removes the push config configID of owner's task
	// id; removing one that is not there is no error (ErrNotFound only for
	// the task, as Get).
	DeletePushConfig(ctx context.Context, owner, id, configID string) error
	// ClaimDelivery claims the delivery named key (opaque: a config and an
	// event of task id) for the caller: true exactly once per key, for the
	// first claimant on any replica, so that one replica delivers each
	// notification. Claims live and expire with their task; ErrNotFound
	// for a task that is gone.
	ClaimDelivery(ctx context.Context, id, key string) (bool, error)
	// Close releases the store; blocked readers return ErrClosed.
	Close() error
}

// PushConfig is one push notification config of a task as a store keeps
// it: the service's encoding of the config, opaque to the store but for
// its id.
type PushConfig struct {
	// ID is unique within the task.
	ID string
	// Data is the config as the service encodes it.
	Data []byte
}

// Secrets is an optional Store capability of a store shared by several
// processes: a secret every process using the store gets alike, made by
// the first to ask (the key the agent's context ids are derived under:
// replicas must derive the same ids, or a conversation continued on
// another replica would be another context to the agent). A store of one
// process has no need of it: the secret can live in the process.
type Secrets interface {
	// Secret returns the secret name of size random bytes, the same for
	// every caller of every process with this store (made on first use).
	// It is asked for at every send: once read, a store keeps it (no
	// round trip), and a store whose server can lose it makes sure its
	// processes agree on one again (store/redisstore: its turns' writes).
	Secret(ctx context.Context, name string, size int) ([]byte, error)
}

// Handoffs is an optional capability of a store shared by processes:
// work a stopping process could not finish (push notifications still
// queued), left in the store for another process to take. A store of one
// process has no one to hand it to.
type Handoffs interface {
	// PutHandoffs leaves items (opaque) under kind.
	PutHandoffs(ctx context.Context, kind string, items [][]byte) error
	// TakeHandoff takes one item of kind, for the caller alone; nil (and
	// no error) when there is none.
	TakeHandoff(ctx context.Context, kind string) ([]byte, error)
}

// PushHints is an optional capability of a store whose reads cost a
// round trip: whether a task had push configs when this process last
// wrote it, learnt with the write, so that a writer with nothing to
// notify reads nothing. A task that may have them answers true.
type PushHints interface {
	// MayHavePushConfigs reports, right after this process wrote task
	// id, whether that write found push configs (a config put after it
	// is seen by the next write). done says the write was the task's
	// last here (final): the hint is dropped.
	MayHavePushConfigs(id string, done bool) bool
}

// Orphans is an optional capability of a store shared by processes: it
// knows which process runs each running task (a lease the process renews),
// so that when one dies another can record its running tasks as failed.
// The runs are not executed again: an agent call may have side effects.
type Orphans interface {
	// Orphans returns running tasks whose process stopped renewing their
	// lease, each claimed for the caller alone (no other caller gets it
	// while the claim holds). A claim lasts a lease: a task the caller
	// could not record is found again once its claim lapses.
	Orphans(ctx context.Context) ([]Orphan, error)
	// Lease is how long a lease lasts unrenewed: the store's processes
	// look for orphans every half lease.
	Lease() time.Duration
}

// Abandoner is an optional capability of a store with Orphans: a run
// that ends without having settled its task (its writes kept failing)
// says so, and the store stops renewing the task's lease. Renewed, the
// lease would keep the task running forever with no run behind it; let
// lapse, it hands the task to Orphans once the store answers again.
type Abandoner interface {
	// Abandon stops this process's renewal of the lease on task id that
	// its write of version took or kept. A later write of the task here
	// (a run of another turn) keeps its lease.
	Abandon(id string, version uint64)
}

// Orphan is a running task whose process is gone.
type Orphan struct {
	ID    string
	Owner string
}

// Notifier is an optional Store capability for streams that wait a long
// time: instead of a blocking Events call, which needs a context that ends
// at each heartbeat, a stream waits on a channel alongside its own timer
// and its client, and holds no context or goroutine per wait. A store that
// cannot offer it leaves streams on Events.
type Notifier interface {
	// EventsReady returns a channel that is closed once the log of task id
	// holds an event after the id after (at once if it already does), or
	// when the task is dropped or the store closed; Events then tells the
	// events or the error. It fails as Events would for an unknown task or
	// a malformed id.
	EventsReady(id, after string) (<-chan struct{}, error)
}

// Tailer is an optional Notifier capability of a store that hears the
// events of the tasks it tails as they are written (the Redis store's
// subscriber): a waiting stream is handed them without reading the log.
type Tailer interface {
	// Next returns events of task id after the id after, in log order
	// (the next ones, maybe not all there are), or, when there are none
	// yet, a channel closed once there may be (as EventsReady's). It
	// fails as Events would.
	Next(id, after string) ([]StoredEvent, <-chan struct{}, error)
}

// The bounds every store applies unless told otherwise: written once
// here, taken by each store.
const (
	// DefaultTTL is how long a finished task is kept.
	DefaultTTL = time.Hour
	// DefaultIdleTTL is how long a task waiting for its caller
	// (input-required, auth-required) is kept.
	DefaultIdleTTL = 24 * time.Hour
	// DefaultMaxEventsPerTask bounds one task's event log.
	DefaultMaxEventsPerTask = 20000
	// DefaultMaxTasksPerOwner bounds the tasks kept for one owner.
	DefaultMaxTasksPerOwner = 1000
)

package push

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Delivery is one POST of one notification to one receiver.
type Delivery struct {
	// TaskID and ConfigID name it in logs.
	TaskID, ConfigID string
	URL              string
	Header           http.Header
	Body             []byte
	// Client sends it (NewClient's, through the guard).
	Client *http.Client
	// Timeout bounds one attempt; MaxAttempts the attempts.
	Timeout     time.Duration
	MaxAttempts int
	// Claim, when set, is asked before the first attempt: false means
	// another process delivers this notification (or already did).
	Claim func(ctx context.Context) (bool, error)
	// Sign, when set, adds a signature for the body to the header before
	// each attempt (a fresh one each time: signatures expire).
	Sign func(h http.Header, body []byte) error
}

// Notice is what one change of a task makes to deliver, worked out when
// its turn comes (the configs as they are then, the bodies encoded off
// the request's path).
type Notice func(ctx context.Context) []Delivery

// Options configure a Dispatcher; zero fields take the defaults.
type Options struct {
	// Workers bounds the goroutines delivering at once (default 32): a
	// flood of tasks queues, it does not spawn.
	Workers int
	// OwnerWorkers bounds the workers one owner's tasks hold at once
	// (default a quarter of Workers, at least 1), so that one caller's
	// slow receivers leave the other workers to everyone else.
	OwnerWorkers int
	// HostWorkers bounds the deliveries under way to one receiver host,
	// the URL's host name whatever the port (default a quarter of
	// Workers, at least 1), so that many callers' configs for one slow
	// host hold no more. A delivery to a host at its bound waits without
	// a worker.
	HostWorkers int
	// MaxQueued bounds the notices waiting (default 10000); past it a
	// notice is dropped with a log line.
	MaxQueued int
	// OwnerQueued bounds the notices one owner has waiting or under way
	// (default a quarter of MaxQueued), and HostQueued those of the
	// tasks waiting on, or delivering to, one receiver host (the same
	// default): past either, the notice is dropped with a log line, and
	// nobody else's are crowded out of the queue.
	OwnerQueued, HostQueued int
	// NoticeTime bounds the delivery of one notice, every config,
	// attempt and wait between them, from when it is worked out
	// (default 2m; never less than its longest attempt Timeout): a
	// receiver that never answers holds its task for that long at most.
	NoticeTime time.Duration
	// Backoff is the first retry's wait (default 500ms), doubled per
	// attempt up to MaxBackoff (default 30s), with jitter.
	Backoff, MaxBackoff time.Duration
	Logger              *zap.Logger
	// Observe, when set, is told how each delivery went (for metrics);
	// it is called from the workers and Enqueue and must not block.
	Observe func(Outcome)
}

// The dispatcher's defaults, written once (docs/security.md's limits table
// names them).
const (
	DefaultWorkers    = 32
	DefaultMaxQueued  = 10000
	DefaultNoticeTime = 2 * time.Minute
)

// Outcome is what happened to a delivery, as Options.Observe is told.
type Outcome int

// The outcomes.
const (
	// Delivered: the receiver answered 2xx.
	Delivered Outcome = iota
	// Failed: the dispatcher gave up on the delivery (a status that is
	// not retried, the attempts used up, or a claim that failed).
	Failed
	// Retried: an attempt failed and another follows.
	Retried
	// Dropped: a notice was not queued, the queue (or its owner's or
	// its receiver host's share of it) being full.
	Dropped
)

// Dispatcher delivers notices, each task's in the order they were
// queued: one worker at a time holds a task, for one notice, then the
// task waits its turn again. Turns go round the owners with a task
// ready, and neither an owner nor a receiver host holds more than its
// share of the workers or of the queue, so a slow receiver delays its
// own task's notices, and at most its owner's and its host's share of
// the rest.
type Dispatcher struct {
	opts   Options
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu sync.Mutex
	// ready wakes a worker waiting for a task to take.
	ready   *sync.Cond
	closed  bool
	started bool
	queued  int
	tasks   map[string]*taskQueue
	fair
}

// taskQueue is one task's notices. It is in one place at a time: its
// owner's ready list, a worker, or a host's parked list.
type taskQueue struct {
	id    string
	owner *ownerState
	// host is the receiver host the task's notices count against: the
	// one it last delivered to or waits for ("" before its first).
	host    string
	notices []queued
	// current is the notice being delivered (a Close cuts it short, and
	// hands it off with the waiting ones).
	current *queued
	// rest are current's deliveries not yet made, once worked out
	// (evaluated), to be made by deadline; slot: a host slot was handed
	// to the task as it left the parked list. Only the worker holding
	// the task reads or writes them.
	rest      []Delivery
	evaluated bool
	deadline  time.Time
	slot      bool
}

// count is how many of the queue's notices the task holds.
func (q *taskQueue) count() int {
	if q.current != nil {
		return len(q.notices) + 1
	}
	return len(q.notices)
}

// queued is a notice with, optionally, how to write it down for another
// process (EnqueueHandoff).
type queued struct {
	n       Notice
	handoff func() []byte
}

// New returns a dispatcher; its workers start with the first notice.
func New(o Options) *Dispatcher {
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.MaxQueued <= 0 {
		o.MaxQueued = DefaultMaxQueued
	}
	if o.OwnerWorkers <= 0 {
		o.OwnerWorkers = max(o.Workers/4, 1)
	}
	if o.HostWorkers <= 0 {
		o.HostWorkers = max(o.Workers/4, 1)
	}
	if o.OwnerQueued <= 0 {
		o.OwnerQueued = max(o.MaxQueued/4, 1)
	}
	if o.HostQueued <= 0 {
		o.HostQueued = max(o.MaxQueued/4, 1)
	}
	if o.NoticeTime <= 0 {
		o.NoticeTime = DefaultNoticeTime
	}
	if o.Backoff <= 0 {
		o.Backoff = 500 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.Observe == nil {
		o.Observe = func(Outcome) {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &Dispatcher{opts: o, ctx: ctx, cancel: cancel, tasks: map[string]*taskQueue{},
		fair: fair{owners: map[string]*ownerState{}, hosts: map[string]*hostState{}}}
	d.ready = sync.NewCond(&d.mu)
	return d
}

// Enqueue queues n for task, of the owner ""; false if it was dropped.
func (d *Dispatcher) Enqueue(task string, n Notice) bool { return d.EnqueueHandoff("", task, n, nil) }

// EnqueueHandoff queues n for owner's task, a notice that handoff can
// write down, if Close finds it undelivered, for another process to
// deliver. False if it was dropped: the queue is full, or the owner's
// or the task's receiver host's share of it, or the dispatcher closed.
func (d *Dispatcher) EnqueueHandoff(owner, task string, n Notice, handoff func() []byte) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return false
	}
	q := d.tasks[task]
	var full string
	switch {
	case d.queued >= d.opts.MaxQueued:
		full = "the delivery queue is full"
	case q == nil && d.ownerQueued(owner) >= d.opts.OwnerQueued,
		q != nil && q.owner.queued >= d.opts.OwnerQueued:
		full = "the caller's share of the delivery queue is full"
	case q != nil && q.host != "" && d.hosts[q.host].queued >= d.opts.HostQueued:
		full = "the receiver host's share of the delivery queue is full"
	}
	if full != "" {
		d.opts.Logger.Warn("a2a: push notification dropped: "+full,
			zap.String("task_id", task), zap.Int("queued", d.queued))
		d.opts.Observe(Dropped)
		return false
	}
	if !d.started {
		d.started = true
		for range d.opts.Workers {
			d.wg.Add(1)
			go d.work()
		}
	}
	d.queued++
	if q == nil {
		q = &taskQueue{id: task, owner: d.owner(owner)}
		d.tasks[task] = q
		q.owner.queued++
		q.notices = append(q.notices, queued{n, handoff})
		d.makeReady(q)
		return true
	}
	q.owner.queued++
	if q.host != "" {
		d.hosts[q.host].queued++
	}
	q.notices = append(q.notices, queued{n, handoff})
	return true
}

// Pending is how many notices wait or are being delivered.
func (d *Dispatcher) Pending() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.queued
}

// Close stops the workers: deliveries under way end at their next wait,
// and what was still queued is dropped. It returns how many notices it
// dropped, for the caller's one log line, and the handoffs of those that
// have one (EnqueueHandoff), in each task's order.
func (d *Dispatcher) Close() (int, [][]byte) {
	d.mu.Lock()
	d.closed = true
	d.ready.Broadcast()
	d.mu.Unlock()
	d.cancel()
	d.wg.Wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.queued
	var out [][]byte
	for _, q := range d.tasks {
		all := q.notices
		if q.current != nil {
			all = append([]queued{*q.current}, all...)
		}
		for _, e := range all {
			if e.handoff != nil {
				out = append(out, e.handoff())
			}
		}
	}
	d.queued, d.tasks = 0, map[string]*taskQueue{}
	d.fair = fair{owners: map[string]*ownerState{}, hosts: map[string]*hostState{}}
	return n, out
}

func (d *Dispatcher) work() {
	defer d.wg.Done()
	d.mu.Lock()
	for {
		if d.closed {
			d.mu.Unlock()
			return
		}
		q := d.next()
		if q == nil {
			d.ready.Wait()
			continue
		}
		d.mu.Unlock()
		d.run(q)
		d.mu.Lock()
	}
}

// run makes the deliveries of q's current notice (taking the next one
// if none is under way) until they are done, the notice's time is up,
// or a delivery's host is at its bound (q then waits on the host, and
// the worker goes); then q waits for its next turn, or goes if it is
// empty.
func (d *Dispatcher) run(q *taskQueue) {
	d.mu.Lock()
	if q.current == nil {
		e := q.notices[0]
		q.notices[0] = queued{}
		q.notices = q.notices[1:]
		q.current = &e
	}
	n := q.current.n
	d.mu.Unlock()
	if !q.evaluated {
		q.rest, q.evaluated = n(d.ctx), true
		limit := d.opts.NoticeTime
		for i := range q.rest {
			limit = max(limit, q.rest[i].Timeout)
		}
		q.deadline = time.Now().Add(limit)
	}
	for len(q.rest) > 0 {
		if d.ctx.Err() != nil {
			return // closing: Close counts or hands off the notice
		}
		dl := &q.rest[0]
		host := hostKey(dl.URL)
		if !time.Now().Before(q.deadline) {
			d.expire(q, host)
			break
		}
		d.mu.Lock()
		if !d.takeHost(q, host) {
			d.mu.Unlock()
			return
		}
		d.mu.Unlock()
		d.deliver(dl, q.deadline)
		d.mu.Lock()
		d.leaveHost(host)
		d.mu.Unlock()
		if d.ctx.Err() != nil {
			return
		}
		q.rest[0] = Delivery{}
		q.rest = q.rest[1:]
	}
	if d.ctx.Err() != nil {
		return // a notice worked out as Close began may have lost its deliveries: hand it off
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	q.current, q.rest, q.evaluated = nil, nil, false
	d.queued--
	q.owner.queued--
	if q.host != "" {
		d.hosts[q.host].queued--
	}
	d.done(q)
}

// expire gives up the deliveries of q's notice that its time left no
// room for: one log line for them all, each one observed as failed.
func (d *Dispatcher) expire(q *taskQueue, host string) {
	if q.slot {
		d.mu.Lock()
		q.slot = false
		d.leaveHost(host)
		d.mu.Unlock()
	}
	d.opts.Logger.Warn("a2a: push notifications not delivered: their notice's delivery time ran out",
		zap.String("task_id", q.id), zap.Int("deliveries", len(q.rest)))
	for range q.rest {
		d.opts.Observe(Failed)
	}
	q.rest = nil
}

// deliver makes the attempts of one delivery, by deadline (its notice's):
// network errors, 5xx and 429 are retried with backoff; a 2xx ends it,
// as does any other status.
func (d *Dispatcher) deliver(dl *Delivery, deadline time.Time) {
	log := d.opts.Logger.With(zap.String("task_id", dl.TaskID), zap.String("config_id", dl.ConfigID))
	ctx, cancel := context.WithDeadline(d.ctx, deadline)
	defer cancel()
	if dl.Claim != nil {
		ok, err := dl.Claim(ctx)
		if err != nil && d.ctx.Err() != nil {
			return // closing: Close counts or hands off the notice
		}
		if err != nil {
			log.Warn("a2a: push notification not delivered: its claim failed", zap.Error(err))
			d.opts.Observe(Failed)
			return
		}
		if !ok {
			return
		}
	}
	attempts := max(dl.MaxAttempts, 1)
	for i := 1; ; i++ {
		status, err := d.attempt(ctx, dl)
		if err == nil && status/100 == 2 {
			d.opts.Observe(Delivered)
			return
		}
		if d.ctx.Err() != nil {
			return // closing: Close counts or hands off the notice
		}
		retry := err != nil || status >= 500 || status == http.StatusTooManyRequests
		late := ctx.Err() != nil
		if !retry || i >= attempts || late {
			fields := []zap.Field{zap.Int("attempts", i)}
			if err != nil {
				fields = append(fields, zap.Error(err))
			} else {
				fields = append(fields, zap.Int("status", status))
			}
			msg := "a2a: push notification not delivered"
			if late && retry && i < attempts {
				msg += ": its notice's delivery time ran out"
			}
			log.Warn(msg, fields...)
			d.opts.Observe(Failed)
			return
		}
		d.opts.Observe(Retried)
		if !sleep(ctx, d.backoff(i)) {
			if d.ctx.Err() == nil {
				log.Warn("a2a: push notification not delivered: its notice's delivery time ran out", zap.Int("attempts", i))
				d.opts.Observe(Failed)
			}
			return
		}
	}
}

func (d *Dispatcher) attempt(ctx context.Context, dl *Delivery) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, dl.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, dl.URL, bytes.NewReader(dl.Body))
	if err != nil {
		return 0, err
	}
	for k, v := range dl.Header {
		req.Header[k] = v
	}
	if dl.Sign != nil {
		if err := dl.Sign(req.Header, dl.Body); err != nil {
			return 0, errors.New("signing: " + err.Error())
		}
	}
	req.ContentLength = int64(len(dl.Body))
	resp, err := dl.Client.Do(req)
	if err != nil {
		return 0, err
	}
	// Read a little of the answer so the connection can be reused.
	_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// backoff is the wait after attempt i: Backoff·2^(i-1), at most
// MaxBackoff, each between half and all of that (jitter, so receivers
// that come back are not hit by every retry at once).
func (d *Dispatcher) backoff(i int) time.Duration {
	w := d.opts.Backoff << min(i-1, 30)
	if w <= 0 || w > d.opts.MaxBackoff {
		w = d.opts.MaxBackoff
	}
	return w/2 + rand.N(w/2+1)
}

// sleep waits w, or until ctx is done (false).
func sleep(ctx context.Context, w time.Duration) bool {
	t := time.NewTimer(w)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

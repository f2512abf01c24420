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
	// MaxQueued bounds the notices waiting (default 10000); past it a
	// notice is dropped with a log line.
	MaxQueued int
	// Backoff is the first retry's wait (default 500ms), doubled per
	// attempt up to MaxBackoff (default 30s), with jitter.
	Backoff, MaxBackoff time.Duration
	Logger              *zap.Logger
	// Observe, when set, is told how each delivery went (for metrics);
	// it is called from the workers and Enqueue and must not block.
	Observe func(Outcome)
}

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
	// Dropped: a notice was not queued, the queue being full.
	Dropped
)

// Dispatcher delivers notices, each task's in the order they were
// queued: one worker at a time takes a task's queue, so a slow receiver
// delays its own task only.
type Dispatcher struct {
	opts   Options
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	started bool
	queued  int
	tasks   map[string]*taskQueue
	ready   chan string
}

type taskQueue struct {
	notices []queued
	// current is the notice being delivered (a Close cuts it short, and
	// hands it off with the waiting ones).
	current *queued
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
		o.Workers = 32
	}
	if o.MaxQueued <= 0 {
		o.MaxQueued = 10000
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
	// Each task is in ready at most once and has a notice queued, so
	// ready never holds more than MaxQueued: a send never blocks.
	return &Dispatcher{opts: o, ctx: ctx, cancel: cancel, tasks: map[string]*taskQueue{}, ready: make(chan string, o.MaxQueued)}
}

// Enqueue queues n for task; false if it was dropped (the queue is full
// or the dispatcher closed).
func (d *Dispatcher) Enqueue(task string, n Notice) bool { return d.EnqueueHandoff(task, n, nil) }

// EnqueueHandoff is Enqueue of a notice that handoff can write down, if
// Close finds it undelivered, for another process to deliver.
func (d *Dispatcher) EnqueueHandoff(task string, n Notice, handoff func() []byte) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return false
	}
	if d.queued >= d.opts.MaxQueued {
		d.opts.Logger.Warn("a2a: push notification dropped: the delivery queue is full",
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
	q := d.tasks[task]
	if q == nil {
		q = &taskQueue{}
		d.tasks[task] = q
		d.ready <- task
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
	return n, out
}

func (d *Dispatcher) work() {
	defer d.wg.Done()
	for {
		select {
		case <-d.ctx.Done():
			return
		case task := <-d.ready:
			d.drain(task)
		}
	}
}

// drain delivers task's notices until its queue is empty, then lets the
// task go (a later notice queues it again).
func (d *Dispatcher) drain(task string) {
	for {
		d.mu.Lock()
		q := d.tasks[task]
		if q == nil || len(q.notices) == 0 || d.ctx.Err() != nil {
			if q != nil && len(q.notices) == 0 && d.ctx.Err() == nil {
				delete(d.tasks, task)
			}
			d.mu.Unlock()
			return
		}
		e := q.notices[0]
		q.notices[0] = queued{}
		q.notices = q.notices[1:]
		q.current = &e
		d.mu.Unlock()
		for _, dl := range e.n(d.ctx) {
			d.deliver(&dl)
		}
		if d.ctx.Err() != nil {
			// Cut short by Close: counted with the dropped, handed off.
			return
		}
		d.mu.Lock()
		q.current = nil
		d.queued--
		d.mu.Unlock()
	}
}

// deliver makes the attempts of one delivery: network errors, 5xx and
// 429 are retried with backoff; a 2xx ends it, as does any other status.
func (d *Dispatcher) deliver(dl *Delivery) {
	log := d.opts.Logger.With(zap.String("task_id", dl.TaskID), zap.String("config_id", dl.ConfigID))
	if dl.Claim != nil {
		ok, err := dl.Claim(d.ctx)
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
		status, err := d.attempt(dl)
		if err == nil && status/100 == 2 {
			d.opts.Observe(Delivered)
			return
		}
		if d.ctx.Err() != nil {
			return // closing: Close counts or hands off the notice
		}
		retry := err != nil || status >= 500 || status == http.StatusTooManyRequests
		if !retry || i >= attempts {
			fields := []zap.Field{zap.Int("attempts", i)}
			if err != nil {
				fields = append(fields, zap.Error(err))
			} else {
				fields = append(fields, zap.Int("status", status))
			}
			log.Warn("a2a: push notification not delivered", fields...)
			d.opts.Observe(Failed)
			return
		}
		d.opts.Observe(Retried)
		if !d.sleep(d.backoff(i)) {
			return
		}
	}
}

func (d *Dispatcher) attempt(dl *Delivery) (int, error) {
	ctx, cancel := context.WithTimeout(d.ctx, dl.Timeout)
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

func (d *Dispatcher) sleep(w time.Duration) bool {
	t := time.NewTimer(w)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-d.ctx.Done():
		return false
	}
}

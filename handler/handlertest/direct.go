package handlertest

import (
	"context"
	"io"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// Direct is the Client of a service called in process, as a binding
// calls it, over no wire: the suite of a store (RunStore) needs no
// binding, and a scenario that fails through Direct is the service's or
// the store's.
func Direct(svc *handler.Service) Client { return direct{svc} }

// direct is the Client of a service called in process.
type direct struct{ svc *handler.Service }

func (d direct) Send(ctx context.Context, owner string, p *protocol.SendParams) (*protocol.Event, *protocol.Error) {
	ev, perr := d.svc.SendMessage(ctx, handler.Caller{Owner: owner}, p)
	if perr != nil {
		return nil, perr
	}
	return &ev, nil
}

func (d direct) Stream(ctx context.Context, owner string, p *protocol.SendParams) (Events, *protocol.Error) {
	st, perr := d.svc.SendStreamingMessage(ctx, handler.Caller{Owner: owner}, p)
	if perr != nil {
		return nil, perr
	}
	return serve(ctx, st)
}

func (d direct) GetTask(ctx context.Context, owner string, p *protocol.GetTaskParams) (*protocol.Task, *protocol.Error) {
	return d.svc.GetTask(ctx, handler.Caller{Owner: owner}, p)
}

func (d direct) CancelTask(ctx context.Context, owner string, id string) (*protocol.Task, *protocol.Error) {
	return d.svc.CancelTask(ctx, handler.Caller{Owner: owner}, &protocol.TaskIDParams{ID: id})
}

func (d direct) ListTasks(ctx context.Context, owner string, p *protocol.ListTasksParams) (*protocol.ListTasksResult, *protocol.Error) {
	return d.svc.ListTasks(ctx, handler.Caller{Owner: owner}, p)
}

func (d direct) Subscribe(ctx context.Context, owner string, id, lastEventID string) (Events, *protocol.Error) {
	st, perr := d.svc.SubscribeToTask(ctx, handler.Caller{Owner: owner}, &protocol.TaskIDParams{ID: id}, lastEventID)
	if perr != nil {
		return nil, perr
	}
	return serve(ctx, st)
}

// serve serves st to a channel in the background and returns once its
// first event (or its error) is in, as every Client's streams do.
func serve(ctx context.Context, st *handler.Stream) (Events, *protocol.Error) {
	w := &chanWriter{ctx: ctx, evs: make(chan protocol.Event, 64), done: make(chan struct{})}
	go func() {
		st.Serve(w)
		close(w.done)
	}()
	r := &chanEvents{w: w}
	first, err := r.Next()
	if perr, ok := err.(*protocol.Error); ok {
		return nil, perr
	}
	r.first, r.firstErr, r.peeked = first, err, true
	return r, nil
}

// chanWriter is a handler.EventWriter whose frames are events on a
// channel; the stream's error is kept for after its end.
type chanWriter struct {
	ctx  context.Context
	evs  chan protocol.Event
	fail *protocol.Error
	done chan struct{}
}

func (w *chanWriter) Open() error { return nil }

func (w *chanWriter) Queue(_ string, ev *protocol.Event) error {
	select {
	case w.evs <- *ev:
		return nil
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
}

func (w *chanWriter) Flush() error                { return nil }
func (w *chanWriter) Idle()                       {}
func (w *chanWriter) Heartbeat() error            { return nil }
func (w *chanWriter) Fail(perr *protocol.Error)   { w.fail = perr }
func (w *chanWriter) CutOnUnload(context.Context) {}

// chanEvents reads a chanWriter.
type chanEvents struct {
	w        *chanWriter
	first    protocol.Event
	firstErr error
	peeked   bool
}

func (r *chanEvents) Next() (protocol.Event, error) {
	if r.peeked {
		r.peeked = false
		return r.first, r.firstErr
	}
	select {
	case ev := <-r.w.evs:
		return ev, nil
	case <-r.w.done:
	}
	// Served to its end: what is still queued comes first.
	select {
	case ev := <-r.w.evs:
		return ev, nil
	default:
	}
	if r.w.fail != nil {
		return protocol.Event{}, r.w.fail
	}
	return protocol.Event{}, io.EOF
}

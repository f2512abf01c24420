package redisstore

import (
	"context"

	"github.com/caddy-a2a/caddy-a2a/store"
)

// SignalCancel implements store.Store: the task's hash is marked (for
// watchers that register later, on any replica) and the cancel is
// published (for those registered now). Signalling twice is harmless.
func (s *Store) SignalCancel(ctx context.Context, id string) error {
	c, cancel, err := s.op(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	keys := taskKeys(s.base, id)
	n, err := s.cancel.Exec(c, s.cli(), keys[:1], []string{s.sub.cancelChannel(id)}).AsInt64()
	if err != nil {
		return s.fail(ctx, err)
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// CancelSignal implements store.Store. The watchers of a task in this
// process share one channel, fired by the store's pattern subscription to
// every cancel channel (subscriber); ctx ending drops the watcher's
// interest. One read catches a cancel signalled before the watch, but
// for a task this process created running while the subscription was up
// (subscriber.expect): then every cancel is heard. For an
// unknown task, a closed store or a Redis that cannot be asked it returns
// ctx.Done(), as the memory store does for an unknown task; a watch
// registered while the subscriber is down is checked again when it
// reconnects.
func (s *Store) CancelSignal(ctx context.Context, id string) <-chan struct{} {
	if ctx.Err() != nil || s.closed.Load() {
		return ctx.Done()
	}
	if w, cancelled, ok := s.sub.watchFresh(id); ok {
		if cancelled {
			return closedChan
		}
		context.AfterFunc(ctx, func() { s.sub.releaseCancel(id, w) })
		return w.ch
	}
	w := s.sub.watchCancel(id)
	c, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	cl := s.cli()
	r, err := cl.Do(c, cl.B().Hmget().Key(taskKeys(s.base, id)[0]).Field("o", "x").Build()).ToArray()
	switch {
	case err == nil && len(r) == 2 && r[0].IsNil():
		s.sub.releaseCancel(id, w)
		return ctx.Done()
	case err == nil && len(r) == 2 && !r[1].IsNil():
		s.sub.releaseCancel(id, w)
		return closedChan
	}
	// Watched: by the subscription, or, if the read failed with Redis
	// down, by the subscriber's re-check when it reconnects.
	context.AfterFunc(ctx, func() { s.sub.releaseCancel(id, w) })
	return w.ch
}

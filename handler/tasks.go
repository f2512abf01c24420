package handler

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// GetTask answers the caller's task, its history cut to the requested
// length; another owner's task is -32001 like a missing one.
func (s *Service) GetTask(ctx context.Context, c Caller, p *protocol.GetTaskParams) (*protocol.Task, *protocol.Error) {
	rec, err := s.opts.Store.Get(ctx, c.Owner, p.ID)
	if err != nil {
		return nil, storeError(c.log(s.log), "get task", p.ID, err)
	}
	c.Info.SetTask(rec.Task)
	return withHistoryLength(rec.Task, p.HistoryLength), nil
}

// CancelTask records the cancel itself (so the answer is the canceled
// task whatever the run is doing), then signals the run to abort the
// upstream call. The run loses its next compare-and-set, re-reads, sees
// the terminal state and stops without writing.
func (s *Service) CancelTask(ctx context.Context, c Caller, p *protocol.TaskIDParams) (*protocol.Task, *protocol.Error) {
	for range maxCASAttempts {
		rec, err := s.opts.Store.Get(ctx, c.Owner, p.ID)
		if err != nil {
			return nil, storeError(c.log(s.log), "get task", p.ID, err)
		}
		if rec.Task.Status.State.Terminal() {
			return nil, protocol.ErrTaskNotCancelable(p.ID)
		}
		t := *rec.Task // shared: change a copy
		t.Status = protocol.TaskStatus{State: protocol.StateCanceled, Timestamp: time.Now().UTC()}
		ev := protocol.Event{Status: &protocol.StatusUpdate{TaskID: t.ID, ContextID: t.ContextID, Status: t.Status, Final: true}}
		_, last, err := s.opts.Store.Update(ctx, t.ID, rec.Version, &t, ev)
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, storeError(c.log(s.log), "cancel task", p.ID, err)
		}
		s.notify(c.Owner, &t, last, []protocol.Event{ev})
		// The task is canceled whatever happens to the signal; a lost
		// signal only lets the run go on until its next write.
		if err := s.opts.Store.SignalCancel(context.WithoutCancel(ctx), t.ID); err != nil {
			c.log(s.log).Warn("a2a: cancel signal failed", zap.String("task_id", t.ID), zap.Error(err))
		}
		if rec.Task.Status.State.Interrupted() && t.Upstream != "" {
			s.cancelUpstream(c, &t)
		}
		c.Info.SetTask(&t)
		return &t, nil
	}
	return nil, internalError(c.log(s.log), "cancel task", errors.New("too many version conflicts"), zap.String("task_id", p.ID))
}

// upstreamCancelWait bounds telling the agent of a cancel.
const upstreamCancelWait = 10 * time.Second

// cancelUpstream tells an agent that keeps tasks between turns
// (upstream.Canceler) that a task waiting for input was canceled: no run
// is going to abort, so the agent would otherwise keep it open. It runs
// in the background: the cancel is recorded and answered whatever the
// agent says, and a failure is only logged.
func (s *Service) cancelUpstream(c Caller, t *protocol.Task) {
	cn, ok := s.opts.Agent.(upstream.Canceler)
	if !ok {
		return
	}
	req := &upstream.CancelRequest{TaskID: t.ID, Upstream: t.Upstream, User: c.Owner, Headers: c.Headers}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), upstreamCancelWait)
		defer cancel()
		if err := cn.Cancel(ctx, req); err != nil {
			c.log(s.log).Warn("a2a: the agent was not told of a cancel", zap.String("task_id", req.TaskID), zap.Error(err))
		}
	}()
}

// ListTasks lists the caller's tasks, newest status first. An anonymous caller owns nothing it
// could prove is its own, so it gets an empty list rather than the tasks
// of every other anonymous caller.
func (s *Service) ListTasks(ctx context.Context, c Caller, p *protocol.ListTasksParams) (*protocol.ListTasksResult, *protocol.Error) {
	res := &protocol.ListTasksResult{PageSize: p.PageSize}
	if c.Owner == "" {
		return res, nil
	}
	q := store.ListQuery{ContextID: p.ContextID, Status: p.Status, PageSize: p.PageSize, PageToken: p.PageToken,
		View: store.View{OmitArtifacts: !p.IncludeArtifacts}}
	if n := p.HistoryLength; n != nil {
		q.View.History = *n
		if *n == 0 {
			q.View.History = -1
		}
	}
	if p.StatusTimestampAfter != nil {
		q.After = *p.StatusTimestampAfter
	}
	page, err := s.opts.Store.List(ctx, c.Owner, q)
	if errors.Is(err, store.ErrBadPageToken) {
		return nil, protocol.ErrInvalidParams("Invalid page token",
			protocol.FieldViolation{Field: "pageToken", Description: "is not a token this server issued"})
	}
	if err != nil {
		return nil, internalError(c.log(s.log), "list tasks", err)
	}
	res.Tasks = make([]protocol.Task, len(page.Tasks))
	for i, t := range page.Tasks {
		res.Tasks[i] = *withHistoryLength(t, p.HistoryLength) // a copy: t is shared
		if !p.IncludeArtifacts {
			res.Tasks[i].Artifacts = nil
		}
	}
	res.NextPageToken = page.NextPageToken
	res.TotalSize = page.TotalSize
	return res, nil
}

// subscribable reads task id for a subscribe: unknown → -32001, terminal →
// -32004 (nothing more will happen to it).
func (s *Service) subscribable(ctx context.Context, c Caller, id string) (*store.Record, *protocol.Error) {
	rec, err := s.opts.Store.Get(ctx, c.Owner, id)
	if err != nil {
		return nil, storeError(c.log(s.log), "get task", id, err)
	}
	if rec.Task.Status.State.Terminal() {
		return nil, protocol.ErrUnsupportedOperation("Task is in a terminal state; there is nothing to subscribe to")
	}
	return rec, nil
}

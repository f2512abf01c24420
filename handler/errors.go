package handler

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/store"
	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// storeError maps a store failure on task id to the error the caller sees:
// a missing (or foreign) task is -32001; everything else is -32603 with an
// error id that is also logged, because store faults are operator business.
//
// A store out of room is not a fault: -32080 (retryable) naming the bound,
// so a caller knows to come back and an operator which setting to raise.
func storeError(log *zap.Logger, op, taskID string, err error) *protocol.Error {
	if errors.Is(err, store.ErrNotFound) {
		return protocol.ErrTaskNotFound(taskID)
	}
	if perr := roomError(err); perr != nil {
		log.Info("a2a: "+op+" refused for lack of room", zap.String("task_id", taskID), zap.Error(err))
		return perr
	}
	return internalError(log, op, err, zap.String("task_id", taskID))
}

// roomError is the -32080 answer to a store that is out of room, or nil
// for any other error.
func roomError(err error) *protocol.Error {
	if le, ok := errors.AsType[*store.LimitError](err); ok {
		max := strconv.FormatInt(le.Max, 10)
		if errors.Is(le, store.ErrQuota) {
			return protocol.ErrResourceExhausted("This caller holds as many tasks as this server keeps for one caller ("+
				le.Limit+" "+max+") and all of them are running; retry when one ends", le.Limit, max)
		}
		return protocol.ErrResourceExhausted("The task store is full ("+le.Limit+" "+max+"); retry later", le.Limit, max)
	}
	switch {
	case errors.Is(err, store.ErrFull):
		return protocol.ErrResourceExhausted("The task store is full; retry later", "store", "")
	case errors.Is(err, store.ErrQuota):
		return protocol.ErrResourceExhausted("This caller holds as many tasks as this server keeps for one caller; retry later", "store", "")
	case errors.Is(err, store.ErrTooManyEvents):
		return protocol.ErrResourceExhausted("This task holds as many events as the store keeps for one task; start a new task", "store", "")
	}
	return nil
}

// internalError logs err under a fresh error id and returns -32603 naming
// that id, so a caller's report can be matched to the log line without the
// caller ever seeing Go error text.
func internalError(log *zap.Logger, op string, err error, fields ...zap.Field) *protocol.Error {
	id := newErrorID()
	log.Error("a2a: "+op+" failed", append(fields, zap.String("error_id", id), zap.Error(err))...)
	return protocol.ErrInternal(id)
}

// newErrorID is 16 hex digits of randomness: short enough to read out in
// a support request, long enough never to collide in one log.
func newErrorID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// refusalError is the caller's answer when the agent refused its run with
// one of the errors that pass through (upstream.PassesThrough): the same
// code, with this module's message, never the agent's (its text may hold
// internals; it goes to the log). Any other code is the generic failure.
func refusalError(log *zap.Logger, taskID string, r *upstream.Refusal) *protocol.Error {
	log.Info("a2a: agent refused the request", zap.String("task_id", taskID), zap.Int("code", r.Code), zap.String("detail", r.Detail))
	switch r.Code {
	case protocol.CodeTaskNotFound:
		return protocol.ErrTaskNotFound(taskID)
	case protocol.CodeTaskNotCancelable:
		return protocol.ErrTaskNotCancelable(taskID)
	case protocol.CodeUnsupportedOperation:
		return protocol.ErrUnsupportedOperation("The agent does not support this operation")
	case protocol.CodeContentTypeNotSupported:
		return protocol.ErrContentTypeNotSupported("The agent does not accept the message's content types")
	case protocol.CodeInvalidAgentResponse:
		return protocol.ErrInvalidAgentResponse()
	case protocol.CodeInvalidParams:
		return protocol.ErrInvalidParams("The agent refused the request's parameters")
	}
	return internalError(log, "agent run", r, zap.String("task_id", taskID))
}

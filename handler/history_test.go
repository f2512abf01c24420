package handler

import (
	"context"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/protocol"
)

// A task keeps its MaxHistory newest messages.
func TestSendMaxHistory(t *testing.T) {
	svc := newTestService(t, stepsAgent{status(protocol.StateInputRequired, "more?")}, func(o *Options) { o.MaxHistory = 3 })
	ctx := context.Background()
	first, perr := svc.SendMessage(ctx, Caller{}, &protocol.SendParams{Message: userMessage("m-1", "a"), Blocking: true})
	if perr != nil {
		t.Fatal(perr)
	}
	m := userMessage("m-2", "b")
	m.TaskID = first.Task.ID
	r, perr := svc.SendMessage(ctx, Caller{}, &protocol.SendParams{Message: m, Blocking: true})
	if perr != nil {
		t.Fatal(perr)
	}
	if h := r.Task.History; len(h) != 3 || h[0].Role != protocol.RoleAgent || h[1].ID != "m-2" {
		t.Fatalf("history not trimmed to the 3 newest: %+v", h)
	}
}

package handler

import (
	"context"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// An untraced run costs no allocation for its trace: neither the spans
// nor their attributes are made.
func TestTraceRunUntracedAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	req := &upstream.RunRequest{}
	allocs := testing.AllocsPerRun(100, func() {
		c, end := traceRun(ctx, nil, req, "task-1", "ctx-1")
		end(RunOK)
		_ = c
	})
	if allocs != 0 {
		t.Fatalf("an untraced run's trace allocates %v times, want 0", allocs)
	}
	if req.Headers != nil {
		t.Fatalf("an untraced run's headers were touched: %v", req.Headers)
	}
}

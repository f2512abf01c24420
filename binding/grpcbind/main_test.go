package grpcbind

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine outlives them: a
// stream or a run the binding left behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

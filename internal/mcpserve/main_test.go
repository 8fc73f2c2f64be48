package mcpserve_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The server's goroutines (a call's, the update relay) end with it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

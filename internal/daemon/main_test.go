package daemon

import (
	"testing"

	"go.uber.org/goleak"
)

// A daemon that has returned from Run leaves no goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

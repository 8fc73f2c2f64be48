package admin

import (
	"testing"

	"go.uber.org/goleak"
)

// A closed server leaves no goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

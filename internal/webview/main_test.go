package webview

import (
	"testing"

	"go.uber.org/goleak"
)

// A closed view leaves no goroutine behind: its turn listeners, sampler,
// flow counter and event streams all end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

package testutil

import (
	"testing"
	"time"
)

// WaitFor polls cond every 10 ms until it holds, failing t after guard. The
// guard only turns a hang into a failure; it asserts nothing about speed.
func WaitFor(t testing.TB, guard time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

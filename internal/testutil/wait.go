package testutil

import (
	"testing"
	"time"
)

// The one family of waits in tests (DESIGN §7: no wall-clock limit in a
// unit test). Each waits for a condition and takes a guard that only turns
// a hang into a failure: it asserts nothing about speed, so it is generous
// (tens of seconds at least) and a slow or loaded machine only makes the
// wait longer, never the test fail.

// poll is how often a condition is checked.
const poll = 10 * time.Millisecond

// WaitFor polls cond every 10 ms until it holds, failing t after guard.
func WaitFor(t testing.TB, guard time.Duration, what string, cond func() bool) {
	t.Helper()
	WaitForValue(t, guard, what, func() (struct{}, bool) { return struct{}{}, cond() })
}

// WaitForValue polls f every 10 ms until it reports done, and returns the
// value it returned then. After guard it fails t, showing the last value
// (say the screen or log the test was reading).
func WaitForValue[T any](t testing.TB, guard time.Duration, what string, f func() (T, bool)) T {
	t.Helper()
	deadline := time.Now().Add(guard)
	for {
		v, done := f()
		if done {
			return v
		}
		if time.Now().After(deadline) {
			if _, empty := any(v).(struct{}); empty {
				t.Fatalf("gave up waiting for %s", what)
			} else {
				t.Fatalf("gave up waiting for %s; last seen:\n%v", what, v)
			}
			return v
		}
		time.Sleep(poll)
	}
}

// WaitForRecv returns the next value ch delivers, failing t after guard.
// A closed channel delivers its zero value, as a receive would.
func WaitForRecv[T any](t testing.TB, guard time.Duration, what string, ch <-chan T) T {
	t.Helper()
	timer := time.NewTimer(guard)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("gave up waiting for %s", what)
		var zero T
		return zero
	}
}

package wasm

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/manifest"
)

// loadRunLoop loads the runloop guest as capsule id, with the watchdog's
// window shortened for the test.
func loadRunLoop(t *testing.T, id string) *fixture {
	t.Helper()
	window, strikes := watchdogWindow, watchdogStrikes
	watchdogWindow, watchdogStrikes = 20*time.Millisecond, 3
	t.Cleanup(func() { watchdogWindow, watchdogStrikes = window, strikes })

	src := fmt.Sprintf(`[package]
name = %q
version = "0.1.0"

[[component]]
file = "runloop.wasm"

[subscribe]
"runloop.v1.noop" = { wit = "opaque", handler = "noop" }
`, id)
	m, diags := manifest.Parse([]byte(src), "Capsule.toml", "")
	if err := diags.Err(false); err != nil {
		t.Fatal(err)
	}
	f := &fixture{logs: &syncBuffer{}}
	f.harness, f.ws = newHarness(t, f.logs)
	f.rt = newRuntime(t, Options{Logger: f.harness.log})
	eng, err := f.load(t, f.rt, withComponent(m, guest(t, "testdata/runloop")), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f.eng = eng
	return f
}

// waitForLog polls the kernel log until cond holds; the limit only keeps a
// broken run loop from hanging the test.
func waitForLog(t *testing.T, f *fixture, what string, cond func(log string) bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond(f.logs.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; log:\n%s", what, f.logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRunLoopThatReceivesRunsOn: a run loop calling ipc_recv keeps running
// far past the watchdog's three windows, and the capsule's handlers still
// answer beside it (the loop has an instance of its own).
func TestRunLoopThatReceivesRunsOn(t *testing.T) {
	f := loadRunLoop(t, "runloop-busy")
	waitForLog(t, f, "progress", func(l string) bool { return strings.Count(l, "run loop progress") >= 3 })
	time.Sleep(20 * watchdogWindow)
	if l := f.logs.String(); strings.Contains(l, "restarting") || strings.Count(l, "run loop started") != 1 {
		t.Fatalf("a run loop making progress was stopped:\n%s", l)
	}
	if _, err := f.eng.Invoke(t.Context(), invocationOf("noop", "alice")); err != nil {
		t.Fatalf("a handler beside the run loop: %v", err)
	}
}

// TestRunLoopWithoutProgressIsRestarted: a run loop that never calls
// ipc_recv is interrupted after three windows and started again on a
// fresh instance.
func TestRunLoopWithoutProgressIsRestarted(t *testing.T) {
	f := loadRunLoop(t, "runloop-stuck")
	waitForLog(t, f, "a restart", func(l string) bool {
		return strings.Contains(l, "run loop ended; restarting") && strings.Count(l, "run loop started") >= 2
	})
	if l := f.logs.String(); !strings.Contains(l, "made no progress (no ipc_recv) for 3 windows") {
		t.Fatalf("the restart does not say why:\n%s", l)
	}
}

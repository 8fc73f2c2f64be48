package wasm

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/manifest"
)

// loadRunLoop loads the runloop guest as capsule id, with the watchdog's
// window shortened to window for the test.
func loadRunLoop(t *testing.T, id string, window time.Duration) *fixture {
	t.Helper()
	saved, strikes := watchdogWindow, watchdogStrikes
	watchdogWindow, watchdogStrikes = window, 3
	t.Cleanup(func() { watchdogWindow, watchdogStrikes = saved, strikes })

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

// waitForLog polls the kernel log until cond holds.
func waitForLog(t *testing.T, f *fixture, what string, cond func(log string) bool) {
	t.Helper()
	testutil.WaitForValue(t, guard, what, func() (string, bool) { l := f.logs.String(); return l, cond(l) })
}

// TestRunLoopThatReceivesRunsOn: a run loop calling ipc_recv keeps running
// past the watchdog's three windows, and the capsule's handlers still
// answer beside it (the loop has an instance of its own).
//
// The window is long enough for a loaded machine: the watchdog stops a
// loop that made no ipc_recv for three windows, and with 20 ms windows a
// loop whose thread waited 60 ms for a core (load 20 on 2 cores) was
// rightly stopped, failing the test. A loop starved for 1.5 s is not a
// loaded machine but a broken one.
func TestRunLoopThatReceivesRunsOn(t *testing.T) {
	f := loadRunLoop(t, "runloop-busy", 500*time.Millisecond)
	waitForLog(t, f, "progress", func(l string) bool { return strings.Count(l, "run loop progress") >= 3 })
	// Running on is what is tested, so only time shows it: a window more
	// than the strikes that would stop it.
	time.Sleep(time.Duration(watchdogStrikes+1) * watchdogWindow)
	if l := f.logs.String(); strings.Contains(l, "restarting") || strings.Count(l, "run loop started") != 1 {
		t.Fatalf("a run loop making progress was stopped:\n%s", l)
	}
	if _, err := f.eng.Invoke(t.Context(), invocationOf("noop", "alice")); err != nil {
		t.Fatalf("a handler beside the run loop: %v", err)
	}
}

// TestRunLoopWithoutProgressIsRestarted: a run loop that never calls
// ipc_recv is interrupted after three windows, and the engine fails
// saying why: the runtime's health monitor restarts the capsule (its test
// is internal/runtime's TestHealthRestartsACapsuleWhoseEngineFailed), the
// engine does not start the loop again by itself.
func TestRunLoopWithoutProgressFailsTheEngine(t *testing.T) {
	// Short windows: a loop that never receives is stopped after three
	// whatever the machine's load, which only delays the failure.
	f := loadRunLoop(t, "runloop-stuck", 20*time.Millisecond)
	testutil.WaitFor(t, guard, "the engine to fail", func() bool { return f.eng.Health().State == capsule.Failed })
	if err := f.eng.Health().Err; err == nil || !strings.Contains(err.Error(), "made no progress (no ipc_recv, net_accept or net_read) for 3 windows") {
		t.Fatalf("the failure does not say why: %v", err)
	}
	if l := f.logs.String(); strings.Count(l, "run loop started") != 1 {
		t.Fatalf("the engine started the loop again by itself:\n%s", l)
	}
}

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/internal/testutil"
)

// TestMain lets a test run this binary's main as a subprocess (to send it a
// signal) by re-executing the test binary with ASTRID_TEST_RUN_MAIN=1.
func TestMain(m *testing.M) {
	if os.Getenv("ASTRID_TEST_RUN_MAIN") == "1" {
		wasmCache = os.Getenv(testWasmCacheEnv)
		main()
		os.Exit(0)
	}
	os.Exit(runSharingWasmCode(m))
}

// testWasmCacheEnv names the compilation cache every process of a test run
// shares: compiling a Go-built capsule takes a race-instrumented kernel
// ~18 s, and each test's fresh home would compile the same modules again
// (TestReadmeExamples spent 83 s of cmd/astrid's race run on it).
const testWasmCacheEnv = "ASTRID_TEST_WASM_CACHE"

// runSharingWasmCode runs the tests with one wasm compilation cache for
// all the astrid processes they start, removed afterwards.
func runSharingWasmCode(m *testing.M) int {
	dir, err := os.MkdirTemp("", "astrid-test-wasm-cache-")
	if err != nil {
		return m.Run()
	}
	defer os.RemoveAll(dir)
	os.Setenv(testWasmCacheEnv, dir)
	wasmCache = dir
	return m.Run()
}

// Ctrl-C during a tool call ends astrid promptly: the pending call is
// cancelled, everything is unloaded and the state database is released.
func TestInterruptDuringAToolCallUnloadsCleanly(t *testing.T) {
	home := t.TempDir()
	ws := t.TempDir()
	// The call is still pending when the signal comes.
	pipe, _ := pendingFIFO(t, ws)
	cmd := astridProcess(home, "tool", "call", "read_file", `{"file_path":"`+filepath.Base(pipe)+`"}`, "--workspace", ws, "--timeout", "5m")
	var stderr testutil.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	// Wait until the call is in the fs capsule: the process has the pipe
	// open (a fixed sleep lost the race on a loaded machine, interrupting
	// the boot instead).
	waitForOpenFile(t, cmd.Process.Pid, pipe, &stderr)
	db := filepath.Join(home, "state.db")
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		if t.Failed() {
			t.Logf("stderr: %s", stderr.String())
		}
	}()
	err := testutil.WaitForRecv(t, daemonPatience, "astrid to exit after SIGINT", done)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Errorf("exit after an interrupted call: %v, want status 130", err)
	}
	if !strings.Contains(stderr.String(), "tool read_file: interrupted") {
		t.Errorf("stderr does not say which call was interrupted: %s", stderr.String())
	}
	// Everything was closed: the database opens at once.
	st, err := store.Open(db, store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatalf("state database still held after exit: %v", err)
	}
	st.Close()
}

// waitForOpenFile waits until process pid holds path open, failing the test
// after a generous deadline.
func waitForOpenFile(t *testing.T, pid int, path string, stderr *testutil.SyncBuffer) {
	t.Helper()
	fdDir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	testutil.WaitForValue(t, daemonPatience, fmt.Sprintf("process %d to open %s (its stderr shown)", pid, path), func() (string, bool) {
		fds, _ := os.ReadDir(fdDir)
		for _, fd := range fds {
			if target, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && target == path {
				return "", true
			}
		}
		return stderr.String(), false
	})
}

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
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
	// Wait until the kernel is up (the state database exists).
	db := filepath.Join(home, "state.db")
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, err := os.Stat(db); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("astrid never booted; stderr: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // let the call reach the fs capsule
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("astrid did not exit after SIGINT; stderr: %s", stderr.String())
	}
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

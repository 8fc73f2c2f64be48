package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/testutil"
	bolt "go.etcd.io/bbolt"
)

// astridProcess is `astrid args...` as its own process on home, run from
// this test binary (TestMain).
func astridProcess(home string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "ASTRID_TEST_RUN_MAIN=1", "ASTRID_HOME="+home)
	return cmd
}

// pendingFIFO makes a FIFO in ws: a read_file of it waits inside the fs
// capsule until the test writes to writer, and ends when writer is closed
// (at the latest at cleanup). The write end is opened first because without
// a writer a FIFO reads as empty at once.
func pendingFIFO(t *testing.T, ws string) (path string, writer *os.File) {
	t.Helper()
	pipe := filepath.Join(ws, "pipe")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	writer, err := os.OpenFile(pipe, os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("open fifo: %v", err)
	}
	t.Cleanup(func() { _ = writer.Close() })
	return pipe, writer
}

func exitStatus(t *testing.T, err error) int {
	t.Helper()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	}
	t.Fatalf("run astrid: %v", err)
	return -1
}

// Several astrid processes on one $ASTRID_HOME all work while one of them
// stays up in the middle of a call (its kernel has the store open
// throughout): none is shut out of the state database.
func TestManyAstridProcessesShareOneHome(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello from a"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The long-lived process reads a FIFO, which waits inside the fs
	// capsule until the test writes to it.
	_, writer := pendingFIFO(t, ws)
	long := astridProcess(home, "tool", "call", "read_file", `{"file_path":"pipe"}`, "--workspace", ws, "--timeout", "5m")
	var longOut, longErr testutil.SyncBuffer
	long.Stdout, long.Stderr = &longOut, &longErr
	if err := long.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = long.Process.Kill() }()
	testutil.WaitFor(t, 30*time.Second, "the long-lived astrid to boot", func() bool {
		_, err := os.Stat(filepath.Join(home, "state.db"))
		return err == nil
	})

	const others = 3
	var wg sync.WaitGroup
	results := make([]string, others)
	for i := range others {
		wg.Go(func() {
			cmd := astridProcess(home, "tool", "call", "read_file", `{"file_path":"a.txt"}`, "--workspace", ws)
			out, err := cmd.CombinedOutput()
			results[i] = fmt.Sprintf("exit %d: %s", exitStatus(t, err), out)
		})
	}
	wg.Wait()
	for i, r := range results {
		if !strings.HasPrefix(r, "exit 0:") || !strings.Contains(r, "hello from a") {
			t.Errorf("astrid %d beside a running one: %s", i, r)
		}
	}

	if _, err := writer.WriteString("from the fifo"); err != nil {
		t.Fatal(err)
	}
	if err := writer.Close(); err != nil {
		t.Fatal(err)
	}
	if code := exitStatus(t, long.Wait()); code != 0 || !strings.Contains(longOut.String(), "from the fifo") {
		t.Errorf("the long-lived astrid: exit %d, stdout %q, stderr %s", code, longOut.String(), longErr.String())
	}
}

// holdStateDB opens home's state.db with bbolt directly, as an older astrid
// or bbolt's own CLI would keep it, until the returned release.
func holdStateDB(t *testing.T, home string) (release func()) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(home, "state.db"), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return func() {
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// A process that keeps the state database past store_lock_wait makes
// astrid exit with its own status (75), naming the holder.
func TestStoreHeldPastTheWaitExits75(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("store_lock_wait = \"200ms\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	release := holdStateDB(t, home)

	cmd := astridProcess(home, "tool", "call", "read_file", `{"file_path":"a.txt"}`, "--workspace", ws)
	out, err := cmd.CombinedOutput()
	if code := exitStatus(t, err); code != exitStoreBusy {
		t.Fatalf("astrid while state.db is held: exit %d, want %d; output:\n%s", code, exitStoreBusy, out)
	}
	for _, want := range []string{
		filepath.Join(home, "state.db"),
		fmt.Sprintf("held by process %d", os.Getpid()),
		"for longer than 200ms",
		"database is in use",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("message does not contain %q:\n%s", want, out)
		}
	}

	release()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hi"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = astridProcess(home, "tool", "call", "read_file", `{"file_path":"a.txt"}`, "--workspace", ws).CombinedOutput()
	if code := exitStatus(t, err); code != 0 {
		t.Errorf("astrid after the holder let go: exit %d; output:\n%s", code, out)
	}
}

// capsule env set, which opens the store itself, waits store_lock_wait and
// exits 75 the same way.
func TestCapsuleEnvSetWhileStoreHeldExits75(t *testing.T) {
	home := astridHome(t)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("store_lock_wait = \"100ms\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	release := holdStateDB(t, home)
	_, errOut, code := runAstrid(t, "alice", "capsule", "env", "set", "svc", "NAME")
	if code != exitStoreBusy || !strings.Contains(errOut, "for longer than 100ms: database is in use") {
		t.Fatalf("capsule env set while state.db is held: exit %d, stderr %q; want %d and the wait named", code, errOut, exitStoreBusy)
	}
	release()
	if _, errOut, code := runAstrid(t, "alice", "capsule", "env", "set", "svc", "NAME"); code != 0 {
		t.Fatalf("capsule env set after the holder let go: exit %d, stderr %q", code, errOut)
	}
}

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

// pipeScript makes the model read the FIFO "pipe", which blocks inside the
// fs capsule until its writer writes.
const pipeScript = `{"match": {"tool_results": ["p1"]}}
{"TextDelta": "read it"}
"Done"
{"match": {"user": ""}}
{"ToolCallStart": {"id": "p1", "name": "read_file"}}
{"ToolCallDelta": {"id": "p1", "args_delta": "{\"file_path\":\"pipe\"}"}}
{"ToolCallEnd": {"id": "p1"}}
"Done"
`

// startPendingTurn starts `astrid -p` as its own process on a turn whose
// tool call is still pending when it returns.
func startPendingTurn(t *testing.T, extra ...string) (cmd *exec.Cmd, stderr *testutil.SyncBuffer, home string) {
	t.Helper()
	home = t.TempDir()
	ws := t.TempDir()
	pendingFIFO(t, ws)
	script := filepath.Join(ws, "script.jsonl")
	if err := os.WriteFile(script, []byte(pipeScript), 0o600); err != nil {
		t.Fatal(err)
	}
	set := astridProcess(home, "capsule", "env", "set", "astrid-capsule-replay", "script")
	set.Stdin = strings.NewReader(script)
	if out, err := set.CombinedOutput(); err != nil {
		t.Fatalf("env set: %v\n%s", err, out)
	}
	cmd = astridProcess(home, append([]string{"-p", "read the pipe", "--workspace", ws}, extra...)...)
	stderr = &testutil.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	testutil.WaitForValue(t, daemonPatience, "the tool call to start (stderr shown)", func() (string, bool) {
		s := stderr.String()
		return s, strings.Contains(s, "→ read_file")
	})
	return cmd, stderr, home
}

func waitExit(t *testing.T, cmd *exec.Cmd, stderr *testutil.SyncBuffer) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		if t.Failed() {
			t.Logf("stderr: %s", stderr.String())
		}
	}()
	err := testutil.WaitForRecv(t, daemonPatience, "astrid to exit", done)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode()
}

// Ctrl-C during a tool call cancels the turn (and its call), says so, exits
// 130 and leaves the state database released.
func TestPromptInterruptCancelsTheTurn(t *testing.T) {
	cmd, stderr, home := startPendingTurn(t)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, stderr); code != 130 {
		t.Fatalf("exit %d after Ctrl-C, want 130; stderr: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted; the turn was cancelled") {
		t.Fatalf("stderr does not say the turn was cancelled: %s", stderr.String())
	}
	st, err := store.Open(filepath.Join(home, "state.db"), store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatalf("state database still held after exit: %v", err)
	}
	st.Close()
}

// --timeout ends a turn whose tool never answers: exit 124, saying so.
func TestPromptTimeoutEndsAStuckTurn(t *testing.T) {
	cmd, stderr, _ := startPendingTurn(t, "--timeout", "1s")
	if code := waitExit(t, cmd, stderr); code != 124 {
		t.Fatalf("exit %d, want 124; stderr: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "no answer within --timeout 1s") {
		t.Fatalf("stderr does not name the timeout: %s", stderr.String())
	}
}

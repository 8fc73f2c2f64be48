package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/astrid-go/astrid/internal/testutil"
)

// daemonFor starts a daemon for $ASTRID_HOME working on ws and returns once
// its socket accepts a client; the test's cleanup kills it.
func daemonFor(t *testing.T, ws string) (home string) {
	t.Helper()
	home = os.Getenv("ASTRID_HOME")
	startedPid(t, home, ws)
	c, err := dialDaemon(context.Background(), home)
	if err != nil {
		t.Fatalf("astrid start returned before its socket accepted a client: %v", err)
	}
	c.Close()
	return home
}

// The tool commands talk to the running daemon: a call works on the
// caller's workspace (--workspace, else the current directory), never the
// daemon's, exactly as --no-daemon does; a mutable call is approved with
// --yes and refused without it exactly as in-process, and a --principal the
// daemon cannot honour is refused with a reason.
func TestToolCommandsThroughTheDaemon(t *testing.T) {
	ws := promptHome(t, plainScript)
	if err := os.WriteFile(filepath.Join(ws, "only-in-ws.txt"), []byte("served by the daemon"), 0o600); err != nil {
		t.Fatal(err)
	}
	inProcessList, errOut, code := runAstrid(t, "", "tool", "list", "--workspace", ws)
	if code != 0 {
		t.Fatalf("tool list in-process: exit %d: %s", code, errOut)
	}
	daemonFor(t, ws)

	read := []string{"tool", "call", "read_file", `{"file_path":"only-in-ws.txt"}`}
	// The current directory (this package's) has no such file: the
	// daemon's workspace is not the caller's.
	if out, errOut, code := runAstrid(t, "", read...); code != 1 || out != "" || errOut == "" {
		t.Fatalf("tool call through the daemon from another directory: exit %d: %q %s", code, out, errOut)
	}
	if out, errOut, code := runAstrid(t, "", append(read, "--workspace", ws)...); code != 0 || out != "served by the daemon\n" {
		t.Fatalf("tool call naming its workspace: exit %d: %q %s", code, out, errOut)
	}
	// --no-daemon boots in-process on the current directory, which has no such file.
	if out, errOut, code := runAstrid(t, "", append(read, "--no-daemon")...); code != 1 || out != "" || errOut == "" {
		t.Fatalf("--no-daemon should work on the cwd and fail: exit %d: %q %s", code, out, errOut)
	}
	if out, errOut, code := runAstrid(t, "", append([]string{"--no-daemon"}, append(read, "--workspace", ws)...)...); code != 0 || out != "served by the daemon\n" {
		t.Fatalf("--no-daemon --workspace: exit %d: %q %s", code, out, errOut)
	}

	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "only-in-ws.txt"), []byte("the other one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := runAstrid(t, "", append(read, "--workspace", other)...); code != 0 || out != "the other one\n" {
		t.Fatalf("another --workspace through the daemon: exit %d: %q %s", code, out, errOut)
	}
	if _, errOut, code := runAstrid(t, "", append(read, "--principal", "bob")...); code != 2 || !strings.Contains(errOut, `serves you as principal "default"`) {
		t.Fatalf("another --principal through the daemon: exit %d: %s", code, errOut)
	}

	// Approvals: denied without a terminal, allowed with --yes.
	write := []string{"tool", "call", "write_file", `{"file_path":"written.txt","content":"by the daemon"}`, "--workspace", ws}
	if _, errOut, code := runAstrid(t, "", write...); code != 1 {
		t.Fatalf("a mutable call without --yes through the daemon: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, "written.txt")); !os.IsNotExist(err) {
		t.Fatalf("the denied write happened (%v)", err)
	}
	if _, errOut, code := runAstrid(t, "", append(write, "--yes")...); code != 0 {
		t.Fatalf("a mutable call with --yes through the daemon: exit %d: %s", code, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "written.txt")); err != nil || string(b) != "by the daemon" {
		t.Fatalf("the approved write: %q, %v", b, err)
	}
	if _, errOut, code := runAstrid(t, "", "tool", "call", "no_such_tool"); code != 1 || errOut == "" {
		t.Fatalf("an unknown tool through the daemon: exit %d: %s", code, errOut)
	}

	out, errOut, code := runAstrid(t, "", "tool", "list")
	if code != 0 || out != inProcessList {
		t.Fatalf("tool list through the daemon differs from in-process: exit %d: %s\n--- daemon\n%s\n--- in-process\n%s", code, errOut, out, inProcessList)
	}
}

// astrid -p, session and models talk to the running daemon: the demo turn
// reads the README of the caller's workspace (another one's through the
// same daemon), the session it kept is listed, shown and deleted through the
// daemon, exit statuses are those of in-process, and models list prints
// what --no-daemon prints.
func TestPromptSessionsAndModelsThroughTheDaemon(t *testing.T) {
	ws := promptHome(t, "")
	modelsInProcess, errOut, code := runAstrid(t, "", "models", "list", "--workspace", ws)
	if code != 0 {
		t.Fatalf("models list in-process: exit %d: %s", code, errOut)
	}
	daemonFor(t, ws)

	out, errOut, code := runAstrid(t, "", "-p", "What does README.md say?", "--workspace", ws)
	sd := sessionNamed(t, errOut)
	if code != 0 || !strings.Contains(out, "I read README.md") {
		t.Fatalf("-p through the daemon: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, `→ read_file {"file_path":"README.md"}`) || !strings.Contains(errOut, "# Demo workspace") || !strings.Contains(errOut, "session "+sd+" (continue with --session "+sd+")") {
		t.Fatalf("-p through the daemon: stderr lacks the tool call's notes or the session:\n%s", errOut)
	}
	if _, errOut, code := runAstrid(t, "", "-p", "again", "--timeout", "1ns"); code != 124 || !strings.Contains(errOut, "--timeout") {
		t.Fatalf("-p --timeout 1ns through the daemon: exit %d: %s", code, errOut)
	}
	// Another workspace, through the same daemon: its README, not ws's.
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "README.md"), []byte("# The other project\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := runAstrid(t, "", "-p", "What does README.md say?", "--workspace", other); code != 0 || !strings.Contains(errOut, "# The other project") || strings.Contains(errOut, "# Demo workspace") {
		t.Fatalf("-p with another --workspace through the daemon: exit %d: %q\n%s", code, out, errOut)
	}

	if out, errOut, code := runAstrid(t, "", "session", "list"); code != 0 || !strings.Contains(out, sd) {
		t.Fatalf("session list through the daemon: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := runAstrid(t, "", "session", "show", sd); code != 0 || !strings.Contains(out, "user: What does README.md say?") {
		t.Fatalf("session show through the daemon: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := runAstrid(t, "", "session", "delete", sd); code != 0 || !strings.Contains(errOut, "deleted session "+sd) {
		t.Fatalf("session delete through the daemon: exit %d, %s", code, errOut)
	}
	if _, errOut, code := runAstrid(t, "", "session", "delete", sd); code != 1 || !strings.Contains(errOut, "no session "+sd) {
		t.Fatalf("second session delete through the daemon: exit %d, %s", code, errOut)
	}

	if out, errOut, code := runAstrid(t, "", "models", "list"); code != 0 || out != modelsInProcess {
		t.Fatalf("models list through the daemon: exit %d: %s\n--- daemon\n%s--- in-process\n%s", code, errOut, out, modelsInProcess)
	}
}

// pipeDaemon starts a daemon whose replayed turn, asked from ws, blocks
// in a tool call reading a FIFO; it returns the home, ws and the daemon's
// pid.
func pipeDaemon(t *testing.T) (home, ws string, pid int) {
	t.Helper()
	home, ws = t.TempDir(), t.TempDir()
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
	return home, ws, startedPid(t, home, ws)
}

// startPipeTurn starts `astrid -p` on the daemon of home and returns once
// its tool call is pending.
func startPipeTurn(t *testing.T, home, ws string) (*exec.Cmd, *testutil.SyncBuffer) {
	t.Helper()
	cmd := astridProcess(home, "-p", "read the pipe")
	cmd.Dir = ws // the caller's workspace, where the FIFO is
	stderr := &testutil.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	testutil.WaitFor(t, daemonPatience, "the tool call to start through the daemon", func() bool { return strings.Contains(stderr.String(), "→ read_file") })
	return cmd, stderr
}

// Ctrl-C of `astrid -p` through the daemon cancels the turn in the daemon
// (its tool call waits on a FIFO), exits 130 saying so, and the daemon
// goes on serving.
func TestPromptInterruptThroughTheDaemon(t *testing.T) {
	home, ws, _ := pipeDaemon(t)
	cmd, stderr := startPipeTurn(t, home, ws)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, stderr); code != 130 || !strings.Contains(stderr.String(), "interrupted; the turn was cancelled") {
		t.Fatalf("exit %d after Ctrl-C through the daemon; stderr: %s", code, stderr.String())
	}
	if out, code := runProcess(t, home, "tool", "call", "list_directory", `{"dir_path":"."}`, "--workspace", ws); code != 0 || !strings.Contains(out, "script.jsonl") {
		t.Fatalf("a tool call after the interrupted turn: exit %d: %s", code, out)
	}
}

// kill -9 of the daemon mid-turn: the client says the daemon went away and
// exits 1 instead of waiting.
func TestPromptWhenTheDaemonDiesMidTurn(t *testing.T) {
	home, ws, pid := pipeDaemon(t)
	cmd, stderr := startPipeTurn(t, home, ws)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, stderr); code != 1 || !strings.Contains(stderr.String(), "daemon") {
		t.Fatalf("exit %d after the daemon was killed mid-turn; stderr: %s", code, stderr.String())
	}
}

package main

import (
	"context"
	"encoding/json"
	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/ipc"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/daemon"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/internal/testutil"
)

// daemonPatience bounds the waits of the daemon's process tests for what
// takes milliseconds: only a broken daemon reaches it.
const daemonPatience = 2 * time.Minute

// runProcess runs `astrid args...` as its own process on home and returns
// its combined output and exit status.
func runProcess(t *testing.T, home string, args ...string) (string, int) {
	t.Helper()
	out, err := astridProcess(home, args...).CombinedOutput()
	return string(out), exitStatus(t, err)
}

// startedPid runs `astrid start` and returns the pid it prints.
func startedPid(t *testing.T, home, ws string) int {
	t.Helper()
	out, code := runProcess(t, home, "start", "--workspace", ws)
	var pid int
	if code != 0 || !strings.HasPrefix(out, "astrid daemon started (pid ") {
		t.Fatalf("start: exit %d: %s", code, out)
	}
	pid, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(out), "astrid daemon started (pid "), ")"))
	if err != nil {
		t.Fatalf("start printed %q", out)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	logDaemonOnFailure(t, home)
	return pid
}

// statusOf runs `astrid status --json`.
func statusOf(t *testing.T, home string) (statusReport, int) {
	t.Helper()
	out, code := runProcess(t, home, "status", "--json")
	var rep statusReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("status --json: exit %d: %v: %s", code, err, out)
	}
	return rep, code
}

func writeCapsule(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

const notesManifest = "[package]\nname = \"notes\"\nversion = \"0.1.0\"\n[[context_file]]\nname = \"notes\"\nfile = \"notes.md\"\n"

// The daemon's life as its processes show it: start prints the pid and a
// second start (or a foreground daemon) is refused naming it; status shows
// it; SIGHUP reloads a changed capsule; kill -9 leaves stale files that
// status sees through and the next start cleans, with the state written
// before intact; stop shuts it down cleanly and the store opens at once.
func TestDaemonProcessLifecycle(t *testing.T) {
	ws := promptHome(t, plainScript)
	home := os.Getenv("ASTRID_HOME")
	p := daemon.PathsOf(home)
	// State written before the daemon: a session, through a replayed turn.
	out, errOut, code := runAstrid(t, "", "-p", "a plain question", "--workspace", ws)
	if code != 0 {
		t.Fatalf("-p: exit %d: %s %s", code, out, errOut)
	}
	kept := sessionNamed(t, errOut)
	writeCapsule(t, filepath.Join(home, "capsules", "notes"), map[string]string{"Capsule.toml": notesManifest, "notes.md": "first"})
	// Copied in by hand, so approved as an operator would (it would not load otherwise).
	if _, errOut, code := runAstrid(t, "", "capsule", "approve", "notes", "--yes"); code != 0 {
		t.Fatalf("approve notes: exit %d: %s", code, errOut)
	}

	if out, code := runProcess(t, home, "status"); code != exitNotRunning || !strings.Contains(out, "not running") {
		t.Fatalf("status before start: exit %d: %s", code, out)
	}
	pid := startedPid(t, home, ws)
	for _, args := range [][]string{{"start"}, {"daemon", "--workspace", ws}} {
		out, code := runProcess(t, home, args...)
		if code != 1 || !strings.Contains(out, "already runs") || !strings.Contains(out, "pid "+strconv.Itoa(pid)) {
			t.Fatalf("%v while one runs: exit %d: %s", args, code, out)
		}
	}
	rep, code := statusOf(t, home)
	if code != 0 || !rep.Running || rep.Pid != pid || rep.Status == nil || len(rep.Capsules) == 0 {
		t.Fatalf("status: exit %d: %+v", code, rep)
	}
	if out, code := runProcess(t, home, "status"); code != 0 || !strings.Contains(out, "running, pid "+strconv.Itoa(pid)) || !strings.Contains(out, "notes") {
		t.Fatalf("status: exit %d: %s", code, out)
	}

	// A client reaches the daemon's kernel through the socket the uplink
	// capsule serves: a tool call reads a file of the daemon's workspace.
	if err := os.WriteFile(filepath.Join(ws, "through-the-socket.txt"), []byte("served by the daemon"), 0o600); err != nil {
		t.Fatal(err)
	}
	var client *daemonclient.Client
	testutil.WaitFor(t, daemonPatience, "the uplink to accept a client", func() bool {
		c, err := dialDaemon(context.Background(), home)
		if err == nil {
			client = c
		}
		return err == nil
	})
	res, err := toolclient.CallTool(context.Background(), client, ipc.DefaultPrincipal, "read_file", []byte(`{"file_path":"through-the-socket.txt"}`), daemonPatience)
	client.Close()
	if err != nil || res.IsError || !strings.Contains(res.Content, "served by the daemon") {
		t.Fatalf("tool call through the daemon: %+v, %v", res, err)
	}

	// SIGHUP reloads the changed capsule (the log says the reload did, not
	// the watcher, which logs no action).
	if err := os.WriteFile(filepath.Join(home, "capsules", "notes", "notes.md"), []byte("second, longer"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, daemonPatience, "the SIGHUP reload in the log", func() bool {
		b, _ := os.ReadFile(p.Log)
		return strings.Contains(string(b), `"msg":"capsule reloaded","capsule":"notes","action":"reloaded"`)
	})

	// The watcher is on: a capsule installed while the daemon runs loads
	// without a signal.
	src := filepath.Join(t.TempDir(), "later")
	writeCapsule(t, src, map[string]string{
		"Capsule.toml": strings.ReplaceAll(notesManifest, `name = "notes"`+"\nversion", `name = "later"`+"\nversion"), "notes.md": "later"})
	if _, errOut, code := runAstrid(t, "", "capsule", "install", src, "--yes"); code != 0 {
		t.Fatalf("install later: exit %d: %s", code, errOut)
	}
	testutil.WaitFor(t, daemonPatience, "the watcher to load a capsule copied in", func() bool {
		rep, _ := statusOf(t, home)
		for _, c := range rep.Capsules {
			if c.ID == "later" {
				return c.State == "ready"
			}
		}
		return false
	})

	// A reload that fails keeps the running capsule, and status says why.
	writeCapsule(t, filepath.Join(home, "capsules", "notes"), map[string]string{
		"Capsule.toml": notesManifest + "[[command]]\nname = \"c\"\nfile = \"c.toml\"\n", "c.toml": "= broken"})
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, daemonPatience, "status to show the failed reload", func() bool {
		rep, _ := statusOf(t, home)
		for _, c := range rep.Capsules {
			if c.ID == "notes" {
				return c.State == "ready" && strings.Contains(c.Error, "the running capsule is kept") && strings.Contains(c.Error, "c.toml")
			}
		}
		return false
	})

	// kill -9: the files stay, the lock goes with the process.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, daemonPatience, "the killed daemon's lock to be free", func() bool {
		_, err := daemon.Running(home)
		return err != nil
	})
	if _, err := os.Stat(p.Pid); err != nil {
		t.Fatalf("kill -9 should leave the pid file: %v", err)
	}
	if out, code := runProcess(t, home, "status"); code != exitNotRunning || !strings.Contains(out, "not running") {
		t.Fatalf("status after kill -9 (stale pid file): exit %d: %s", code, out)
	}
	pid2 := startedPid(t, home, ws)
	if pid2 == pid {
		t.Fatalf("the same pid %d again", pid)
	}
	log, _ := os.ReadFile(p.Log)
	if !strings.Contains(string(log), "left behind") || !strings.Contains(string(log), "astrid.pid") {
		t.Errorf("the restart does not say it cleaned the stale pid file:\n%s", log)
	}
	if out, errOut, code := runAstrid(t, "", "session", "list"); code != 0 || !strings.Contains(out, kept) {
		t.Fatalf("session list after kill -9 and restart: exit %d: %s %s", code, out, errOut)
	}

	if out, code := runProcess(t, home, "stop"); code != 0 || out != "astrid daemon stopped (pid "+strconv.Itoa(pid2)+")\n" {
		t.Fatalf("stop: exit %d: %s", code, out)
	}
	for _, f := range []string{p.Pid, p.Status, p.Socket} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s left after stop (%v)", f, err)
		}
	}
	st, err := store.Open(filepath.Join(home, "state.db"), store.Options{Timeout: 10 * time.Millisecond})
	if err != nil {
		t.Fatalf("store after stop: %v", err)
	}
	st.Close()
	if out, code := runProcess(t, home, "stop"); code != 1 || !strings.Contains(out, "no daemon runs") {
		t.Fatalf("stop with none running: exit %d: %s", code, out)
	}
}

// start refuses a read-only home with a clear error, and leaves nothing
// running.
func TestDaemonStartOnReadOnlyHome(t *testing.T) {
	home := t.TempDir()
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", home).Run(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = exec.Command("umount", home).Run() })
	// A home made by an earlier run, then the disk turned read-only.
	if out, code := runProcess(t, home, "status"); code != exitNotRunning {
		t.Fatalf("status: exit %d: %s", code, out)
	}
	if err := exec.Command("mount", "-o", "remount,ro", home).Run(); err != nil {
		t.Skipf("cannot remount read-only: %v", err)
	}
	for _, cmd := range []string{"daemon", "start"} {
		out, code := runProcess(t, home, cmd)
		if code != 1 || !strings.Contains(out, "is on a read-only file system") || !strings.Contains(out, home) {
			t.Fatalf("%s on a read-only home: exit %d: %s", cmd, code, out)
		}
	}
}

// The foreground daemon logs to the terminal as text (and to the file as
// JSON), and Ctrl-C stops it cleanly: exit 0, run files removed.
func TestDaemonForegroundInterrupt(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	cmd := astridProcess(home, "daemon", "--workspace", ws)
	var stderr testutil.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	testutil.WaitFor(t, daemonPatience, "the foreground daemon to be ready", func() bool {
		pid, err := daemon.Running(home)
		return err == nil && pid == cmd.Process.Pid
	})
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGINT: %v; stderr:\n%s", err, stderr.String())
	}
	for _, want := range []string{`msg="daemon ready"`, `msg="daemon stopping"`, `msg="daemon stopped"`} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("the terminal log has no %s:\n%s", want, stderr.String())
		}
	}
	log, _ := os.ReadFile(daemon.PathsOf(home).Log)
	if !strings.Contains(string(log), `"msg":"daemon stopped"`) {
		t.Errorf("the log file has no JSON stop record:\n%s", log)
	}
	if _, err := os.Stat(daemon.PathsOf(home).Pid); !os.IsNotExist(err) {
		t.Errorf("pid file after SIGINT: %v", err)
	}
}

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/testutil"
)

var restartedPid = regexp.MustCompile(`astrid daemon (?:restarted|was not running; started) \(pid (\d+)\)`)

// restartOf runs `astrid restart args...` and returns the new daemon's pid.
func restartOf(t *testing.T, home string, args ...string) (int, string) {
	t.Helper()
	out, code := runProcess(t, home, append([]string{"restart"}, args...)...)
	m := restartedPid.FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("restart: exit %d: %s", code, out)
	}
	pid, _ := strconv.Atoi(m[1])
	return pid, out
}

// restart replaces the daemon by a new process with the old one's
// arguments (its workspace kept), --workspace changes only that, and with
// no daemon running it starts one and says so.
func TestRestartKeepsTheDaemonsArguments(t *testing.T) {
	home := t.TempDir()
	ws1, ws2 := t.TempDir(), t.TempDir()
	stopDaemonAtCleanup(t, home)

	cmd := astridProcess(home, "restart")
	cmd.Dir = ws1
	out, err := cmd.CombinedOutput()
	if code := exitStatus(t, err); code != 0 || !strings.Contains(string(out), "was not running; started") {
		t.Fatalf("restart with no daemon: exit %d: %s", code, out)
	}
	first := pidOf(t, restartedPid.FindStringSubmatch(string(out)))
	if rep, _ := statusOf(t, home); !rep.Running || rep.Pid != first || rep.Status == nil || rep.Status.Workspace != ws1 {
		t.Fatalf("after restart with none running: %+v", rep)
	}

	second, out2 := restartOf(t, home)
	if second == first || !strings.Contains(out2, "astrid daemon restarted") {
		t.Fatalf("restart kept pid %d: %s", first, out2)
	}
	// The lock is free once the old daemon has shut down; its process
	// ends just after.
	testutil.WaitFor(t, daemonPatience, "the old daemon's process to end", func() bool { return exited(first) })
	if rep, _ := statusOf(t, home); rep.Pid != second || rep.Status == nil || rep.Status.Workspace != ws1 {
		t.Fatalf("after restart: %+v, want pid %d in %s", rep, second, ws1)
	}

	third, _ := restartOf(t, home, "--workspace", ws2)
	if rep, _ := statusOf(t, home); rep.Pid != third || rep.Status == nil || rep.Status.Workspace != ws2 {
		t.Fatalf("after restart --workspace: %+v, want %s", rep, ws2)
	}
	if _, err := os.Stat(filepath.Join(home, "run")); err != nil {
		t.Fatal(err)
	}
}

// exited reports whether pid names no running process (gone, or a zombie
// nobody reaped yet).
func exited(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	_, after, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(after, "Z") || strings.HasPrefix(after, "X")
}

func pidOf(t *testing.T, m []string) int {
	t.Helper()
	if m == nil {
		t.Fatal("no pid printed")
	}
	pid, err := strconv.Atoi(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

//go:build linux

package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/testutil"
)

const procCapsule = `
[package]
name = "runner"
version = "0.1.0"
[capabilities]
fs_read = ["*"]
fs_write = ["*"]
host_process = ["sh", "sleep", "cat", "yes", "head"]
`

func procCall(t *testing.T) (fixture, *Capsule, *Call) {
	t.Helper()
	f := newFixture(t)
	c := f.capsule(t, procCapsule)
	call, _ := c.Begin(context.Background(), "default")
	t.Cleanup(call.End)
	return f, c, call
}

// badProcessRequest is an attack on a process call and how it is refused.
type badProcessRequest struct {
	name string
	req  hostapi.ProcessRequest
	code hostapi.Code
	says string
}

// badProcessRequests lists what an attacker would try with a process
// request, each refused with its code before anything runs; it plants the
// symlink and the file some of them need in f's workspace.
func badProcessRequests(t *testing.T, f fixture) []badProcessRequest {
	t.Helper()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(f.ws, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.ws, "file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return []badProcessRequest{
		{"NUL in an argument", hostapi.ProcessRequest{Program: "sh", Args: []string{"-c", "echo a\x00b"}}, hostapi.CodeInvalid, "NUL"},
		{"NUL in the program", hostapi.ProcessRequest{Program: "sh\x00"}, hostapi.CodeInvalid, "NUL"},
		{"NUL in an env value", hostapi.ProcessRequest{Program: "sh", Env: map[string]string{"A": "x\x00"}}, hostapi.CodeInvalid, "NUL"},
		{"1 MiB argument", hostapi.ProcessRequest{Program: "sh", Args: []string{strings.Repeat("a", 1<<20)}}, hostapi.CodeTooLarge, "over"},
		{"LD_PRELOAD", hostapi.ProcessRequest{Program: "sh", Env: map[string]string{"LD_PRELOAD": "/tmp/evil.so"}}, hostapi.CodeDenied, "LD_PRELOAD"},
		{"ld_library_path lower case", hostapi.ProcessRequest{Program: "sh", Env: map[string]string{"ld_library_path": "/tmp"}}, hostapi.CodeDenied, "ld_library_path"},
		{"DYLD_INSERT_LIBRARIES", hostapi.ProcessRequest{Program: "sh", Env: map[string]string{"DYLD_INSERT_LIBRARIES": "x"}}, hostapi.CodeDenied, "DYLD"},
		{"BASH_ENV", hostapi.ProcessRequest{Program: "sh", Env: map[string]string{"BASH_ENV": "/tmp/x"}}, hostapi.CodeDenied, "BASH_ENV"},
		{"key with =", hostapi.ProcessRequest{Program: "sh", Env: map[string]string{"A=B": "x"}}, hostapi.CodeDenied, "letters"},
		{"program not granted", hostapi.ProcessRequest{Program: "bash"}, hostapi.CodeDenied, "host_process"},
		{"granted name by another path", hostapi.ProcessRequest{Program: "/bin/sh"}, hostapi.CodeDenied, "host_process"},
		{"shell metacharacters are not a program", hostapi.ProcessRequest{Program: "sh; rm -rf /"}, hostapi.CodeDenied, "host_process"},
		{"working directory outside the grants", hostapi.ProcessRequest{Program: "sh", Dir: outside}, hostapi.CodeDenied, "working directory"},
		{"working directory with ..", hostapi.ProcessRequest{Program: "sh", Dir: "../.."}, hostapi.CodeDenied, "working directory"},
		{"working directory through a symlink out", hostapi.ProcessRequest{Program: "sh", Dir: "out"}, hostapi.CodeDenied, "symlink"},
		{"working directory that is a file", hostapi.ProcessRequest{Program: "sh", Dir: "file"}, hostapi.CodeInvalid, "not a directory"},
	}
}

// TestProcessRunRefusesBadInput: what an attacker would try, each refused
// with its code before anything runs.
func TestProcessRunRefusesBadInput(t *testing.T) {
	f, _, call := procCall(t)
	cases := badProcessRequests(t, f)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := call.ProcessRun(tc.req)
			if hostapi.CodeOf(err) != tc.code || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err = %v (code %v), want code %v saying %q", err, hostapi.CodeOf(err), tc.code, tc.says)
			}
		})
	}
}

func TestProcessRunRunsWithCleanEnvAndDir(t *testing.T) {
	f, _, call := procCall(t)
	if err := os.Mkdir(filepath.Join(f.ws, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ASTRID_SECRET_FOR_TEST", "leak")
	res, err := call.ProcessRun(hostapi.ProcessRequest{
		Program: "sh", Args: []string{"-c", `pwd; echo "$GREETING"; echo "${ASTRID_SECRET_FOR_TEST:-clean}"; cat; echo err >&2; exit 3`},
		Env: map[string]string{"GREETING": "hello"}, Dir: "sub", Stdin: []byte("from stdin\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(f.ws, "sub") + "\nhello\nclean\nfrom stdin\n"
	if string(res.Stdout) != want || string(res.Stderr) != "err\n" || res.ExitCode != 3 {
		t.Fatalf("got %+v, stdout %q", res, res.Stdout)
	}
}

// TestProcessRunCapsOutput: a child writing 1 GiB is drained, a cap kept.
func TestProcessRunCapsOutput(t *testing.T) {
	_, _, call := procCall(t)
	res, err := call.ProcessRun(hostapi.ProcessRequest{Program: "head", Args: []string{"-c", "1073741824", "/dev/zero"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stdout) != hostapi.MaxProcessOutput || !res.StdoutTruncated || res.StdoutBytes != 1<<30 || res.ExitCode != 0 {
		t.Fatalf("kept %d, truncated %v, counted %d, exit %d", len(res.Stdout), res.StdoutTruncated, res.StdoutBytes, res.ExitCode)
	}
}

// waitForFile waits for a file the child writes (its pid, or a mark).
func waitForFile(t *testing.T, path string) string {
	t.Helper()
	return testutil.WaitForValue(t, testWait, path+" to be written", func() (string, bool) {
		b, err := os.ReadFile(path)
		return strings.TrimSpace(string(b)), err == nil && strings.HasSuffix(string(b), "\n")
	})
}

// gone fails if any process named in pids still exists (kill -0).
func gone(t *testing.T, pids ...string) {
	t.Helper()
	for _, s := range pids {
		pid, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("pid %q: %v", s, err)
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			st, _ := readStat(pid)
			t.Errorf("process %d survived (kill -0: %v, stat %+v)", pid, err, st)
		}
	}
}

// TestProcessCancelSIGINTThenSIGKILL: a cancel request naming the call's key
// sends SIGINT to the group, then SIGKILL after the grace to one that traps
// it; nothing that escaped by setsid and a double fork survives.
func TestProcessCancelSIGINTThenSIGKILL(t *testing.T) {
	cases := []struct {
		name   string
		script string
		signal string // what ends the child
	}{
		{"sleep 600", `echo $$ > pid.tmp; mv pid.tmp pid; exec sleep 600`, "interrupt"},
		{"traps SIGINT", `trap 'echo int >> got' INT; echo $$ > pid.tmp; mv pid.tmp pid; while :; do sleep 0.05; done`, "killed"},
		{"setsid and double fork", `sh -c 'sh -c "trap \"\" INT; echo \$\$ > esc.tmp; mv esc.tmp esc; exec sleep 600" & ' ; echo $$ > pid.tmp; mv pid.tmp pid; exec sleep 600`, "interrupt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, _, call := procCall(t)
			if err := call.SetCancelKey("tool-call-1"); err != nil {
				t.Fatal(err)
			}
			script := tc.script
			if tc.name == "setsid and double fork" {
				// The grandchild leaves the session with setsid(1) if the
				// image has it, else with a new process group via sh's
				// job control; either way its parent exits first.
				script = strings.Replace(script, `sh -c "trap`, `$(command -v setsid || echo "sh -mc") sh -c "trap`, 1)
			}
			type out struct {
				res hostapi.ProcessResult
				err error
			}
			done := make(chan out, 1)
			go func() {
				res, err := call.ProcessRun(hostapi.ProcessRequest{Program: "sh", Args: []string{"-c", script}})
				done <- out{res, err}
			}()
			pid := waitForFile(t, filepath.Join(f.ws, "pid"))
			var esc string
			if strings.Contains(tc.name, "double fork") {
				esc = waitForFile(t, filepath.Join(f.ws, "esc"))
				// The test proves something only if the grandchild did
				// escape: out of the child's session and group, its
				// parent gone (re-parented to this process, the subreaper).
				n, _ := strconv.Atoi(esc)
				child, _ := strconv.Atoi(pid)
				testutil.WaitForValue(t, testWait, fmt.Sprintf("the grandchild to escape child %d", child), func() (any, bool) {
					st, ok := readStat(n)
					return st, ok && st.sid != child && st.pgid != child && st.ppid == os.Getpid()
				})
			}
			if n := f.deps.Cancels.CancelFor("", errors.New("cancelled by the user"), "tool-call-1"); n != 1 {
				t.Fatalf("cancel reached %d calls", n)
			}
			o := <-done
			if hostapi.CodeOf(o.err) != hostapi.CodeCancelled || !o.res.Cancelled {
				t.Fatalf("err %v, result %+v: want cancelled", o.err, o.res)
			}
			if o.res.Signal != tc.signal {
				t.Errorf("child ended by %q, want %q", o.res.Signal, tc.signal)
			}
			if tc.signal == "killed" {
				if b, _ := os.ReadFile(filepath.Join(f.ws, "got")); !strings.Contains(string(b), "int") {
					t.Errorf("the trap never saw SIGINT before SIGKILL")
				}
			}
			gone(t, pid)
			if esc != "" {
				gone(t, esc)
			}
		})
	}
}

// TestProcessBackgroundChildKilledAtEnd: a child that exits leaving a
// background process behind leaves nothing running.
func TestProcessBackgroundChildKilledAtEnd(t *testing.T) {
	f, _, call := procCall(t)
	res, err := call.ProcessRun(hostapi.ProcessRequest{Program: "sh", Args: []string{"-c", `sleep 600 >/dev/null 2>&1 & echo $! > bg.tmp; mv bg.tmp bg; echo done`}})
	if err != nil || string(res.Stdout) != "done\n" {
		t.Fatalf("%v %+v", err, res)
	}
	gone(t, waitForFile(t, filepath.Join(f.ws, "bg")))
}

// TestProcessForkLoopBounded: a loop forking sleepers is killed past the
// per-run process limit, and none of its processes remains.
func TestProcessForkLoopBounded(t *testing.T) {
	f, _, call := procCall(t)
	res, err := call.ProcessRun(hostapi.ProcessRequest{Program: "sh", Args: []string{"-c", `while :; do sleep 600 & echo $! >> pids; done`}})
	if hostapi.CodeOf(err) != hostapi.CodeTooLarge || !strings.Contains(err.Error(), "processes") {
		t.Fatalf("err %v, result %+v", err, res)
	}
	b, _ := os.ReadFile(filepath.Join(f.ws, "pids"))
	pids := strings.Fields(string(b))
	// The shell records each sleeper's pid before forking the next, and the
	// bound is seen once more than MaxProcessDescendants exist (the shell and its
	// sleepers), so at least MaxProcessDescendants-1 pids are on file: the last
	// sleeper may be killed before the shell writes its pid.
	if len(pids) < hostapi.MaxProcessDescendants-1 {
		t.Fatalf("only %d sleepers were started", len(pids))
	}
	gone(t, pids...)
}

// TestProcessTimeoutAndUnload: the request's timeout ends a run, and an
// unload ends the capsule's running children.
func TestProcessTimeoutAndUnload(t *testing.T) {
	f, c, call := procCall(t)
	res, err := call.ProcessRun(hostapi.ProcessRequest{Program: "sleep", Args: []string{"600"}, Timeout: 50 * time.Millisecond})
	if hostapi.CodeOf(err) != hostapi.CodeTimeout || !res.TimedOut {
		t.Fatalf("err %v, result %+v", err, res)
	}
	done := make(chan error, 1)
	go func() {
		_, err := call.ProcessRun(hostapi.ProcessRequest{Program: "sh", Args: []string{"-c", "echo $$ > started.tmp; mv started.tmp started; exec sleep 600"}})
		done <- err
	}()
	// Started, so tracked: a run the unload finds, or one added after it,
	// which is killed at once.
	waitForFile(t, filepath.Join(f.ws, "started"))
	c.Close()
	if err := <-done; hostapi.CodeOf(err) != hostapi.CodeCancelled {
		t.Fatalf("after unload: %v", err)
	}
}

// TestProcessRunsDoNotKillEachOther: a run ending (and sweeping for its
// escaped orphans) leaves another capsule's running child alone.
func TestProcessRunsDoNotKillEachOther(t *testing.T) {
	f, _, call := procCall(t)
	other := f.capsule(t, strings.Replace(procCapsule, `name = "runner"`, `name = "other"`, 1))
	ocall, _ := other.Begin(context.Background(), "default")
	defer ocall.End()
	if err := ocall.SetCancelKey("long"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ocall.ProcessRun(hostapi.ProcessRequest{Program: "sh", Args: []string{"-c", `echo $$ > long.tmp; mv long.tmp long; exec sleep 600`}})
		done <- err
	}()
	long := waitForFile(t, filepath.Join(f.ws, "long"))
	pid, _ := strconv.Atoi(long)
	for i := range 5 {
		if _, err := call.ProcessRun(hostapi.ProcessRequest{Program: "sh", Args: []string{"-c", "sleep 0.01 & true"}}); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(pid, 0); err != nil {
			t.Fatalf("run %d killed another capsule's child: %v", i, err)
		}
	}
	f.deps.Cancels.CancelFor("", errors.New("done"), "long")
	if err := <-done; hostapi.CodeOf(err) != hostapi.CodeCancelled {
		t.Fatalf("long run: %v", err)
	}
	gone(t, long)
}

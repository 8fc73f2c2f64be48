package shell_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/capsules/approval"
	"github.com/astrid-go/astrid/capsules/shell"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

func TestRegistrationsMatchManifest(t *testing.T) {
	sdktest.CheckRegistrations(t, shell.Manifest, shell.New())
}

// boot runs the shell behind the approval capsule, as astrid does: the
// approval capsule must let the shell's calls through (its manifest says
// asks_approval) and the shell asks for each command itself.
func boot(t *testing.T) (*sdktest.Kernel, *sdktest.Approvals) {
	t.Helper()
	k := sdktest.New(t,
		sdktest.Capsule{Manifest: approval.Manifest, New: approval.New, Config: map[string]string{approval.ApproversKey: sdktest.ApproverID}},
		sdktest.Capsule{Manifest: shell.Manifest, New: shell.New},
	)
	return k, k.Approvals(ipc.DefaultPrincipal)
}

type run struct {
	Command          string `json:"command"`
	WorkingDirectory string `json:"working_directory,omitempty"`
	TimeoutSecs      int    `json:"timeout_secs,omitempty"`
}

// ask starts the command and returns its call and the one question it
// caused, which must be the kernel's (the host approval call), about the
// exact command.
func ask(t *testing.T, k *sdktest.Kernel, qs *sdktest.Approvals, r run) (*sdktest.PendingCall, ipc.ApprovalRequired) {
	t.Helper()
	call := k.StartTool(ipc.DefaultPrincipal, "", "run_shell_command", r)
	q, source := qs.Next()
	if source != ipc.KernelSourceID {
		t.Fatalf("question from %q, want the kernel's host approval call (the approval capsule must not ask for the tool as a whole): %+v", source, q)
	}
	want := r.Command
	if r.WorkingDirectory != "" {
		want += "\n(in " + r.WorkingDirectory + ")"
	}
	if q.Resource != ipc.ApprovalText(want, ipc.MaxApprovalResource) || !strings.Contains(q.Reason, shell.ID) {
		t.Fatalf("question %+v; want the exact command %q from %s", q, want, shell.ID)
	}
	return call, q
}

func noQuestion(t *testing.T, qs *sdktest.Approvals) {
	t.Helper()
	if p := qs.Pending(); len(p) != 0 {
		t.Fatalf("unexpected questions: %+v", p)
	}
}

func exists(k *sdktest.Kernel, name string) bool {
	_, err := os.Stat(filepath.Join(k.Workspace, name))
	return err == nil
}

func TestApprovedOnceRuns(t *testing.T) {
	k, qs := boot(t)
	call, q := ask(t, k, qs, run{Command: "touch ran && echo out; echo err >&2"})
	if q.Action != "touch ran && echo out; echo err >&2" {
		t.Fatalf("action %q; an unknown program's action is the whole command", q.Action)
	}
	k.Answer(ipc.DefaultPrincipal, q.RequestID, ipc.DecisionApprove)
	res := call.Wait()
	if res.IsError || res.Content != "out\n\n--- stderr ---\nerr\n" || !exists(k, "ran") {
		t.Fatalf("result %+v", res)
	}
	noQuestion(t, qs)
	// Approved once is once: the same command asks again.
	call, q = ask(t, k, qs, run{Command: "touch ran && echo out; echo err >&2"})
	k.Answer(ipc.DefaultPrincipal, q.RequestID, ipc.DecisionDeny)
	if res := call.Wait(); !res.IsError {
		t.Fatalf("denied the second time, yet %+v", res)
	}
}

func TestDeniedNeverRuns(t *testing.T) {
	k, qs := boot(t)
	call, q := ask(t, k, qs, run{Command: "touch marker"})
	k.Answer(ipc.DefaultPrincipal, q.RequestID, ipc.DecisionDeny)
	res := call.Wait()
	if !res.IsError || res.Content != "Command 'touch marker' was not approved by user" {
		t.Fatalf("result %+v", res)
	}
	if exists(k, "marker") {
		t.Fatal("a denied command ran")
	}
}

// "Always" covers that exact command (in that directory), not the tool:
// the same command runs again without a question, a different one asks.
func TestAlwaysCoversOneCommandOnly(t *testing.T) {
	k, qs := boot(t)
	const cmd = "echo again >> log"
	call, q := ask(t, k, qs, run{Command: cmd})
	k.Answer(ipc.DefaultPrincipal, q.RequestID, ipc.DecisionApproveAlways)
	if res := call.Wait(); res.IsError {
		t.Fatalf("first %+v", res)
	}
	if res := k.CallTool("run_shell_command", run{Command: cmd}); res.IsError {
		t.Fatalf("second %+v", res)
	}
	noQuestion(t, qs)
	if b, _ := os.ReadFile(filepath.Join(k.Workspace, "log")); string(b) != "again\nagain\n" {
		t.Fatalf("log %q", b)
	}
	for _, other := range []run{
		{Command: "echo again >> log; touch other"},
		{Command: "echo again >> log2"},
	} {
		call, q := ask(t, k, qs, other)
		k.Answer(ipc.DefaultPrincipal, q.RequestID, ipc.DecisionDeny)
		if res := call.Wait(); !res.IsError {
			t.Fatalf("%q ran on another command's allowance: %+v", other.Command, res)
		}
	}
	// The host trims the resource: surrounding blanks, which bash ignores,
	// make no other command.
	if res := k.CallTool("run_shell_command", run{Command: " " + cmd + "\n"}); res.IsError {
		t.Fatalf("padded %+v", res)
	}
	noQuestion(t, qs)
	if err := os.Mkdir(filepath.Join(k.Workspace, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	call, q = ask(t, k, qs, run{Command: cmd, WorkingDirectory: "sub"})
	k.Answer(ipc.DefaultPrincipal, q.RequestID, ipc.DecisionDeny)
	if res := call.Wait(); !res.IsError || exists(k, "sub/log") {
		t.Fatalf("the allowance covered another directory: %+v", res)
	}
}

// Refused before anyone is asked, with a reason, never run.
func TestRefusedWithoutAQuestion(t *testing.T) {
	k, qs := boot(t)
	if err := os.Symlink(t.TempDir(), filepath.Join(k.Workspace, "out")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		r    run
		want string
	}{
		{"empty", run{Command: "  "}, "command is empty"},
		{"deny list", run{Command: "touch marker; rm -rf /"}, "is refused and was not run: it runs rm on the protected path /. No approval can allow it"},
		{"deny list through sudo and sh -c", run{Command: `touch marker && sudo sh -c "rm -rf '/'"`}, "protected path /"},
		{"fork bomb", run{Command: ":(){ :|:& };:"}, "fork bomb"},
		{"NUL byte", run{Command: "touch marker\x00; rm -rf /tmp/x"}, "NUL byte"},
		// As much as one bus message carries (the tool client's request
		// holds it once, JSON-escaped).
		{"1 MiB", run{Command: "touch marker; echo " + strings.Repeat("a", 1<<20-1024)}, "command is 1047571 bytes; at most 1024"},
		{"escapes past what the question shows", run{Command: "touch marker; echo " + strings.Repeat("\x1b", 300)}, "as the approval question shows them; at most 1024"},
		{"working directory outside", run{Command: "touch marker", WorkingDirectory: "/etc"}, "working_directory /etc cannot be used"},
		{"working directory above", run{Command: "touch marker", WorkingDirectory: "../"}, "working_directory ../ cannot be used"},
		{"working directory through a symlink out", run{Command: "touch marker", WorkingDirectory: "out"}, "working_directory out cannot be used"},
		{"working directory NUL", run{Command: "touch marker", WorkingDirectory: "a\x00b"}, "NUL"},
		{"timeout", run{Command: "touch marker", TimeoutSecs: 99999}, "timeout_secs is 99999"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := k.CallTool("run_shell_command", tc.r)
			if !res.IsError || !strings.Contains(res.Content, tc.want) {
				t.Fatalf("result %+v; want an error containing %q", res, tc.want)
			}
			noQuestion(t, qs)
			if exists(k, "marker") {
				t.Fatal("the command ran")
			}
		})
	}
}

// Metacharacters are the shell's to interpret, exactly as approved: the
// command reaches bash as one argument.
func TestMetacharactersReachBashAsApproved(t *testing.T) {
	k, qs := boot(t)
	cmd := `printf '%s|' "a;b" 'c&&d' $((6*7)) "$(echo sub)" ` + "`echo tick`" + ` '$HOME' && echo "x" | tr x y; echo *.none`
	call, q := ask(t, k, qs, run{Command: cmd})
	k.Answer(ipc.DefaultPrincipal, q.RequestID, ipc.DecisionApprove)
	res := call.Wait()
	if res.IsError || res.Content != "a;b|c&&d|42|sub|tick|$HOME|y\n*.none\n" {
		t.Fatalf("result %+v", res)
	}
}

// A non-zero exit is an error that names the code and shows both streams.
func TestNonZeroExit(t *testing.T) {
	k, qs := boot(t)
	call, q := ask(t, k, qs, run{Command: "echo partial; echo broken >&2; exit 3"})
	k.Answer(ipc.DefaultPrincipal, q.RequestID, ipc.DecisionApprove)
	res := call.Wait()
	if !res.IsError || res.Content != "Command failed with exit code 3: broken\n--- stdout ---\npartial\n" {
		t.Fatalf("result %+v", res)
	}
}

// A command in a directory under the workspace runs there.
func TestWorkingDirectory(t *testing.T) {
	k, qs := boot(t)
	if err := os.MkdirAll(filepath.Join(k.Workspace, "a", "b"), 0o700); err != nil {
		t.Fatal(err)
	}
	call, q := ask(t, k, qs, run{Command: "pwd", WorkingDirectory: "a/b"})
	k.Answer(ipc.DefaultPrincipal, q.RequestID, ipc.DecisionApprove)
	if res := call.Wait(); res.IsError || res.Content != filepath.Join(k.Workspace, "a", "b")+"\n" {
		t.Fatalf("result %+v", res)
	}
}

// A command that writes 1 GiB is drained and cut: the result is small,
// shows the start and the end of what the host kept, and says so.
func TestGigabyteWriterIsCapped(t *testing.T) {
	k, qs := boot(t)
	// The default 30 s per call is short for 1 GiB through a pipe on a
	// loaded machine; no time is asserted.
	k.Timeout = 5 * time.Minute
	call, q := ask(t, k, qs, run{Command: "head -c 1073741824 /dev/zero; echo done >&2", TimeoutSecs: 290})
	k.Answer(ipc.DefaultPrincipal, q.RequestID, ipc.DecisionApprove)
	res := call.Wait()
	if res.IsError || len(res.Content) > 100<<10 {
		t.Fatalf("result of %d bytes, is_error %v: %.300s", len(res.Content), res.IsError, res.Content)
	}
	for _, want := range []string{"stdout cut: 1073741824 bytes in all", "the first 32768 and the last 32768 of the first 1048576, which is all the host kept", "--- stderr ---\ndone\n"} {
		if !strings.Contains(res.Content, want) {
			t.Fatalf("result lacks %q: %.200s ... %.300s", want, res.Content, res.Content[len(res.Content)-300:])
		}
	}
}

// A command that ignores SIGINT is stopped at its timeout all the same
// (SIGKILL after the host's grace), and the result says it timed out.
func TestSIGINTIgnoringCommandIsStoppedAtItsTimeout(t *testing.T) {
	k, qs := boot(t)
	call, q := ask(t, k, qs, run{Command: "trap '' INT; sleep 600 & echo $! > pid; echo started; wait; wait", TimeoutSecs: 1})
	k.Answer(ipc.DefaultPrincipal, q.RequestID, ipc.DecisionApprove)
	res := call.Wait()
	if !res.IsError || !strings.Contains(res.Content, "Command timed out after 1 s") || !strings.Contains(res.Content, "SIGINT, then SIGKILL") || !strings.Contains(res.Content, "started") {
		t.Fatalf("result %+v", res)
	}
	gone(t, k, "pid")
}

// gone checks that the process whose pid the command wrote to name no
// longer runs (a zombie awaiting its reaper has stopped running).
func gone(t *testing.T, k *sdktest.Kernel, name string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(k.Workspace, name))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err == nil {
		if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) > 0 && f[0] != "Z" && f[0] != "X" {
			t.Fatalf("process %d still runs: %s", pid, stat)
		}
	}
}

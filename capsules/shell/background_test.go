package shell_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

type spawn struct {
	Command          string `json:"command"`
	WorkingDirectory string `json:"working_directory,omitempty"`
}

type procID struct {
	ID string `json:"id"`
}

// spawnApproved starts command in the background after the person
// approved it once, and returns its id. The question names the command and
// that it is left running.
func spawnApproved(t *testing.T, command string) (*sdktest.Kernel, string, func(string, any) ipc.ToolCallResult) {
	t.Helper()
	k, qs := boot(t)
	call := k.StartTool(ipc.DefaultPrincipal, "", "spawn_background_process", spawn{Command: command})
	q, source := qs.Next()
	if source != ipc.KernelSourceID || !strings.Contains(q.Resource, command) || !strings.Contains(q.Resource, "background") {
		t.Fatalf("question %+v from %q; want the kernel's, about %q left running in the background", q, source, command)
	}
	k.Answer(ipc.DefaultPrincipal, q.RequestID, ipc.DecisionApprove)
	res := call.Wait()
	const started = "Background process started with id: "
	if res.IsError || !strings.HasPrefix(res.Content, started) {
		t.Fatalf("spawn: %+v", res)
	}
	id := strings.TrimSpace(strings.SplitN(strings.TrimPrefix(res.Content, started), "\n", 2)[0])
	callTool := func(name string, args any) ipc.ToolCallResult {
		t.Helper()
		r := k.CallTool(name, args)
		noQuestion(t, qs) // reading and killing ask nobody
		return r
	}
	return k, id, callTool
}

// A background command keeps running across calls: its output is read in
// pieces, each read showing only what is new; kill_process stops it and
// everything it started, with no second question; its id is gone after.
func TestBackgroundProcessIsReadAndKilled(t *testing.T) {
	k, id, call := spawnApproved(t, "echo $$ > pid; echo first; while sleep 0.05; do [ -e go ] && echo second && rm go; done")
	pids := testutil.PidFile(t, 30*time.Second, filepath.Join(k.Workspace, "pid"))
	testutil.WaitForValue(t, time.Minute, "the command to print first", func() (ipc.ToolCallResult, bool) {
		logs := call("read_process_logs", procID{ID: id})
		if logs.IsError || !strings.HasPrefix(logs.Content, "Status: running") {
			t.Fatalf("read: %+v", logs)
		}
		return logs, strings.Contains(logs.Content, "first")
	})
	if err := os.WriteFile(filepath.Join(k.Workspace, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	testutil.WaitForValue(t, time.Minute, "the command to print second", func() (ipc.ToolCallResult, bool) {
		logs := call("read_process_logs", procID{ID: id})
		if strings.Contains(logs.Content, "first") {
			t.Fatalf("a read repeated old output: %+v", logs)
		}
		return logs, strings.Contains(logs.Content, "second")
	})
	res := call("kill_process", procID{ID: id})
	if res.IsError || !strings.HasPrefix(res.Content, "Status: stopped") {
		t.Fatalf("kill: %+v", res)
	}
	testutil.NoProcess(t, pids...)
	if res := call("read_process_logs", procID{ID: id}); !res.IsError || !strings.Contains(res.Content, "no such process") {
		t.Fatalf("read after kill: %+v", res)
	}
}

// Refusals: a guessed or empty id, and a catastrophic command (refused
// before anyone is asked, as in the foreground).
func TestBackgroundRefusals(t *testing.T) {
	k, qs := boot(t)
	for _, tc := range []struct {
		tool string
		args any
		says string
	}{
		{"read_process_logs", procID{ID: "p-0123456789abcdef"}, "no such process"},
		{"kill_process", procID{ID: "p-0123456789abcdef"}, "no such process"},
		{"read_process_logs", procID{}, "id is empty"},
		{"spawn_background_process", spawn{Command: "rm -rf /"}, "No approval can allow it"},
		{"spawn_background_process", spawn{Command: ""}, "command is empty"},
	} {
		res := k.CallTool(tc.tool, tc.args)
		if !res.IsError || !strings.Contains(res.Content, tc.says) {
			t.Errorf("%s %+v: %+v, want an error saying %q", tc.tool, tc.args, res, tc.says)
		}
	}
	noQuestion(t, qs)
}

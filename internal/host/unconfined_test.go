package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/sandbox"
	"github.com/astrid-go/astrid/ipc"
)

// TestUnconfinedIsAskedEveryTime: a process asked to run outside the
// sandbox is a question of its own, marked unconfined, asked again at
// every run even after "always", and denied when the person says no. The
// same command confined cannot read what the unconfined one did.
func TestUnconfinedIsAskedEveryTime(t *testing.T) {
	if err := sandbox.Need(sandbox.ABI()); err != nil {
		t.Skipf("this kernel cannot confine: %v", err)
	}
	f, _ := approvalFixture(t, 0)
	c := f.capsule(t, procCapsule)
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("OUTSIDE"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := listen(t, f, "default")
	run := func(unconfined bool) <-chan hostapi.ProcessResult {
		out := make(chan hostapi.ProcessResult, 1)
		go func() {
			call, _ := c.Begin(context.Background(), "default")
			defer call.End()
			res, err := call.ProcessRun(hostapi.ProcessRequest{Program: "cat", Args: []string{outside}, Unconfined: unconfined})
			if err != nil {
				res.Stderr = []byte("error: " + err.Error())
				res.ExitCode = -2
			}
			out <- res
		}()
		return out
	}
	// Confined: refused by the OS, no question.
	if res := <-run(false); res.ExitCode == 0 || res.Confined == "" {
		t.Fatalf("confined cat of a file outside the grants: %+v", res)
	}
	// Unconfined, approved "always": runs; asked again next time.
	for i, decision := range []string{ipc.DecisionApproveAlways, ipc.DecisionApproveSession} {
		got := run(true)
		q := p.next()
		if !q.Unconfined || !strings.Contains(q.Reason, "OUTSIDE the sandbox") || !strings.Contains(q.Resource, outside) {
			t.Fatalf("run %d: the question does not say what is at stake: %+v", i, q)
		}
		p.answer(testFrontend, "default", q.RequestID, decision)
		if res := <-got; res.ExitCode != 0 || string(res.Stdout) != "OUTSIDE" || res.Confined != "" {
			t.Fatalf("run %d: approved unconfined cat: %+v (%s)", i, res, res.Stderr)
		}
	}
	got := run(true)
	q := p.next()
	p.answer(testFrontend, "default", q.RequestID, ipc.DecisionDeny)
	if res := <-got; res.ExitCode != -2 || !strings.Contains(string(res.Stderr), "did not approve") {
		t.Fatalf("denied unconfined cat: %+v (%s)", res, res.Stderr)
	}
}

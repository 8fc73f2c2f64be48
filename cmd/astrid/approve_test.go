package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/ipc"
)

func TestApproverAnswers(t *testing.T) {
	q := ipc.ApprovalRequired{RequestID: "r1", Action: "write_file", Resource: `{"file_path":"x"}`, Reason: "astrid-capsule-fs changes files", CallID: "c1"}
	ctx := context.Background()

	var out bytes.Buffer
	if got := (&approver{yes: true, prompt: &out}).decide(ctx, q); got != ipc.DecisionApprove || !strings.Contains(out.String(), "approved (--yes): write_file") {
		t.Fatalf("--yes: %s, %q", got, out.String())
	}

	out.Reset()
	a := &approver{prompt: &out}
	for i := 0; i < 2; i++ {
		if a.decide(ctx, q) != ipc.DecisionDeny {
			t.Fatalf("question %d: without a terminal or --yes a question was not denied", i+1)
		}
	}
	if n := strings.Count(out.String(), "pass --yes"); n != 1 {
		t.Fatalf("the hint to pass --yes was given %d times, want once:\n%s", n, out.String())
	}

	for line, want := range map[string]string{
		"y\n": ipc.DecisionApprove, "once\n": ipc.DecisionApprove, "S\n": ipc.DecisionApproveSession,
		"always\n": ipc.DecisionApproveAlways, "\n": ipc.DecisionDeny, "maybe\n": ipc.DecisionDeny, "": ipc.DecisionDeny,
	} {
		out.Reset()
		a := &approver{prompt: &out, tty: strings.NewReader(line)}
		if got := a.decide(ctx, q); got != want {
			t.Errorf("answer %q: %s, want %s", line, got, want)
		}
		if !strings.Contains(out.String(), "astrid-capsule-fs changes files") || !strings.Contains(out.String(), `write_file {"file_path":"x"}`) {
			t.Errorf("the question did not show what is asked: %q", out.String())
		}
	}
}

// A shell command's question is shown once: its action (the program and
// subcommand, or the whole command) is the start of its resource.
func TestApproverShowsACommandOnce(t *testing.T) {
	var out bytes.Buffer
	q := ipc.ApprovalRequired{RequestID: "r1", Action: "git push", Resource: "git push --force origin main", Reason: "Capsule 'astrid-capsule-shell' requests approval"}
	(&approver{yes: true, prompt: &out}).decide(context.Background(), q)
	if got := out.String(); got != "astrid: approved (--yes): git push --force origin main\n" {
		t.Fatalf("shown %q", got)
	}
}

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/ipc"
)

// --yes never approves running a process outside the sandbox; only
// --dangerously-unconfined with it does, and says so.
func TestYesDoesNotCoverUnconfined(t *testing.T) {
	q := ipc.ApprovalRequired{RequestID: "r", Action: "run outside the sandbox", Resource: "/usr/bin/bash -c curl example.com", Reason: "asks", Unconfined: true}
	cases := []struct {
		name           string
		yes, uncfd     bool
		want, stderrIs string
	}{
		{"--yes alone", true, false, ipc.DecisionDeny, "--yes never covers that"},
		{"--dangerously-unconfined alone", false, true, ipc.DecisionDeny, "--yes never covers that"},
		{"both", true, true, ipc.DecisionApprove, "OUTSIDE the sandbox (--dangerously-unconfined)"},
	}
	for _, c := range cases {
		var stderr bytes.Buffer
		a := newApprover(c.yes, &stderr)
		a.unconfined = c.uncfd
		if got := a.decide(context.Background(), q); got != c.want || !strings.Contains(stderr.String(), c.stderrIs) {
			t.Errorf("%s: %s, %q; want %s and %q", c.name, got, stderr.String(), c.want, c.stderrIs)
		}
	}
	// A confined question is still approved by --yes.
	var stderr bytes.Buffer
	if got := newApprover(true, &stderr).decide(context.Background(), ipc.ApprovalRequired{Action: "echo", Resource: "echo hi"}); got != ipc.DecisionApprove {
		t.Fatalf("--yes on an ordinary question: %s", got)
	}
}

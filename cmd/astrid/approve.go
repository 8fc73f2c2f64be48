package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/ipc"
)

// approver answers the approval questions of one command (`astrid -p`,
// `astrid tool call`): --yes approves each call once; with a terminal the
// person is asked there; with neither every question is denied, and the
// command says once how to allow them. It answers elicit questions too
// (elicit.go). Questions are asked one at a time.
type approver struct {
	yes bool
	// unconfined lets --yes approve running a process outside the
	// sandbox too (--dangerously-unconfined); without it such a question
	// is asked on the terminal or denied.
	unconfined bool
	// tty is where a person answers (nil: nobody can).
	tty    io.Reader
	prompt io.Writer
	mu     sync.Mutex
	lines  *bufio.Reader
	told   bool
}

// newApprover makes the command's approver: the controlling terminal is
// used when standard error is one (the prompt's text may well have come
// from a pipe on standard input).
func newApprover(yes bool, stderr io.Writer) *approver {
	a := &approver{yes: yes, prompt: stderr}
	if f, ok := stderr.(*os.File); ok && isTerminal(f) {
		if tty, err := os.Open("/dev/tty"); err == nil {
			a.tty = tty
		}
	}
	return a
}

// dangerouslyUnconfined is the flag that lets --yes approve a process
// outside the sandbox; its name says what it costs.
const dangerouslyUnconfined = "dangerously-unconfined"

// decide is a toolclient.Approver.
func (a *approver) decide(ctx context.Context, q ipc.ApprovalRequired) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	what := q.Action
	switch {
	case q.Resource != "" && strings.HasPrefix(q.Resource, q.Action):
		// A shell command: the action is its program and subcommand
		// (or all of it), so the command alone says everything.
		what = oneLine(q.Resource, 300)
	case q.Resource != "":
		what += " " + oneLine(q.Resource, 300)
	}
	switch {
	case q.Unconfined && a.yes && a.unconfined:
		fmt.Fprintf(a.prompt, "astrid: approved OUTSIDE the sandbox (--dangerously-unconfined): %s\n", what)
		return ipc.DecisionApprove
	case q.Unconfined && a.tty == nil:
		fmt.Fprintf(a.prompt, "astrid: denied running %s outside the sandbox: --yes never covers that; ask on a terminal, or pass --dangerously-unconfined\n", what)
		return ipc.DecisionDeny
	case a.yes && !q.Unconfined:
		fmt.Fprintf(a.prompt, "astrid: approved (--yes): %s\n", what)
		return ipc.DecisionApprove
	case a.tty == nil:
		if !a.told {
			a.told = true
			fmt.Fprintf(a.prompt, "astrid: denied %s: it changes things and nobody can be asked here (no terminal); pass --yes to allow such calls\n", what)
		} else {
			fmt.Fprintf(a.prompt, "astrid: denied %s\n", what)
		}
		return ipc.DecisionDeny
	}
	if ctx.Err() != nil {
		return ipc.DecisionDeny
	}
	if a.lines == nil {
		a.lines = bufio.NewReader(a.tty)
	}
	if q.Unconfined {
		// Asked every time: no standing answer is offered.
		fmt.Fprintf(a.prompt, "\n%s\n  %s\nAllow this once? [y/N]: ", q.Reason, what)
		line, err := a.lines.ReadString('\n')
		if err != nil && line == "" {
			fmt.Fprintln(a.prompt)
			return ipc.DecisionDeny
		}
		if d := agentclient.ParseDecision(line); d != ipc.DecisionDeny {
			return ipc.DecisionApprove
		}
		return ipc.DecisionDeny
	}
	fmt.Fprintf(a.prompt, "\n%s\n  %s\nAllow? %s: ", q.Reason, what, agentclient.DecisionChoices)
	line, err := a.lines.ReadString('\n')
	if err != nil && line == "" {
		fmt.Fprintln(a.prompt)
		return ipc.DecisionDeny
	}
	return agentclient.ParseDecision(line)
}

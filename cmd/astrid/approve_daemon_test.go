package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/testutil"
)

// A capsule copied in by hand while a daemon runs is refused there until
// approved; `capsule approve` then has the daemon load it, and returns once
// it serves, without a restart or a signal from the operator.
func TestApproveReachesTheRunningDaemon(t *testing.T) {
	ws := promptHome(t, plainScript)
	home := os.Getenv("ASTRID_HOME")
	pid := startedPid(t, home, ws)
	t.Cleanup(func() { runProcess(t, home, "stop") })

	writeCapsule(t, filepath.Join(home, "capsules", "notes"), map[string]string{"Capsule.toml": notesManifest, "notes.md": "by hand"})
	stateOf := func() (state, errText string) {
		rep, _ := statusOf(t, home)
		for _, c := range rep.Capsules {
			if c.ID == "notes" || strings.HasSuffix(c.ID, "/notes") {
				return c.State, c.Error
			}
		}
		return "", ""
	}
	testutil.WaitFor(t, daemonPatience, "the watcher to refuse the unapproved capsule", func() bool {
		state, errText := stateOf()
		return state != "" && state != "ready" && strings.Contains(errText, "approve")
	})

	// approve returns once the daemon serves the capsule (issue 29.3):
	// its state is ready at once, with no wait.
	_, errOut, code := runAstrid(t, "", "capsule", "approve", "notes", "--yes")
	if code != 0 || !strings.Contains(errOut, "the running daemon loaded capsule notes") {
		t.Fatalf("approve: exit %d: %s", code, errOut)
	}
	if state, errText := stateOf(); state != "ready" {
		t.Fatalf("right after approve the daemon (pid %d) has notes %q: %s", pid, state, errText)
	}
}

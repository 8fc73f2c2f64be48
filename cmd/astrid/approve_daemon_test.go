package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A capsule copied in by hand while a daemon runs is refused there until
// approved; `capsule approve` then tells the daemon, which loads it
// without a restart or a signal from the operator.
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
	waitFor(t, "the watcher to refuse the unapproved capsule", func() bool {
		state, errText := stateOf()
		return state != "" && state != "ready" && strings.Contains(errText, "approve")
	})

	_, errOut, code := runAstrid(t, "", "capsule", "approve", "notes", "--yes")
	if code != 0 || !strings.Contains(errOut, "the running daemon (pid "+strconv.Itoa(pid)+") loads it now") {
		t.Fatalf("approve: exit %d: %s", code, errOut)
	}
	waitFor(t, "the daemon to load the approved capsule", func() bool {
		state, _ := stateOf()
		return state == "ready"
	})
}

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/internal/testutil"
)

// terminal is a tmux server of the test's own (its socket in a temporary
// directory), running one window.
type terminal struct {
	t      *testing.T
	tmux   string
	socket string
}

func newTerminal(t *testing.T) *terminal {
	t.Helper()
	term := &terminal{t: t, tmux: testutil.NeedTestTool(t, "tmux"), socket: filepath.Join(t.TempDir(), "tmux.sock")}
	t.Cleanup(func() { _ = exec.Command(term.tmux, "-S", term.socket, "kill-server").Run() })
	return term
}

func (term *terminal) run(args ...string) string {
	term.t.Helper()
	out, err := exec.Command(term.tmux, append([]string{"-S", term.socket}, args...)...).CombinedOutput()
	if err != nil {
		term.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// start runs shell command line in a new 160×40 terminal.
func (term *terminal) start(line string) {
	term.t.Helper()
	term.run("new-session", "-d", "-x", "160", "-y", "40", line)
}

// waitFor returns the screen once it shows want.
func (term *terminal) waitFor(want string) string {
	term.t.Helper()
	return testutil.WaitForValue(term.t, daemonPatience, fmt.Sprintf("the terminal to show %q", want), func() (string, bool) {
		screen := term.run("capture-pane", "-p", "-J")
		return screen, strings.Contains(screen, want)
	})
}

// astridLine is the shell command line running this test binary as astrid
// on home (TestMain), then printing its exit status and waiting, so that
// the screen can still be read.
func astridLine(home, ws string, args ...string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return "cd '" + ws + "' && ASTRID_TEST_RUN_MAIN=1 ASTRID_HOME='" + home + "' '" + os.Args[0] + "' " +
		strings.Join(quoted, " ") + "; echo EXIT=$?; sleep 60"
}

// In a terminal, `astrid -p` asks before a mutable call, shows what the call
// would do, and does what the person answers: "n" denies (the model hears
// it), "y" allows this call, "a" allows the tool for good — the next run,
// a new process, is not asked. The same in-process and through a running
// daemon (the question is relayed over its socket and answered here).
func TestPromptAsksInATerminal(t *testing.T) {
	for _, viaDaemon := range []bool{false, true} {
		name := "in-process"
		if viaDaemon {
			name = "through the daemon"
		}
		t.Run(name, func(t *testing.T) { promptAsksInATerminal(t, viaDaemon) })
	}
}

func promptAsksInATerminal(t *testing.T, viaDaemon bool) {
	ws := promptHome(t, writeScript)
	home := os.Getenv("ASTRID_HOME")
	cwd := ws // the file lands in the caller's workspace, daemon or not
	if viaDaemon {
		startedPid(t, home, t.TempDir())
	}
	for _, step := range []struct {
		answer, want string
		written      bool
	}{
		{"n", "✗ write_file", false},
		{"y", "✓ write_file", true},
		{"a", "✓ write_file", true},
	} {
		if err := os.Remove(filepath.Join(ws, "notes.txt")); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		term := newTerminal(t)
		term.start(astridLine(home, cwd, "-p", "write the notes"))
		screen := term.waitFor("Allow? [y] once")
		if !strings.Contains(screen, `write_file {"content":"from the agent","file_path":"notes.txt"}`) || !strings.Contains(screen, "astrid-capsule-fs") {
			t.Fatalf("the question does not show the call and who provides it:\n%s", screen)
		}
		term.run("send-keys", step.answer, "Enter")
		screen = term.waitFor("EXIT=")
		if !strings.Contains(screen, step.want) || !strings.Contains(screen, "EXIT=0") || !strings.Contains(screen, "Done with the file.") {
			t.Fatalf("after answering %q the screen shows:\n%s", step.answer, screen)
		}
		_, err := os.Stat(filepath.Join(ws, "notes.txt"))
		if written := err == nil; written != step.written {
			t.Fatalf("after answering %q notes.txt written = %v", step.answer, written)
		}
	}
	// "always" holds in the next process: no question, the call runs.
	term := newTerminal(t)
	term.start(astridLine(home, cwd, "-p", "write the notes"))
	screen := term.waitFor("EXIT=")
	if strings.Contains(screen, "Allow?") || !strings.Contains(screen, "✓ write_file") || !strings.Contains(screen, "EXIT=0") {
		t.Fatalf("after \"always\" the next run shows:\n%s", screen)
	}
}

// Onboarding through `astrid -p` in a terminal (issue 36.4): an installed
// capsule missing a required [env] value is not a failed load there; the
// person is asked while the capsules load (a secret hidden, a select by
// number, a number out of range asked again, saying why), the turn runs with the capsule loaded,
// and the answers are kept: the next run asks nothing.
func TestPromptAsksForAMissingEnvValueInATerminal(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	src := notesSource(t, "notes", `REGION = { type = "select", enum_values = ["us-east-1", "eu-west-1"], request = "Region?" }`)
	if out, code := runProcess(t, home, "capsule", "install", src, "--yes"); code != 0 {
		t.Fatalf("install --yes: exit %d:\n%s", code, out)
	}

	term := newTerminal(t)
	term.start(astridLine(home, ws, "-p", "hello", "--provider", "replay"))
	term.waitFor("Capsule 'notes' needs [env] TOKEN before it can load")
	term.waitForAny("Token? [hidden as you type; - to decline]:")
	const secret = "sk-onboarded-7"
	term.run("send-keys", secret, "Enter")
	term.waitForAny("Region? [number, - to decline]:")
	term.run("send-keys", "9", "Enter")
	term.waitFor("answer with a number from 1 to 2")
	term.waitForAny("Region? [number, - to decline]:")
	term.run("send-keys", "2", "Enter")
	screen := term.waitFor("EXIT=")
	if !strings.Contains(screen, "EXIT=0") || strings.Contains(screen, "did not load") || strings.Contains(screen, secret) {
		t.Fatalf("the turn after onboarding:\n%s", screen)
	}
	st, err := store.Open(config.Layout(home).State, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	token, tokOK, tokErr := st.Secrets("notes").Get("TOKEN")
	region, regOK, regErr := st.Config("notes").Get("REGION")
	st.Close()
	if string(token) != secret || !tokOK || tokErr != nil || string(region) != "eu-west-1" || !regOK || regErr != nil {
		t.Fatalf("kept: TOKEN %v %v, REGION = %q %v %v", tokOK, tokErr, region, regOK, regErr)
	}

	// Kept: the next run loads the capsule without a question.
	term = newTerminal(t)
	term.start(astridLine(home, ws, "-p", "hello", "--provider", "replay"))
	screen = term.waitFor("EXIT=")
	if !strings.Contains(screen, "EXIT=0") || strings.Contains(screen, "needs [env]") {
		t.Fatalf("the next run:\n%s", screen)
	}
	if out, code := runProcess(t, home, "capsule", "list", "--workspace", ws); code != 0 || !regexp.MustCompile(`(?m)^notes\s+\S+\s+ready`).MatchString(out) {
		t.Errorf("capsule list after onboarding: exit %d:\n%s", code, out)
	}
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/internal/testutil"
)

// In a terminal, install shows the grants and asks; "n" installs nothing.
// "y" installs, then asks for the [env] values: a secret typed there never
// shows on the screen and is stored sealed; a text value goes through
// capsule env set's reading.
func TestCapsuleInstallAsksInATerminal(t *testing.T) {
	home := t.TempDir()
	ws := t.TempDir()
	src := notesSource(t, "notes", `GREETING = { type = "text", request = "Greeting?" }`)

	term := newTerminal(t)
	term.start(astridLine(home, ws, "capsule", "install", src))
	screen := term.waitFor("Install capsule notes with the grants above? [y/N]")
	if !strings.Contains(screen, "status:       loads") || !strings.Contains(screen, "TOKEN (secret)") {
		t.Fatalf("the question comes without the report:\n%s", screen)
	}
	term.run("send-keys", "n", "Enter")
	screen = term.waitFor("EXIT=")
	if !strings.Contains(screen, "not approved; nothing was changed") || !strings.Contains(screen, "EXIT=1") {
		t.Fatalf("after n:\n%s", screen)
	}
	if _, err := os.Stat(filepath.Join(home, "capsules", "notes")); !os.IsNotExist(err) {
		t.Fatalf("installed after n: %v", err)
	}

	term = newTerminal(t)
	term.start(astridLine(home, ws, "capsule", "install", src))
	term.waitFor("[y/N]")
	term.run("send-keys", "y", "Enter")
	const secret = "sk-never-on-screen-42"
	answers := map[string]string{"(not shown as you type):": secret, "Greeting?:": "Howdy"}
	for len(answers) > 0 {
		var prompts []string
		for p := range answers {
			prompts = append(prompts, p)
		}
		prompt := term.waitForAny(prompts...)
		term.run("send-keys", answers[prompt], "Enter")
		delete(answers, prompt)
	}
	screen = term.waitFor("EXIT=")
	if !strings.Contains(screen, "EXIT=0") || !strings.Contains(screen, "capsule notes installed") {
		t.Fatalf("after y:\n%s", screen)
	}
	if strings.Contains(screen, secret) {
		t.Fatalf("the secret showed on the screen:\n%s", screen)
	}
	st, err := store.Open(config.Layout(home).State, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v, ok, err := st.Secrets("notes").Get("TOKEN"); err != nil || !ok || string(v) != secret {
		t.Errorf("TOKEN = %q, %v, %v", v, ok, err)
	}
	if v, ok, err := st.Config("notes").Get("GREETING"); err != nil || !ok || string(v) != "Howdy" {
		t.Errorf("GREETING = %q, %v, %v", v, ok, err)
	}
}

// waitForAny waits until the screen's last non-empty line ends with one
// of prompts, and returns that prompt.
func (term *terminal) waitForAny(prompts ...string) string {
	term.t.Helper()
	var asked string
	testutil.WaitForValue(term.t, daemonPatience, fmt.Sprintf("the terminal to ask any of %q", prompts), func() (string, bool) {
		screen := term.run("capture-pane", "-p", "-J")
		last := strings.TrimRight(screen, " \n")
		for _, p := range prompts {
			if strings.HasSuffix(last, p) {
				asked = p
				return screen, true
			}
		}
		return screen, false
	})
	return asked
}

// Onboarding at install (issue 36.4): a select with one choice fills
// itself, unasked; a value its type refuses (a select's value outside its
// choices) is asked again, saying why, and the next good answer is stored.
// Without a terminal (--yes) the single choice still fills itself.
func TestCapsuleInstallFillsTheOnlyChoiceAndAsksAgain(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	src := notesSource(t, "notes",
		`REGION = { type = "select", enum_values = ["us-east-1", "eu-west-1"], request = "Region?" }`,
		`TIER = { type = "select", enum_values = ["free"], request = "Tier?" }`)

	term := newTerminal(t)
	term.start(astridLine(home, ws, "capsule", "install", src))
	term.waitFor("[y/N]")
	term.run("send-keys", "y", "Enter")
	term.waitForAny("(not shown as you type):")
	term.run("send-keys", "sk-1", "Enter")
	term.waitForAny("Region?:")
	term.waitFor("REGION: one of us-east-1, eu-west-1")
	term.run("send-keys", "mars", "Enter")
	term.waitFor(`REGION: "mars" is not one of us-east-1, eu-west-1; try again`)
	term.waitForAny("Region?:")
	term.run("send-keys", "eu-west-1", "Enter")
	screen := term.waitFor("EXIT=")
	if !strings.Contains(screen, "EXIT=0") || !strings.Contains(screen, `TIER: set to "free", its only choice`) || strings.Contains(screen, "Tier?") {
		t.Fatalf("install:\n%s", screen)
	}
	st, err := store.Open(config.Layout(home).State, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"REGION": "eu-west-1", "TIER": "free"} {
		if v, ok, err := st.Config("notes").Get(key); err != nil || !ok || string(v) != want {
			t.Errorf("%s = %q, %v, %v; want %q", key, v, ok, err, want)
		}
	}
	st.Close()

	// Scripted: no terminal, nothing asked, the single choice filled.
	home2 := t.TempDir()
	out, code := runProcess(t, home2, "capsule", "install", src, "--yes")
	if code != 0 || !strings.Contains(out, `TIER: set to "free", its only choice`) {
		t.Fatalf("install --yes: exit %d:\n%s", code, out)
	}
}

// Issue 37.2 in a terminal: an unsigned archive is put to the person
// before anything else; "n" refuses it with nothing installed, "y"
// installs it (the grants and the [env] value asked next, as for a
// directory).
func TestCapsuleInstallAsksAboutAnUnsignedArchive(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	archive := filepath.Join(t.TempDir(), "notes.capsule")
	if out, code := runProcess(t, home, "capsule", "pack", notesSource(t, "notes"), "-o", archive); code != 0 {
		t.Fatalf("capsule pack: exit %d:\n%s", code, out)
	}
	installed := filepath.Join(home, "capsules", "notes")
	question := archive + " is unsigned. Install it anyway? [y/N]"

	term := newTerminal(t)
	term.start(astridLine(home, ws, "capsule", "install", archive))
	term.waitFor(question)
	term.run("send-keys", "n", "Enter")
	screen := term.waitFor("EXIT=")
	if !strings.Contains(screen, "not installed; nothing was changed") || !strings.Contains(screen, "EXIT=1") || strings.Contains(screen, "with the grants above") {
		t.Fatalf("after n:\n%s", screen)
	}
	if _, err := os.Stat(installed); !os.IsNotExist(err) {
		t.Fatalf("installed after n: %v", err)
	}

	term = newTerminal(t)
	term.start(astridLine(home, ws, "capsule", "install", archive))
	term.waitFor(question)
	term.run("send-keys", "y", "Enter")
	term.waitFor("Install capsule notes with the grants above? [y/N]")
	term.run("send-keys", "y", "Enter")
	term.waitForAny("(not shown as you type):")
	term.run("send-keys", "sk-unsigned", "Enter")
	screen = term.waitFor("EXIT=")
	if !strings.Contains(screen, "EXIT=0") || !strings.Contains(screen, "capsule notes installed") {
		t.Fatalf("after y:\n%s", screen)
	}
	if _, err := os.Stat(filepath.Join(installed, "Capsule.toml")); err != nil {
		t.Fatalf("not installed after y: %v", err)
	}
}

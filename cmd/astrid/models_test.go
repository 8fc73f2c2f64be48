package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/ipc"
)

// noProviderKeys keeps the machine's own provider settings out of a test,
// so the built-in hosted providers (when linked) are not ready and the
// default is the replay provider.
func noProviderKeys(t *testing.T) {
	for _, v := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"} {
		t.Setenv(v, "")
	}
}

// astrid models list, current, set and unset, each run a new process on
// the same home (so a choice persists across restarts), per principal.
func TestModelsCommands(t *testing.T) {
	noProviderKeys(t)
	home := t.TempDir()
	t.Setenv(config.HomeEnv, home)
	ws := t.TempDir()
	run := func(args ...string) (string, string, int) {
		t.Helper()
		return runAstrid(t, "", append(args, "--workspace", ws)...)
	}

	out, errOut, code := run("models", "list")
	if code != 0 || !strings.Contains(out, "* ") || !strings.Contains(out, "replay:replay") || !strings.Contains(out, "128000") ||
		!strings.Contains(errOut, "active: replay:replay (the default") {
		t.Fatalf("models list: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = run("models", "list", "--json")
	var listed ipc.RegistryReply
	if code != 0 || json.Unmarshal([]byte(out), &listed) != nil || len(listed.Providers) == 0 {
		t.Fatalf("models list --json: exit %d\n%s%s", code, out, errOut)
	}
	known := make([]string, len(listed.Providers))
	for i, e := range listed.Providers {
		known[i] = e.ID
	}

	if out, errOut, code = run("models", "current"); code != 0 || out != "replay:replay\n" || !strings.Contains(errOut, "the default") {
		t.Fatalf("models current: exit %d\n%s%s", code, out, errOut)
	}
	// An unknown model is refused, naming its provider's models (or every
	// known one, for a provider not loaded) and astrid models list.
	_, errOut, code = run("models", "set", "replay:nope")
	if code != 1 || !strings.Contains(errOut, `unknown model "replay:nope"; replay offers replay:replay;`) || !strings.Contains(errOut, "astrid models list") {
		t.Fatalf("models set replay:nope: exit %d\n%s", code, errOut)
	}
	_, errOut, code = run("models", "set", "nope:nope")
	if code != 1 || !strings.Contains(errOut, `no provider "nope" is loaded; known: `+strings.Join(known, ", ")) {
		t.Fatalf("models set nope:nope: exit %d\n%s", code, errOut)
	}
	if _, errOut, code = run("models", "set"); code != 2 {
		t.Fatalf("models set without an id: exit %d\n%s", code, errOut)
	}
	if _, errOut, code = run("models", "set", "replay:replay"); code != 0 || !strings.Contains(errOut, "active model for default: replay:replay") {
		t.Fatalf("models set replay:replay: exit %d\n%s", code, errOut)
	}
	// Kept across runs, for this principal only.
	if out, errOut, code = run("models", "current"); code != 0 || out != "replay:replay\n" || !strings.Contains(errOut, "(chosen") {
		t.Fatalf("models current after set: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code = run("models", "current", "--principal", "alice"); code != 0 || !strings.Contains(errOut, "the default") {
		t.Fatalf("alice's models current: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code = run("models", "unset"); code != 0 || !strings.Contains(errOut, "forgotten") || !strings.Contains(errOut, "the default") {
		t.Fatalf("models unset: exit %d\n%s", code, errOut)
	}
	if out, errOut, code = run("models", "current"); code != 0 || !strings.Contains(errOut, "the default") {
		t.Fatalf("models current after unset: exit %d\n%s%s", code, out, errOut)
	}
}

// astrid -p without --provider uses the principal's chosen model over
// the operator's [env] provider, which beats only the registry's default;
// --model alone keeps the chosen provider; --provider overrides it for the
// run.
func TestPromptUsesTheActiveProvider(t *testing.T) {
	noProviderKeys(t)
	home := t.TempDir()
	t.Setenv(config.HomeEnv, home)
	ws := t.TempDir()
	if _, errOut, code := runAstrid(t, "nosuch", "capsule", "env", "set", "astrid-capsule-react", "provider"); code != 0 {
		t.Fatalf("capsule env set: exit %d\n%s", code, errOut)
	}
	prompt := func(args ...string) (string, int) {
		t.Helper()
		out, errOut, code := runAstrid(t, "", append([]string{"-p", "hi", "--yes", "--workspace", ws}, args...)...)
		return out + errOut, code
	}
	if out, code := prompt(); code != 1 || !strings.Contains(out, `no LLM provider "nosuch"`) {
		t.Fatalf("astrid -p with [env] provider nosuch and no choice: exit %d\n%s", code, out)
	}
	if _, errOut, code := runAstrid(t, "", "models", "set", "replay:replay", "--workspace", ws); code != 0 {
		t.Fatalf("models set: exit %d\n%s", code, errOut)
	}
	// The demo script answers any prompt with a read_file of README.md.
	for _, args := range [][]string{{}, {"--model", "anything"}, {"--provider", "replay"}} {
		if out, code := prompt(args...); code != 0 || !strings.Contains(out, "read_file") {
			t.Fatalf("astrid -p %v: exit %d\n%s", args, code, out)
		}
	}
	if out, code := prompt("--provider", "nosuch2"); code != 1 || !strings.Contains(out, `no LLM provider "nosuch2"`) {
		t.Fatalf("astrid -p --provider nosuch2: exit %d\n%s", code, out)
	}
}

// A provider's description and why reach the terminal escaped: no escape
// sequence, no bidi override, one line.
func TestModelsListEscapesProviderText(t *testing.T) {
	var b strings.Builder
	writeModels(&b, ipc.RegistryReply{Providers: []ipc.ModelEntry{
		{ID: "evil:m1", Ready: true, Description: "fine\x1b[2J\x1b[31mred\nsecond line"},
		{ID: "evil:m2", Why: "set the key\u202e\x07"},
	}})
	writeActive(&b, ipc.RegistryReply{ActiveModel: &ipc.ModelEntry{ID: "evil:m2", Why: "\x1b]0;title\x07"}, Note: "x\x1b[1Ay"})
	out := b.String()
	for _, bad := range []string{"\x1b", "\u202e", "\x07"} {
		if strings.Contains(out, bad) {
			t.Fatalf("output holds %q:\n%q", bad, out)
		}
	}
	if !strings.Contains(out, `fine\u001b[2J\u001b[31mred second line`) {
		t.Fatalf("the description is not shown escaped on one line:\n%s", out)
	}
}

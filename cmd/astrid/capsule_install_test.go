package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/caps"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/grants"
	"github.com/astrid-go/astrid/internal/store"
)

// notesSource writes a capsule source directory (no code: a context file
// and an [env] value) and returns it.
func notesSource(t *testing.T, name string, extra ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "src-"+name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	text := "[package]\nname = \"" + name + "\"\nversion = \"0.1.0\"\n" +
		"[[context_file]]\nname = \"notes\"\nfile = \"notes.md\"\n" +
		"[env]\nTOKEN = { type = \"secret\", request = \"Token?\" }\n" + strings.Join(extra, "\n") + "\n"
	for name, body := range map[string]string{"Capsule.toml": text, "notes.md": "remember"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func capsuleState(t *testing.T, ws, id string) (state, listing string) {
	t.Helper()
	out, errOut, _ := runAstrid(t, "", "capsule", "list", "--workspace", ws)
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == id {
			return f[2], out + errOut
		}
	}
	return "", out + errOut
}

// Issue 19.5 and 19.6 through the CLI: install asks (or takes --yes),
// records the approval, and every later run holds the capsule to it; an
// edited manifest fails in `capsule list` with the reason until approved;
// a capsule copied in by hand waits for `capsule approve`.
func TestCapsuleInstallApproveRemove(t *testing.T) {
	home := t.TempDir()
	t.Setenv(config.HomeEnv, home)
	ws := t.TempDir()
	src := notesSource(t, "notes")
	installed := filepath.Join(home, "capsules", "notes")

	_, errOut, code := runAstrid(t, "", "capsule", "install", src)
	if code != 1 || !strings.Contains(errOut, "nobody can confirm it here") || !strings.Contains(errOut, "--yes") {
		t.Fatalf("install without a terminal or --yes: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(installed); !os.IsNotExist(err) {
		t.Fatalf("installed without confirmation: %v", err)
	}

	out, errOut, code := runAstrid(t, "", "capsule", "install", src, "--yes")
	if code != 0 {
		t.Fatalf("install --yes: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"notes 0.1.0  " + src, "status:       loads", "capabilities:"} {
		if !strings.Contains(out, want) {
			t.Errorf("install's report lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "capsule notes installed in "+installed) || !strings.Contains(errOut, "astrid capsule env set notes TOKEN") {
		t.Errorf("install's notes: %s", errOut)
	}
	// Its required secret has no value yet (--yes asks nothing): it does
	// not load, and says which command sets it; once set, it loads.
	if state, listing := capsuleState(t, ws, "notes"); state != "failed" || !strings.Contains(listing, "astrid capsule env set notes TOKEN") {
		t.Fatalf("after install without its TOKEN, notes is %q:\n%s", state, listing)
	}
	if _, errOut, code := runAstrid(t, "s3cret", "capsule", "env", "set", "notes", "TOKEN"); code != 0 {
		t.Fatalf("env set TOKEN: exit %d: %s", code, errOut)
	}
	if state, listing := capsuleState(t, ws, "notes"); state != "ready" {
		t.Fatalf("after install and env set, notes is %q:\n%s", state, listing)
	}

	// Edited on disk to read everything: refused at the next boot, with why.
	manifestPath := filepath.Join(installed, "Capsule.toml")
	text, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	widened := string(text) + "[capabilities]\nfs_read = [\"/\"]\n"
	if err := os.WriteFile(manifestPath, []byte(widened), 0o600); err != nil {
		t.Fatal(err)
	}
	state, listing := capsuleState(t, ws, "notes")
	if state != "failed" || !strings.Contains(listing, `notes: runtime: load notes: capsule notes asks for fs_read = ["/"], which was not approved at install`) {
		t.Fatalf("after the edit, notes is %q:\n%s", state, listing)
	}
	if _, errOut, code := runAstrid(t, "", "capsule", "approve", "notes"); code != 1 || !strings.Contains(errOut, "nobody can confirm") {
		t.Fatalf("approve without --yes: exit %d: %s", code, errOut)
	}
	out, errOut, code = runAstrid(t, "", "capsule", "approve", "notes", "--yes")
	if code != 0 || !strings.Contains(out, `NEW GRANTS:   fs_read = ["/"]`) {
		t.Fatalf("approve --yes: exit %d\n%s%s", code, out, errOut)
	}
	if state, listing := capsuleState(t, ws, "notes"); state != "ready" {
		t.Fatalf("after approve, notes is %q:\n%s", state, listing)
	}

	// Copied in by hand: not loaded until approved.
	byHand := filepath.Join(home, "capsules", "by-hand")
	if err := os.MkdirAll(byHand, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"Capsule.toml": "[package]\nname = \"by-hand\"\nversion = \"0.1.0\"\n[capabilities]\nnet = [\"*\"]\n"} {
		if err := os.WriteFile(filepath.Join(byHand, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if state, listing := capsuleState(t, ws, "by-hand"); state != "failed" || !strings.Contains(listing, "was never approved") || !strings.Contains(listing, "astrid capsule approve by-hand") {
		t.Fatalf("a capsule copied in by hand is %q:\n%s", state, listing)
	}
	if _, errOut, code := runAstrid(t, "", "capsule", "approve", "by-hand", "--yes", "--accept-risk"); code != 0 {
		t.Fatalf("approve by-hand: exit %d: %s", code, errOut)
	}
	if state, listing := capsuleState(t, ws, "by-hand"); state != "ready" {
		t.Fatalf("after approve, by-hand is %q:\n%s", state, listing)
	}

	// Built-ins are not installed over, approved or removed.
	fake := notesSource(t, "astrid-capsule-fs")
	for _, args := range [][]string{
		{"capsule", "install", fake, "--yes"},
		{"capsule", "approve", "astrid-capsule-fs", "--yes"},
		{"capsule", "remove", "astrid-capsule-fs"},
		{"capsule", "remove", "../capsules"},
	} {
		if _, errOut, code := runAstrid(t, "", args...); code != 1 || !(strings.Contains(errOut, "built-in capsule") || strings.Contains(errOut, "may use only")) {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
	}

	// Remove keeps the state unless --purge.
	st, err := store.Open(config.Layout(home).State, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.KV("default", "notes").Set("k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	// "Always" approvals given to its tools, by two principals, go with it
	// even without --purge; another capsule's (a longer id sharing the
	// prefix) stay.
	always := map[string]string{"default": "notes", "alice": "notes", "bob": "notes-extra"}
	book, err := openCaps(st)
	if err != nil {
		t.Fatal(err)
	}
	for principal, capsule := range always {
		if _, err := book.Mint(caps.Request{Kind: caps.KindAlways, Principal: principal, Capsule: capsule, Tool: "add_note"}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	if _, errOut, code := runAstrid(t, "", "capsule", "remove", "notes"); code != 0 || !strings.Contains(errOut, "removed "+installed) ||
		!strings.Contains(errOut, `forgot 2 "always" approval(s)`) {
		t.Fatalf("remove: exit %d: %s", code, errOut)
	}
	st, err = store.Open(config.Layout(home).State, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	book, err = openCaps(st)
	if err != nil {
		t.Fatal(err)
	}
	for principal, capsule := range always {
		_, ok, err := book.Check(principal, capsule, "add_note", "")
		if err != nil || ok != (capsule != "notes") {
			t.Errorf("%s's always-approval of %s: present %v (%v) after removing notes", principal, capsule, ok, err)
		}
	}
	st.Close()
	if state, _ := capsuleState(t, ws, "notes"); state != "" {
		t.Errorf("notes is still listed (%s) after remove", state)
	}
	if _, errOut, code := runAstrid(t, "", "capsule", "remove", "notes", "--purge"); code != 0 || !strings.Contains(errOut, "deleted the KV") {
		t.Fatalf("remove --purge: exit %d: %s", code, errOut)
	}
	st, err = store.Open(config.Layout(home).State, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, ok, _ := st.KV("default", "notes").Get("k"); ok {
		t.Error("KV survived remove --purge")
	}
}

func TestCapsuleInstallRefusesACapsuleThatDoesNotLoad(t *testing.T) {
	home := t.TempDir()
	t.Setenv(config.HomeEnv, home)
	src := notesSource(t, "notes", "[capabilities]", "fs_read = 3")
	out, errOut, code := runAstrid(t, "", "capsule", "install", src, "--yes")
	if code != 1 || !strings.Contains(out, "does not load") || !strings.Contains(errOut, "not installed") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	// file:line names the operator's file, not the staged copy that is
	// gone once install ends.
	if !strings.Contains(out, filepath.Join(src, "Capsule.toml")+":") || strings.Contains(out, ".install-") {
		t.Errorf("the diagnostics do not point at %s:\n%s", filepath.Join(src, "Capsule.toml"), out)
	}
	entries, _ := os.ReadDir(filepath.Join(home, "capsules"))
	for _, e := range entries {
		if e.Name() != ".install.lock" {
			t.Errorf("left in capsules/: %s", e.Name())
		}
	}
}

func TestInitWritesACommentedConfigOnce(t *testing.T) {
	home := filepath.Join(t.TempDir(), "fresh")
	t.Setenv(config.HomeEnv, home)
	if _, errOut, code := runAstrid(t, "", "init"); code != 0 {
		t.Fatalf("init: exit %d: %s", code, errOut)
	}
	path := filepath.Join(home, "config.toml")
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, config.Template()) {
		t.Fatalf("config.toml = %q, %v; want the template", got, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("config.toml mode %v, want 0600", fi.Mode().Perm())
	}
	// The host signing key is created and sealed at init.
	st, err := openStore(home)
	if err != nil {
		t.Fatal(err)
	}
	seed, ok, err := st.Secrets("-host").Get("ED25519_SEED")
	st.Close()
	if err != nil || !ok || len(seed) != 32 {
		t.Fatalf("no host key after init (%v, %d bytes)", err, len(seed))
	}
	if err := os.WriteFile(path, []byte("call_deadline = \"1m\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runAstrid(t, "", "init"); code != 1 || !strings.Contains(errOut, "exists") {
		t.Fatalf("init over a config: exit %d: %s", code, errOut)
	}
	if got, _ := os.ReadFile(path); string(got) != "call_deadline = \"1m\"\n" {
		t.Errorf("init without --force changed the file: %q", got)
	}
	if _, errOut, code := runAstrid(t, "", "init", "--force"); code != 0 {
		t.Fatalf("init --force: exit %d: %s", code, errOut)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, config.Template()) {
		t.Error("init --force did not write the template")
	}
}

// The capsule: writes anywhere, runs any program, reaches any
// host, acts for people and writes into the prompt. check ranks each grant
// with its reason, high risks first; install --yes refuses it (a script
// written for a harmless capsule cannot install this one), and installs it
// only with --accept-risk.
func TestInstallShowsEveryRiskAndABareYesRefusesHighOnes(t *testing.T) {
	home := t.TempDir()
	t.Setenv(config.HomeEnv, home)
	src := notesSource(t, "risky", "[capabilities]", `fs_write = ["/"]`, `host_process = ["*"]`, `net = ["*"]`, "uplink = true", "allow_prompt_injection = true", `fs_read = ["*"]`)
	out, code := runCheck(t, src)
	if code != 0 {
		t.Fatalf("check: exit %d\n%s", code, out)
	}
	lines := strings.Split(out, "\n")
	for i, want := range []string{"uplink = true", "allow_prompt_injection = true", `host_process = ["*"]: may run any host program`, `fs_write = ["/"]: may write and delete any file`, `net = ["*"]: may send data to any host`} {
		if len(lines) <= i+1 || !strings.Contains(lines[i+1], "!! HIGH RISK: "+want) {
			t.Errorf("line %d is not the HIGH RISK line for %q:\n%s", i+1, want, out)
		}
	}
	if !strings.Contains(out, `low    fs_read = ["*"]: may read the workspace`) {
		t.Errorf("the low-risk grant is not ranked:\n%s", out)
	}
	out, errOut, code := runAstrid(t, "", "capsule", "install", src, "--yes")
	if code != 1 || !strings.Contains(errOut, "5 high-risk grants") || !strings.Contains(errOut, "--yes --accept-risk") {
		t.Fatalf("install --yes: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, "capsules", "risky")); !os.IsNotExist(err) {
		t.Fatalf("a bare --yes installed a high-risk capsule: %v", err)
	}
	if _, errOut, code := runAstrid(t, "", "capsule", "install", src, "--yes", "--accept-risk"); code != 0 {
		t.Fatalf("install --yes --accept-risk: exit %d: %s", code, errOut)
	}
	// The grant record says what was accepted.
	st, err := store.Open(filepath.Join(home, "state.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec, ok, err := grants.NewBook(st).Approved("risky")
	st.Close()
	if err != nil || !ok || len(rec.HighRisk) != 5 || !strings.Contains(strings.Join(rec.HighRisk, "\n"), `fs_write = ["/"]: may write and delete any file`) {
		t.Fatalf("the record of the accepted high risks: %+v (%v, %v)", rec.HighRisk, ok, err)
	}
	// A harmless capsule needs only --yes.
	if _, errOut, code := runAstrid(t, "", "capsule", "install", notesSource(t, "harmless"), "--yes"); code != 0 {
		t.Fatalf("install --yes of a capsule without high risks: exit %d: %s", code, errOut)
	}
}

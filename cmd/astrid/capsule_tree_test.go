package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// demoCapsule writes an installed capsule (a context file, so it has an
// engine) with the given [imports]/[exports] lines into home.
func demoCapsule(t *testing.T, home, id string, sections ...string) {
	t.Helper()
	m := "[package]\nname = \"" + id + "\"\nversion = \"0.1.0\"\n[[context_file]]\nname = \"" + id + "\"\nfile = \"notes.md\"\n" + strings.Join(sections, "\n") + "\n"
	writeCapsule(t, filepath.Join(home, "capsules", id), map[string]string{"Capsule.toml": m, "notes.md": "notes of " + id})
}

// capsule tree draws who imports what from whom and marks a capsule that
// would not load; capsule show names one capsule's dependencies,
// dependents, env values set (never their values) and, with a daemon, its
// live state.
func TestCapsuleTreeAndShow(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	demoCapsule(t, home, "store-a", "[exports]\n\"demo:store\" = \"1.2.0\"")
	demoCapsule(t, home, "app", "[imports]\n\"demo:store\" = \"^1\"\n[env]\nTOKEN = { type = \"secret\" }\nMODE = { type = \"select\", enum_values = [\"fast\"] }\nNAME = { type = \"text\" }")
	demoCapsule(t, home, "broken", "[imports]\n\"demo:cache\" = \"^1\"")

	out, code := runProcess(t, home, "capsule", "tree")
	for _, want := range []string{
		"app 0.1.0\n└─ imports demo:store ^1 from store-a\n   └─ store-a 0.1.0  exports demo:store 1.2.0\n",
		"broken 0.1.0  !! does not load: capsule broken: required import demo:cache ^1 is not met: no capsule exports demo:cache\n└─ imports demo:cache ^1: not met (no capsule exports demo:cache)",
		"no imports, no dependents: astrid-capsule-router,",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("capsule tree lacks %q:\n%s", want, out)
		}
	}
	if code != 1 {
		t.Errorf("capsule tree with a capsule that does not load: exit %d", code)
	}

	if out, code := runProcess(t, home, "capsule", "show", "store-a"); code != 0 || !strings.Contains(out, "needed by:    app") || !strings.Contains(out, "live:         no daemon runs") {
		t.Errorf("capsule show store-a: exit %d:\n%s", code, out)
	}
	env := astridProcess(home, "capsule", "env", "set", "app", "TOKEN")
	env.Stdin = strings.NewReader("s3cret-value\n")
	if out, err := env.CombinedOutput(); exitStatus(t, err) != 0 {
		t.Fatalf("env set: %s", out)
	}
	out, code = runProcess(t, home, "capsule", "show", "app")
	for _, want := range []string{"depends on:   demo:store from store-a", "TOKEN: stored (secret)", "MODE: the only choice", "NAME: missing (required)"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("capsule show app: exit %d, lacks %q:\n%s", code, want, out)
		}
	}
	if strings.Contains(out, "s3cret-value") {
		t.Error("capsule show printed a secret")
	}
	// An uplink capsule: its [[uplink]] entries and whom the operator lets
	// it act for.
	demoCapsule(t, home, "bridge", "[capabilities]\nuplink = true\n[[uplink]]\nname = \"team-chat\"\nplatform = \"matrix\"\nprofile = \"chat\"")
	out, _ = runProcess(t, home, "capsule", "show", "bridge")
	if want := `acts for:     (nobody: the operator names principals in config.toml, [uplink] acts_for = ["bridge=<principal>"])`; !strings.Contains(out, want) || !strings.Contains(out, "uplinks:      team-chat (platform matrix, profile chat)") {
		t.Errorf("capsule show bridge, no acts_for: lacks its uplinks or %q:\n%s", want, out)
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("[uplink]\nacts_for = [\"bridge=alice\", \"bridge=bob\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, _ = runProcess(t, home, "capsule", "show", "bridge"); !strings.Contains(out, "acts for:     alice, bob") {
		t.Errorf("capsule show bridge with acts_for:\n%s", out)
	}

	if out, code := runProcess(t, home, "capsule", "show", "nope"); code != 1 || !strings.Contains(out, "no capsule nope; the capsules are: astrid-capsule-router,") {
		t.Errorf("capsule show nope: exit %d:\n%s", code, out)
	}

	// With a daemon: its live view of the capsule.
	startedPid(t, home, ws)
	t.Cleanup(func() { runProcess(t, home, "stop") })
	cmd := astridProcess(home, "capsule", "show", "store-a", "--json")
	b, err := cmd.Output()
	if exitStatus(t, err) != 0 {
		t.Fatalf("capsule show --json: %s", b)
	}
	var show capsuleShow
	if err := json.Unmarshal(b, &show); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if show.Live == nil || show.ID != "store-a" || len(show.Graph.Dependents) != 1 {
		t.Errorf("capsule show --json with a daemon: %+v", show)
	}
}

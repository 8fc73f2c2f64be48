package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/config"
)

// Issue 37's Show for distros: three capsules (two from a registry, one
// signed, and one archive file) locked, applied on a fresh home (all or
// nothing), published to the registry and set up from it by init, then
// bundled and applied offline on another with the registry gone; a
// source whose bytes changed since the lock is refused, nothing installed.
func TestDistroLockApplyBundle(t *testing.T) {
	srv, _ := ociRegistryServer(t)
	host := strings.TrimPrefix(srv.URL, "http://")
	work := t.TempDir()

	// The distro author's home: one key; three capsules.
	t.Setenv(config.HomeEnv, t.TempDir())
	pubKey, _, code := runAstrid(t, "", "key", "generate")
	if code != 0 {
		t.Fatal("key generate failed")
	}
	var archives []string
	for _, name := range []string{"alpha", "beta"} {
		archives = append(archives, packCLI(t, notesSource(t, name), filepath.Join(work, name+".capsule")))
	}
	// The last one asks for a high-risk grant, which --yes alone does not
	// accept: an apply without --accept-risk fails at it.
	archives = append(archives, packCLI(t, notesSource(t, "gamma", "[capabilities]", "allow_prompt_injection = true"), filepath.Join(work, "gamma.capsule")))
	if _, errOut, code := runAstrid(t, "", "capsule", "sign", archives[0]); code != 0 {
		t.Fatalf("sign: %s", errOut)
	}
	for _, i := range []int{0, 1} {
		if _, errOut, code := runAstrid(t, "", "capsule", "publish", archives[i], "oci://"+host+"/d/"+[]string{"alpha", "beta"}[i]+":0.1.0"); code != 0 {
			t.Fatalf("publish: %s", errOut)
		}
	}
	toml := `[distro]
name = "trio"
version = "1.0.0"

[[capsule]]
name = "alpha"
version = "^0.1"
source = "oci://` + host + `/d/alpha:0.1.0"

[[capsule]]
name = "beta"
source = "oci://` + host + `/d/beta:0.1.0"

[[capsule]]
name = "gamma"
version = ">=0.1.0"
source = "gamma.capsule"
`
	distroFile := filepath.Join(work, "Distro.toml")
	if err := os.WriteFile(distroFile, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	// A requirement the archive does not meet stops the lock.
	tooNew := filepath.Join(work, "too-new.toml")
	if err := os.WriteFile(tooNew, []byte(strings.Replace(toml, `"^0.1"`, `"^2"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runAstrid(t, "", "distro", "lock", tooNew, "-o", filepath.Join(work, "x.lock")); code != 1 || !strings.Contains(errOut, "does not satisfy") {
		t.Fatalf("lock against ^2: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runAstrid(t, "", "distro", "lock", distroFile); code != 0 {
		t.Fatalf("distro lock: exit %d: %s", code, errOut)
	}
	lockFile := filepath.Join(work, "Distro.lock")
	lockText, _ := os.ReadFile(lockFile)
	if !strings.Contains(string(lockText), "@sha256:") || !strings.Contains(string(lockText), strings.TrimSpace(pubKey)) || strings.Count(string(lockText), "digest = 'sha256:") != 3 {
		t.Fatalf("Distro.lock lacks pinned sources, digests or the signer:\n%s", lockText)
	}

	installedAll := func(home string) bool {
		for _, name := range []string{"alpha", "beta", "gamma"} {
			if _, err := os.Stat(filepath.Join(home, "capsules", name, "Capsule.toml")); err != nil {
				return false
			}
		}
		return true
	}

	// Applied on a fresh home that trusts the author: all or nothing.
	// Refused at the last capsule, the first two are not installed
	// either; the home is as before.
	home := t.TempDir()
	t.Setenv(config.HomeEnv, home)
	runAstrid(t, "", "trust", "add", "author", strings.TrimSpace(pubKey))
	_, errOut, code := runAstrid(t, "", "distro", "apply", lockFile, "--yes", "--allow-unsigned")
	if code != 1 || !strings.Contains(errOut, "capsule gamma") || !strings.Contains(errOut, "nothing was installed") {
		t.Fatalf("distro apply refused at gamma: exit %d: %s", code, errOut)
	}
	if entries := visibleEntries(filepath.Join(home, "capsules")); len(entries) > 0 {
		t.Fatalf("an apply refused at its last capsule installed %v", entries)
	}
	out, errOut, code := runAstrid(t, "", "distro", "apply", lockFile, "--yes", "--allow-unsigned", "--accept-risk")
	if code != 0 || !installedAll(home) {
		t.Fatalf("distro apply: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"distro trio 1.0.0: 3 capsules", "alpha                    0.1.0      signed by author", "gamma                    0.1.0      unsigned; HIGH RISK: allow_prompt_injection = true"} {
		if !strings.Contains(out, want) {
			t.Errorf("distro apply's summary lacks %q:\n%s", want, out)
		}
	}

	// The tag now serves other bytes: the lock no longer matches.
	changed := packCLI(t, notesSource(t, "beta", "# changed"), filepath.Join(work, "beta2.capsule"))
	if _, errOut, code := runAstrid(t, "", "capsule", "publish", changed, "oci://"+host+"/d/beta:0.1.0"); code != 0 {
		t.Fatalf("republish: %s", errOut)
	}
	staleHome := t.TempDir()
	t.Setenv(config.HomeEnv, staleHome)
	// The lock pins the manifest digest, which still serves the old
	// bytes; a lock naming only the tag gets the new ones: refused.
	tagOnly := filepath.Join(work, "tag-only.lock")
	text := string(lockText)
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "source = 'oci://") && strings.Contains(line, "@sha256:") {
			text = strings.Replace(text, line, line[:strings.Index(line, "@sha256:")]+"'", 1)
		}
	}
	if err := os.WriteFile(tagOnly, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runAstrid(t, "", "distro", "apply", tagOnly, "--yes", "--allow-unsigned")
	if code != 1 || !strings.Contains(errOut, "capsule beta: the lock pins") {
		t.Fatalf("apply of a stale lock: exit %d: %s", code, errOut)
	}
	if entries := visibleEntries(filepath.Join(staleHome, "capsules")); len(entries) > 0 {
		t.Fatalf("a refused apply installed %v", entries)
	}

	// Bundled from the pinned digests (the locked bytes, not the tag's
	// new ones), then applied offline with the registry gone.
	bundle := filepath.Join(work, "trio.distro.tar")
	if _, errOut, code := runAstrid(t, "", "distro", "bundle", lockFile, "-o", bundle); code != 0 {
		t.Fatalf("distro bundle: exit %d: %s", code, errOut)
	}
	// Published to the registry as one artifact, and a new home set up
	// from it by init --distro oci://….
	published := "oci://" + host + "/d/trio:1.0.0"
	if out, errOut, code := runAstrid(t, "", "distro", "publish", lockFile, published); code != 0 || !strings.HasPrefix(out, published+"@sha256:") {
		t.Fatalf("distro publish: exit %d: %s%s", code, out, errOut)
	}
	ociHome := t.TempDir()
	t.Setenv(config.HomeEnv, ociHome)
	if _, errOut, code := runAstrid(t, "", "init", "--distro", published, "--yes", "--allow-unsigned", "--accept-risk"); code != 0 || !installedAll(ociHome) {
		t.Fatalf("init --distro oci://…: exit %d: %s", code, errOut)
	}
	// A capsule's reference is not a distro.
	if _, errOut, code := runAstrid(t, "", "distro", "apply", "oci://"+host+"/d/alpha:0.1.0", "--yes"); code != 1 || !strings.Contains(errOut, "not the kind of artifact") {
		t.Fatalf("distro apply of a capsule reference: exit %d: %s", code, errOut)
	}

	offlineHome := t.TempDir()
	t.Setenv(config.HomeEnv, offlineHome)
	srv.Close() // only the bundle can serve now
	if _, errOut, code := runAstrid(t, "", "distro", "apply", "--offline", "--bundle", bundle, "--yes", "--allow-unsigned", "--accept-risk"); code != 0 || !installedAll(offlineHome) {
		t.Fatalf("offline apply: exit %d: %s", code, errOut)
	}
	// A new home set up from the bundle by init.
	initHome := t.TempDir()
	t.Setenv(config.HomeEnv, initHome)
	if _, errOut, code := runAstrid(t, "", "init", "--distro", bundle, "--yes", "--allow-unsigned", "--accept-risk"); code != 0 || !installedAll(initHome) {
		t.Fatalf("init --distro: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(initHome, "config.toml")); err != nil {
		t.Fatalf("init --distro wrote no config.toml: %v", err)
	}
	if _, errOut, code := runAstrid(t, "", "init", "--distro", distroFile); code != 1 || !strings.Contains(errOut, "lock") {
		t.Fatalf("init --distro Distro.toml: exit %d: %s", code, errOut)
	}
}

// visibleEntries lists dir's entries but hidden ones (the install lock).
func visibleEntries(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}
